#pragma once

// Indented JSON text for people: phalanxctl's `-o json` (as kubectl prints it) and the load
// tester's reports. Keys keep their order.

#include <boost/json/value.hpp>

#include <string>

namespace phalanx::api {

struct json_layout {
  /// Spaces per nesting level.
  int indent = 4;
  /// Arrays of scalars (and of small arrays of at most four items) stay on one line: plot points
  /// and histogram buckets read better that way.
  bool inline_scalar_arrays = false;
};

/// `v` as indented JSON, one member or item per line, ending with a newline.
std::string indented_json(const boost::json::value& v, const json_layout& layout = {});

} // namespace phalanx::api
