// openapi_v2_to_protobuf (api/openapi.hpp): the JSON OpenAPI v2 document in the messages of
// api/proto/openapi_v2.proto. Every member of the document goes somewhere, or the encoding
// fails naming it: kubectl would otherwise read a document that lacks what /openapi/v2 in
// JSON says.

#include "api/openapi.hpp"

#include "api/proto/openapi_v2.pb.h"

#include <boost/json.hpp>

#include <string>

namespace phalanx::api {

namespace json = boost::json;
namespace v2 = openapi_v2;

namespace {

// Walks the document; the first member with no place in the encoding is kept in `error`.
class encoder {
 public:
  std::string error;

  void document(const json::object& in, v2::Document& out) {
    for (const auto& [key, value] : in) {
      if (key == "swagger" && value.is_string()) {
        out.set_swagger(std::string(value.get_string()));
      } else if (key == "info" && value.is_object()) {
        for (const auto& [k, v] : value.get_object()) {
          if (k == "title" && v.is_string())
            out.mutable_info()->set_title(std::string(v.get_string()));
          else if (k == "version" && v.is_string())
            out.mutable_info()->set_version(std::string(v.get_string()));
          else
            unplaced("info." + std::string(k));
        }
      } else if (key == "paths" && value.is_object()) {
        for (const auto& [path, item] : value.get_object()) {
          auto* named = out.mutable_paths()->add_path();
          named->set_name(std::string(path));
          path_item(std::string(path), item, *named->mutable_value());
        }
      } else if (key == "definitions" && value.is_object()) {
        for (const auto& [name, s] : value.get_object()) {
          auto* named = out.mutable_definitions()->add_additional_properties();
          named->set_name(std::string(name));
          schema("definitions." + std::string(name), s, *named->mutable_value());
        }
      } else {
        unplaced(key);
      }
    }
  }

 private:
  void unplaced(std::string_view where) {
    if (error.empty())
      error = "the OpenAPI v2 document's " + std::string(where) +
              " has no place in its protobuf encoding";
  }

  // A vendor extension: its value as YAML text, which JSON is.
  static void extension(std::string_view key, const json::value& value,
                        google::protobuf::RepeatedPtrField<v2::NamedAny>& out) {
    auto* named = out.Add();
    named->set_name(std::string(key));
    named->mutable_value()->set_yaml(json::serialize(value));
  }

  static void strings(const json::value& value,
                      google::protobuf::RepeatedPtrField<std::string>& out) {
    for (const auto& v : value.get_array())
      out.Add(std::string(v.get_string()));
  }

  static bool is_strings(const json::value& value) {
    if (!value.is_array())
      return false;
    for (const auto& v : value.get_array())
      if (!v.is_string())
        return false;
    return true;
  }

  void path_item(const std::string& where, const json::value& in, v2::PathItem& out) {
    if (!in.is_object())
      return unplaced(where);
    for (const auto& [key, value] : in.get_object()) {
      std::string at = where + "." + std::string(key);
      if (key == "get")
        operation(at, value, *out.mutable_get());
      else if (key == "put")
        operation(at, value, *out.mutable_put());
      else if (key == "post")
        operation(at, value, *out.mutable_post());
      else if (key == "delete")
        operation(at, value, *out.mutable_delete_());
      else if (key == "patch")
        operation(at, value, *out.mutable_patch());
      else if (key == "parameters" && value.is_array())
        for (const auto& p : value.get_array())
          parameter(at, p, *out.add_parameters());
      else
        unplaced(at);
    }
  }

  void operation(const std::string& where, const json::value& in, v2::Operation& out) {
    if (!in.is_object())
      return unplaced(where);
    for (const auto& [key, value] : in.get_object()) {
      std::string at = where + "." + std::string(key);
      if (key == "description" && value.is_string()) {
        out.set_description(std::string(value.get_string()));
      } else if (key == "operationId" && value.is_string()) {
        out.set_operation_id(std::string(value.get_string()));
      } else if (key == "produces" && is_strings(value)) {
        strings(value, *out.mutable_produces());
      } else if (key == "consumes" && is_strings(value)) {
        strings(value, *out.mutable_consumes());
      } else if (key == "parameters" && value.is_array()) {
        for (const auto& p : value.get_array())
          parameter(at, p, *out.add_parameters());
      } else if (key == "responses" && value.is_object()) {
        for (const auto& [code, r] : value.get_object())
          response(at + "." + std::string(code), code, r, *out.mutable_responses());
      } else if (key.starts_with("x-")) {
        extension(key, value, *out.mutable_vendor_extension());
      } else {
        unplaced(at);
      }
    }
  }

  void parameter(const std::string& where, const json::value& in, v2::ParametersItem& out) {
    const auto* p = in.if_object();
    const auto* location = p ? p->if_contains("in") : nullptr;
    if (location == nullptr || !location->is_string())
      return unplaced(where + ".in");
    const std::string_view in_where = location->get_string();
    std::string at = where + "." + std::string(in_where);
    auto* parameter = out.mutable_parameter();
    if (in_where == "body") {
      auto& body = *parameter->mutable_body_parameter();
      for (const auto& [key, value] : *p) {
        if (key == "in" && value.is_string()) {
          body.set_in(std::string(value.get_string()));
        } else if (key == "name" && value.is_string()) {
          body.set_name(std::string(value.get_string()));
        } else if (key == "description" && value.is_string()) {
          body.set_description(std::string(value.get_string()));
        } else if (key == "required" && value.is_bool()) {
          body.set_required(value.get_bool());
        } else if (key == "schema") {
          schema(at + ".schema", value, *body.mutable_schema());
        } else {
          unplaced(at + "." + std::string(key));
        }
      }
      return;
    }
    // A query or path parameter: the same members, in fields of different numbers.
    auto fill = [&](auto& sub) {
      for (const auto& [key, value] : *p) {
        if (key == "required" && value.is_bool()) {
          sub.set_required(value.get_bool());
          continue;
        }
        if (!value.is_string())
          return unplaced(at + "." + std::string(key));
        std::string text(value.get_string());
        if (key == "in")
          sub.set_in(text);
        else if (key == "name")
          sub.set_name(text);
        else if (key == "description")
          sub.set_description(text);
        else if (key == "type")
          sub.set_type(text);
        else
          return unplaced(at + "." + std::string(key));
      }
    };
    if (in_where == "query")
      fill(*parameter->mutable_non_body_parameter()->mutable_query_parameter_sub_schema());
    else if (in_where == "path")
      fill(*parameter->mutable_non_body_parameter()->mutable_path_parameter_sub_schema());
    else
      unplaced(at);
  }

  void response(const std::string& where, std::string_view code, const json::value& in,
                v2::Responses& out) {
    if (!in.is_object())
      return unplaced(where);
    auto* named = out.add_response_code();
    named->set_name(std::string(code));
    auto& r = *named->mutable_value()->mutable_response();
    for (const auto& [key, value] : in.get_object()) {
      if (key == "description" && value.is_string())
        r.set_description(std::string(value.get_string()));
      else if (key == "schema")
        schema(where + ".schema", value, *r.mutable_schema()->mutable_schema());
      else
        unplaced(where + "." + std::string(key));
    }
  }

  void schema(const std::string& where, const json::value& in, v2::Schema& out) {
    if (!in.is_object())
      return unplaced(where);
    for (const auto& [key, value] : in.get_object()) {
      std::string at = where + "." + std::string(key);
      if (key == "$ref" && value.is_string()) {
        out.set_ref(std::string(value.get_string()));
      } else if (key == "format" && value.is_string()) {
        out.set_format(std::string(value.get_string()));
      } else if (key == "description" && value.is_string()) {
        out.set_description(std::string(value.get_string()));
      } else if (key == "type" && value.is_string()) {
        out.mutable_type()->add_value(std::string(value.get_string()));
      } else if (key == "required" && is_strings(value)) {
        strings(value, *out.mutable_required());
      } else if (key == "items") {
        schema(at, value, *out.mutable_items()->add_schema());
      } else if (key == "additionalProperties" && value.is_bool()) {
        out.mutable_additional_properties()->set_boolean(value.get_bool());
      } else if (key == "additionalProperties") {
        schema(at, value, *out.mutable_additional_properties()->mutable_schema());
      } else if (key == "allOf" && value.is_array()) {
        for (const auto& s : value.get_array())
          schema(at, s, *out.add_all_of());
      } else if (key == "properties" && value.is_object()) {
        auto* properties = out.mutable_properties();
        for (const auto& [name, s] : value.get_object()) {
          auto* named = properties->add_additional_properties();
          named->set_name(std::string(name));
          schema(at + "." + std::string(name), s, *named->mutable_value());
        }
      } else if (key.starts_with("x-")) {
        extension(key, value, *out.mutable_vendor_extension());
      } else {
        unplaced(at);
      }
    }
  }
};

} // namespace

outcome<std::string> openapi_v2_to_protobuf(const json::value& doc) {
  if (!doc.is_object())
    return api_error::from(status{errc::internal, "the OpenAPI v2 document is not an object"});
  encoder e;
  v2::Document out;
  e.document(doc.get_object(), out);
  if (!e.error.empty())
    return api_error::from(status{errc::internal, e.error});
  std::string bytes;
  if (!out.SerializeToString(&bytes))
    return api_error::from(
        status{errc::internal, "the OpenAPI v2 document does not serialize as protobuf"});
  return bytes;
}

} // namespace phalanx::api
