// Fuzzes JSON parsing, decoding as every kind, and encoding back. Invariants: nothing crashes;
// an object that decodes (and validates) encodes to JSON that decodes and validates again.

#include "api/codec.hpp"
#include "api/kinds.hpp"
#include "api/table.hpp"

#include <boost/json.hpp>

#include <cstdint>
#include <cstdlib>

using namespace phalanx::api;

namespace {

void check_round_trip(const object& o) {
  boost::json::value encoded = encode_object(o);
  auto back = decode_object(encoded);
  if (!back.ok())
    __builtin_trap();  // What we write, we must read: a codec bug.
  (void)to_json_text(encoded);
  (void)to_yaml(encoded);
  table_options t;
  (void)encode_table(kind_of(o), {o}, 1, t);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto v = parse_json(text);
  if (!v.ok())
    return 0;
  (void)canonical_json(*v);
  decode_options user;
  user.read_status = false;
  user.default_namespace = "default";
  if (auto o = decode_object(*v, user); o.ok())
    check_round_trip(*o);
  if (auto o = decode_object(*v); o.ok())
    check_round_trip(*o);
  // The same body as every kind: reaches every mapper from any object.
  if (v->is_object()) {
    for (const auto& k : all_kinds()) {
      boost::json::value copy = *v;
      copy.as_object()["apiVersion"] = k.api_version;
      copy.as_object()["kind"] = k.kind_name;
      if (auto o = decode_object(copy, user); o.ok())
        check_round_trip(*o);
      decode_options lenient;
      lenient.validate = false;
      (void)decode_object(copy, lenient);
    }
  }
  (void)decode_list(*v, resource_kind::pod);
  (void)decode_watch_event(*v, resource_kind::job);
  (void)decode_status(*v, 500);
  return 0;
}
