#include "api/ctl/manifests.hpp"

#include "api/codec.hpp"
#include "api/ctl/json_util.hpp"
#include "api/kinds.hpp"
#include "scheduler/quantity.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace phalanx::api::ctl {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

// Manifests may be much larger than one request body (the server's limit applies per document,
// and it reports that itself), so the parser's bounds are raised to what a big cluster's files
// hold while still bounding alias expansion.
parse_limits manifest_limits() {
  parse_limits l;
  l.max_bytes = std::size_t{256} << 20;
  l.max_documents = 100000;
  l.max_values = std::size_t{1} << 26;
  l.max_expanded_bytes = std::size_t{512} << 20;
  return l;
}

std::string type_name(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      return "number";
    case json::kind::string:
      return "string";
    case json::kind::array:
      return "list";
    case json::kind::object:
      return "object";
  }
  return "value";
}

std::string served_kinds() {
  std::string out;
  for (const auto& k : all_kinds())
    out += (out.empty() ? "" : ", ") + std::string(k.kind_name) + " (" +
           std::string(k.api_version) + ")";
  return out;
}

struct source_text {
  std::string name;
  std::string text;
};

// Reads the -f arguments; an error names the file.
result<std::vector<source_text>> read_sources(const std::vector<std::string>& files,
                                              std::istream& standard_input) {
  std::vector<source_text> out;
  bool stdin_read = false;
  auto read_file = [&](const std::string& path) -> status {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      return status{errc::invalid_argument, "error: the file \"" + path + "\" cannot be read"};
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad())
      return status{errc::invalid_argument, "error: the file \"" + path + "\" cannot be read"};
    out.push_back({path, ss.str()});
    return status::ok_status();
  };
  for (const auto& f : files) {
    if (f == "-") {
      if (stdin_read)
        return status{errc::invalid_argument, "error: -f - (standard input) may be given once"};
      stdin_read = true;
      std::string text((std::istreambuf_iterator<char>(standard_input)),
                       std::istreambuf_iterator<char>());
      out.push_back({"STDIN", std::move(text)});
      continue;
    }
    std::error_code ec;
    auto st = fs::status(f, ec);
    if (ec || !fs::exists(st))
      return status{errc::invalid_argument,
                    "error: the path \"" + f + "\" does not exist"};
    if (fs::is_directory(st)) {
      std::vector<std::string> entries;
      for (const auto& e : fs::directory_iterator(f, ec)) {
        auto ext = e.path().extension().string();
        if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json"))
          entries.push_back(e.path().string());
      }
      if (ec)
        return status{errc::invalid_argument,
                      "error: the directory \"" + f + "\" cannot be read: " + ec.message()};
      std::sort(entries.begin(), entries.end());
      if (entries.empty())
        return status{errc::invalid_argument, "error: the directory \"" + f +
                                                  "\" holds no .yaml, .yml or .json file"};
      for (const auto& e : entries)
        if (auto s = read_file(e); !s)
          return s;
      continue;
    }
    if (auto s = read_file(f); !s)
      return s;
  }
  return out;
}

// Checks one document and fills in what the request needs; the error is the rule it breaks.
result<manifest_document> check_document(const json::value& v, const std::string& default_ns,
                                         bool namespace_given) {
  manifest_document d;
  if (!v.is_object())
    return status{errc::invalid_argument,
                  "must be an object with apiVersion, kind and metadata, not a " + type_name(v)};
  std::string api_version = string_at(v, {"apiVersion"});
  std::string kind = string_at(v, {"kind"});
  if (api_version.empty())
    return status{errc::invalid_argument, "apiVersion: Required value"};
  if (kind.empty())
    return status{errc::invalid_argument, "kind: Required value"};
  auto k = kind_of(api_version, kind);
  if (!k) {
    std::string hint;
    for (const auto& x : all_kinds())
      if (x.kind_name == kind)
        hint = "; Phalanx serves kind \"" + kind + "\" in version \"" +
               std::string(x.api_version) + "\"";
    if (hint.empty())
      hint = "; Phalanx serves " + served_kinds();
    return status{errc::invalid_argument,
                  "no matches for kind \"" + kind + "\" in version \"" + api_version + "\"" + hint};
  }
  d.kind = *k;
  const json::value* md = find(v, {"metadata"});
  if (md != nullptr && !md->is_object() && !md->is_null())
    return status{errc::invalid_argument, "metadata: must be an object, not a " + type_name(*md)};
  d.name = string_at(v, {"metadata", "name"});
  if (d.name.empty() && string_at(v, {"metadata", "generateName"}).empty())
    return status{errc::invalid_argument, "metadata.name: Required value"};
  d.body = v;
  auto& meta = d.body.as_object()["metadata"];
  if (!meta.is_object())
    meta = json::object{};
  if (info(*k).namespaced) {
    std::string ns = string_at(v, {"metadata", "namespace"});
    if (!ns.empty() && namespace_given && ns != default_ns)
      return status{errc::invalid_argument,
                    "the namespace from the provided object \"" + ns +
                      "\" does not match the namespace \"" + default_ns +
                      "\": pass --namespace=" + ns + " or remove metadata.namespace"};
    d.namespace_name = ns.empty() ? default_ns : ns;
    meta.as_object()["namespace"] = d.namespace_name;
  }
  return d;
}

// ---- Comparison

bool is_empty(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return true;
    case json::kind::bool_:
      return !v.get_bool();
    case json::kind::int64:
      return v.get_int64() == 0;
    case json::kind::uint64:
      return v.get_uint64() == 0;
    case json::kind::double_:
      return v.get_double() == 0;
    case json::kind::string:
      return v.get_string().empty();
    case json::kind::array:
      return v.get_array().empty();
    case json::kind::object:
      return std::all_of(v.get_object().begin(), v.get_object().end(),
                         [](const json::key_value_pair& kv) { return is_empty(kv.value()); });
  }
  return false;
}

std::string show(const json::value* v) {
  if (v == nullptr || v->is_null())
    return "<unset>";
  std::string s = json::serialize(*v);
  if (s.size() > 80)
    s = s.substr(0, 77) + "...";
  return s;
}

// Maps whose values are quantities.
bool is_resource_map(std::string_view key) {
  for (auto k : {"capability", "deserved", "minResources", "requests", "limits", "allocatable",
                 "capacity", "overhead", "resource"})
    if (key == k)
      return true;
  return false;
}

bool same_scalar(const json::value& a, const json::value& b, bool quantities) {
  if (a == b)
    return true;
  bool a_num = a.is_number(), b_num = b.is_number();
  if (a_num && b_num)
    return a.to_number<double>() == b.to_number<double>();
  if (quantities && (a_num || a.is_string()) && (b_num || b.is_string())) {
    auto qa = scheduler::parse_quantity(scalar_text(a), scheduler::quantity_unit::milli);
    auto qb = scheduler::parse_quantity(scalar_text(b), scheduler::quantity_unit::milli);
    return qa && qb && *qa == *qb;
  }
  return false;
}

void compare(const json::value& want, const json::value* have, const std::string& path,
             bool quantities, std::vector<difference>& out) {
  if (want.is_null())
    return;
  if (have == nullptr || have->is_null()) {
    if (!is_empty(want))
      out.push_back({path, show(&want), "<unset>"});
    return;
  }
  if (want.is_object()) {
    if (!have->is_object()) {
      out.push_back({path, show(&want), show(have)});
      return;
    }
    for (const auto& kv : want.get_object()) {
      std::string key(kv.key());
      compare(kv.value(), have->get_object().if_contains(key), path + "." + key,
              quantities || is_resource_map(key), out);
    }
    return;
  }
  if (want.is_array()) {
    if (!have->is_array() || have->get_array().size() != want.get_array().size()) {
      out.push_back({path, show(&want), show(have)});
      return;
    }
    for (std::size_t i = 0; i < want.get_array().size(); ++i)
      compare(want.get_array()[i], &have->get_array()[i], path + "[" + std::to_string(i) + "]",
              quantities, out);
    return;
  }
  if (!same_scalar(want, *have, quantities))
    out.push_back({path, show(&want), show(have)});
}

} // namespace

result<std::vector<manifest_document>> read_manifests(const std::vector<std::string>& files,
                                                      std::istream& standard_input,
                                                      const std::string& default_namespace,
                                                      bool namespace_given) {
  auto sources = read_sources(files, standard_input);
  if (!sources)
    return sources.error();
  std::vector<manifest_document> out;
  std::string errors;
  for (const auto& src : *sources) {
    auto values = parse_manifests(src.text, manifest_limits());
    if (!values) {
      errors += "error: " + src.name + ": " + values.error().message + "\n";
      continue;
    }
    // kubectl's List wrapper: its items are the documents.
    std::vector<json::value> docs;
    for (auto& v : *values) {
      std::string kind = v.is_object() ? string_at(v, {"kind"}) : std::string();
      const auto* items = v.is_object() ? v.get_object().if_contains("items") : nullptr;
      if (kind.size() >= 4 && kind.ends_with("List") && items != nullptr && items->is_array()) {
        for (const auto& item : items->get_array())
          docs.push_back(item);
      } else {
        docs.push_back(std::move(v));
      }
    }
    if (docs.empty()) {
      errors += "error: " + src.name + ": no objects passed to apply (the file is empty)\n";
      continue;
    }
    for (std::size_t i = 0; i < docs.size(); ++i) {
      auto d = check_document(docs[i], default_namespace, namespace_given);
      if (!d) {
        std::string where = src.name + ": document " + std::to_string(i + 1);
        std::string name = docs[i].is_object() ? string_at(docs[i], {"metadata", "name"}) : "";
        if (!name.empty())
          where += " (\"" + name + "\")";
        errors += "error: " + where + ": " + d.error().message() + "\n";
        continue;
      }
      d->source = src.name;
      d->index = i + 1;
      out.push_back(std::move(*d));
    }
  }
  if (!errors.empty()) {
    errors.pop_back();
    return status{errc::invalid_argument, errors};
  }
  return out;
}

std::vector<difference> manifest_differences(resource_kind kind, const json::value& manifest,
                                             const json::value& existing) {
  std::vector<difference> out;
  if (!manifest.is_object())
    return out;
  for (const auto& kv : manifest.get_object()) {
    std::string key(kv.key());
    if (key == "apiVersion" || key == "kind")
      continue;
    if (key == "status" && kind != resource_kind::node)
      continue;  // Status is the server's to set; a node's status is its declared capacity.
    if (key == "metadata") {
      for (auto part : {"labels", "annotations"})
        if (const auto* m = find(kv.value(), {part}))
          compare(*m, find(existing, {"metadata", part}), std::string("metadata.") + part, false,
                  out);
      continue;
    }
    if (key == "status") {
      // A node's capacity is what it declares; the server keeps allocatable (capacity when no
      // allocatable is given) and shows it for both, so allocatable is what can be compared.
      const json::value* want = find(kv.value(), {"allocatable"});
      if (want == nullptr)
        want = find(kv.value(), {"capacity"});
      if (want != nullptr)
        compare(*want, find(existing, {"status", "allocatable"}), "status.allocatable", true, out);
      continue;
    }
    compare(kv.value(), existing.is_object() ? existing.get_object().if_contains(key) : nullptr,
            key, is_resource_map(key), out);
  }
  return out;
}

} // namespace phalanx::api::ctl
