#pragma once

// Volcano's sla plugin (pkg/scheduler/plugins/sla): a PodGroup (or a Volcano Job, whose PodGroup
// takes its annotations) may say how long it is willing to wait, in the annotation
// `sla-waiting-time` as a Go duration ("30m", "1h2m3s"). Once it has waited that long since its
// creation:
// - the enqueue gate admits it even when the queue's capability or the cluster's overcommitted
//   room would hold it back (the plugin permits; a Closed or Closing queue still admits nothing);
// - in its queue, gangs with a deadline go before gangs without one, earlier deadline first,
//   after priority (compare_gangs).
// Volcano ignores a value that does not parse or is not positive, with a warning; Phalanx refuses
// it where it validates what users submit (standalone mode) and ignores it, as Volcano does, in
// what the apiserver sends.
//
// Pure functions; thread-safe.

#include "scheduler/model.hpp"
#include "scheduler/result.hpp"

#include <optional>
#include <string_view>

namespace phalanx::scheduler {

/// The annotation (Volcano's JobWaitingTime).
inline constexpr std::string_view sla_waiting_time_key = "sla-waiting-time";

/// Parses a duration as Go's time.ParseDuration does: an optional sign, then one or more decimal
/// numbers, each with an optional fraction and a unit (ns, us, µs, μs, ms, s, m, h), as in
/// "300ms", "-1.5h" or "2h45m"; "0" alone is zero. errc::invalid_argument naming what is wrong
/// (Go's words: `invalid duration "x"`, `missing unit in duration "1"`, `unknown unit "d" in
/// duration "1d"`), and for a value beyond about 292 years.
result<duration> parse_go_duration(std::string_view text);

/// The waiting time `meta`'s annotation asks for: nullopt without the annotation, else the
/// parsed duration, which must be above zero (errc::invalid_argument otherwise).
result<std::optional<duration>> read_sla_waiting_time(const object_meta& meta);

/// The time by which `group` is to be enqueued: its creation plus its sla_waiting_time, or
/// nullopt when it has none.
std::optional<timestamp> sla_deadline(const pod_group& group) noexcept;

/// True when `group` has a waiting time and has waited at least that long at `now`.
bool sla_due(const pod_group& group, timestamp now) noexcept;

} // namespace phalanx::scheduler
