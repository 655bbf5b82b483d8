// Fuzzes the small grammars of the wire format: quantities (both units), durations, RFC 3339
// times and label selectors. Invariants: each value formats to text that parses back to it.

#include "api/codec.hpp"
#include "api/label_selector.hpp"

#include "scheduler/quantity.hpp"

#include <cstdint>

using namespace phalanx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto unit : {scheduler::quantity_unit::whole, scheduler::quantity_unit::milli}) {
    auto q = scheduler::parse_quantity(text, unit);
    if (q.ok()) {
      auto again = scheduler::parse_quantity(scheduler::format_quantity(*q, unit), unit);
      if (!again.ok() || *again != *q)
        __builtin_trap();
    }
  }
  for (auto name : {"cpu", "memory", "nvidia.com/gpu"})
    (void)scheduler::parse_resource_amount(name, text);
  if (auto d = scheduler::parse_duration_ns(text); d.ok()) {
    auto again = scheduler::parse_duration_ns(scheduler::format_duration_ns(*d));
    if (!again.ok() || *again != *d)
      __builtin_trap();
  }
  if (auto t = api::parse_time(text)) {
    auto formatted = api::format_time(*t);
    if (!formatted.empty() && !api::parse_time(formatted))
      __builtin_trap();
  }
  if (auto s = api::parse_label_selector(text); s.ok()) {
    auto again = api::parse_label_selector(api::to_string(*s));
    if (!again.ok() || api::to_string(*again) != api::to_string(*s))
      __builtin_trap();
  }
  return 0;
}
