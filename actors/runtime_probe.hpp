#pragma once

// For the tests of actors/: a runtime's registry, to send it what one of the runtime's own actors
// would at a moment the test chooses (a message overtaken by another, a duplicate), and to read
// its snapshot with the actors' handles. Deterministic mode (runtime_config::deterministic)
// only: the calls drive the test coordinator. runtime.hpp stays free of CAF; this header is not.

#include "actors/registry.hpp"
#include "actors/runtime.hpp"

namespace phalanx::actors {

struct runtime_probe {
  static registry_actor registry(runtime& rt);
  /// The registry's snapshot (every pod and group, the gangs' and queues' actors).
  static registry_snapshot snapshot(runtime& rt);
};

} // namespace phalanx::actors
