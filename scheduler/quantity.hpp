#pragma once

// Kubernetes resource quantities ("500m", "2Gi", "1.5", "1e3", "2E"), parsed exactly.
//
// The grammar is Kubernetes' (k8s.io/apimachinery/pkg/api/resource):
//   quantity  ::= sign? digits ('.' digits?)? suffix? | sign? '.' digits suffix?
//   suffix    ::= binarySI | decimalSI | decimalExponent
//   binarySI  ::= Ki | Mi | Gi | Ti | Pi | Ei
//   decimalSI ::= n | u | m | "" | k | M | G | T | P | E
//   decimalExponent ::= (e | E) sign? digits
// Parsing never uses floating point and never loops over an exponent, so absurd inputs such as
// "2E6024865272343" are rejected at once.

#include "scheduler/result.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace phalanx::scheduler {

/// The integer base a quantity is converted to.
enum class quantity_unit {
  whole,  // Quantity.Value(): bytes, counts. "1.5k" -> 1500; "0.5" -> 1 (rounded up).
  milli,  // Quantity.MilliValue(): millicores. "0.5" -> 500; "1.5m" -> 2 (rounded up).
};
std::string_view to_string(quantity_unit unit) noexcept;

/// The longest quantity text accepted. Kubernetes sets no limit, but no amount that fits in int64
/// needs more, and a bound keeps hostile inputs (megabytes of digits) cheap to reject.
inline constexpr std::size_t max_quantity_length = 64;

/// Parses `text` into an exact integer count of `unit`. A fractional remainder below the unit
/// rounds away from zero, as Kubernetes does. Errors (errc::invalid_argument) say which rule
/// broke: empty, longer than max_quantity_length, not a quantity, unknown suffix, or out of the
/// int64 range. Runs in time linear in the length of `text` whatever the exponent.
result<int64_t> parse_quantity(std::string_view text, quantity_unit unit);

/// The canonical text of an amount, which parses back to exactly `amount`. whole: an integer
/// with the largest exact binary suffix (2147483648 -> "2Gi") or the largest exact decimal
/// suffix (3000000 -> "3M", 1500000 -> "1500k"), whichever text is shorter, binary on a tie
/// (10^12 -> "1T", not "976562500Ki"; 1024000 -> "1024k"); plain digits when neither applies
/// (1500 -> "1500", 1001 -> "1001"). milli: whole cores when divisible by 1000 (2000 -> "2"),
/// else "<n>m" ("500m"). INT64_MIN is "-8Ei" (whole) and "-9223372036854775808m" (milli).
std::string format_quantity(int64_t amount, quantity_unit unit);

/// The unit a resource is stored in: milli for "cpu", whole for everything else.
quantity_unit unit_of(std::string_view resource_name) noexcept;

/// Parses the amount of a resource request or capacity: the unit follows the resource name, and a
/// negative amount is an error ("must be greater than or equal to 0").
result<int64_t> parse_resource_amount(std::string_view resource_name, std::string_view text);

/// format_quantity in the unit of `resource_name`.
std::string format_resource_amount(std::string_view resource_name, int64_t amount);

/// Parses a duration such as "30s", "1m30s", "2h", "500ms", "1.5s" (Go's time.ParseDuration
/// grammar: units ns us µs ms s m h, "0" without a unit) into nanoseconds. Rejects negatives and
/// overflow. Fractions are exact and truncated to the nanosecond; fraction digits past the 18th
/// are read but ignored (together they are worth less than 10^-5 ns, even in hours).
result<int64_t> parse_duration_ns(std::string_view text);

/// "1m30s", "500ms", "0s": Go's time.Duration.String() form.
std::string format_duration_ns(int64_t nanoseconds);

} // namespace phalanx::scheduler
