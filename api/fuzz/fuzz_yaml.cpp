// Fuzzes the YAML reader and writer. Invariants: nothing crashes or runs away (aliases and depth
// are bounded); what to_yaml writes reads back to the same JSON value.

#include "api/codec.hpp"

#include <boost/json.hpp>

#include <cstdint>

using namespace phalanx::api;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto docs = parse_yaml(text);
  if (!docs.ok())
    return 0;
  decode_options user;
  user.read_status = false;
  user.default_namespace = "default";
  for (const auto& doc : *docs) {
    std::string yaml = to_yaml(doc);
    auto back = parse_yaml(yaml);
    if (!back.ok() || back->size() != 1 || back->front() != doc)
      __builtin_trap();  // to_yaml wrote something that reads back differently.
    (void)decode_object(doc, user);
  }
  (void)decode_manifests(text, user);
  return 0;
}
