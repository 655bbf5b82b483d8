#pragma once

// Kubernetes label selectors (the labelSelector query parameter and `kubectl -l`):
//   a=b  a==b  a!=b  a in (x,y)  a notin (x)  a  !a   joined by "," (AND).
// Keys are qualified names ([prefix/]name), values label values (scheduler/validation.hpp).
// `a!=b` and `a notin (...)` match objects without the label, as in Kubernetes.

#include "api/service.hpp"

#include "scheduler/result.hpp"

#include <string>
#include <string_view>

namespace phalanx::api {

/// Parses a selector; the empty string selects everything. Errors (errc::invalid_argument) say
/// what was expected where: `unable to parse label selector "a in (x": expected "," or ")"
/// after value "x" at position 8`.
result<label_selector> parse_label_selector(std::string_view text);

/// The selector's text, which parse_label_selector reads back to the same selector.
std::string to_string(const label_selector& selector);

std::string_view to_string(label_requirement::op op) noexcept;  // "=", "!=", "in", "notin", "", "!"
inline constexpr label_requirement::op label_op_last = label_requirement::op::does_not_exist;

} // namespace phalanx::api
