#pragma once

// How phalanxctl shows objects: tables for `get`, the long form for `describe`.
//
// Tables are rendered here, from the JSON objects the server sends, rather than taken from the
// server's meta.k8s.io/v1 Table: that Table carries the columns kubectl and Volcano's CRDs print
// (NAME STATUS MINMEMBER RUNNINGS AGE), while phalanxctl promises vcctl's columns for jobs and
// queues (Pending, Succeeded, Failed, Unknown, RetryCount, Inqueue, Completed...), which the
// Table has no cells for. Adding them to the server's Table would change what kubectl prints.
// Rendering from the objects also makes -o wide, -A and watch rows one code path. Events are
// the exception that proves it: their columns are kubectl's, which are the server's Table's, so
// their rows are the server's cells (api::event_table_cells) of the Events received.
//
// Every function is pure: `now` comes from the caller.

#include "api/service.hpp"
#include "scheduler/model.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::api::ctl {

struct table_options {
  bool wide = false;            // -o wide: the extra columns.
  bool with_namespace = false;  // -A on a namespaced kind: a NAMESPACE column first.
  bool with_event = false;      // --output-watch-events: an EVENT column before everything.
  bool show_labels = false;     // --show-labels: a LABELS column last (k=v,... sorted by key).
  scheduler::timestamp now{};   // For AGE.
};

/// The column titles of a kind:
///   jobs:      NAME CREATION PHASE JOBTYPE REPLICAS MIN PENDING RUNNING SUCCEEDED FAILED UNKNOWN
///              RETRYCOUNT [QUEUE AGE]                                    (vcctl job list)
///   queues:    NAME WEIGHT STATE PARENT INQUEUE PENDING RUNNING UNKNOWN COMPLETED
///              [ALLOCATED DESERVED CAPABILITY AGE]                      (vcctl queue list)
///   podgroups: NAME STATUS MINMEMBER RUNNINGS AGE [QUEUE SUCCEEDED FAILED]
///   pods:      NAME READY STATUS RESTARTS AGE [NODE PODGROUP TASK]
///   nodes:     NAME STATUS ROLES AGE [CPU MEMORY GPU PODS TAINTS]   (CPU: allocated/allocatable)
std::vector<std::string> table_header(resource_kind kind, const table_options& options);

/// One object's cells, matching table_header. `event` is the watch event type, used only with
/// options.with_event.
std::vector<std::string> table_row(resource_kind kind, const boost::json::value& object,
                                   const table_options& options, std::string_view event = {});

/// The columns of a table of Events (core/v1 or events.k8s.io/v1), the server's
/// (api/events.hpp): LAST SEEN TYPE REASON OBJECT MESSAGE, and with -o wide LAST SEEN TYPE
/// REASON OBJECT SUBOBJECT SOURCE MESSAGE FIRST SEEN COUNT NAME, as kubectl prints the server's
/// Table. NAMESPACE (-A), EVENT and LABELS as for the kinds.
std::vector<std::string> event_table_header(const table_options& options);

/// One Event's cells, matching event_table_header: the server's Table cells
/// (api::event_table_cells) of the Event's JSON in either version.
std::vector<std::string> event_table_row(const boost::json::value& event,
                                         const table_options& options,
                                         std::string_view type = {});

/// The widths kubectl's tabwriter would give the columns of these lines (header included), at
/// least `min_width` each: kubectl's get tables and custom-columns use a tabwriter whose cells
/// take at least 6 characters with their 3 of padding (get_min_width).
std::vector<std::size_t> column_widths(const std::vector<std::vector<std::string>>& lines,
                                       std::size_t min_width = 0);
inline constexpr std::size_t get_min_width = 3;

/// One line: cells left-aligned to `widths` with three spaces between columns, no trailing
/// blanks, and "\n". Cells wider than their column push the rest of the line right.
std::string format_row(const std::vector<std::string>& cells,
                       const std::vector<std::size_t>& widths);

/// A whole table: header and rows, aligned.
std::string format_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows);

/// "cpu=2, memory=4Gi" from a map of quantities; "<none>" when empty or missing.
std::string resource_list(const boost::json::value* map);

/// What `describe` prints about one object: metadata, the kind's spec and status, conditions,
/// the pending reason, and `events` (an EventList, or nullptr when they could not be read).
/// `related`, or nullptr: for a job, its PodGroup; for a node, its non-terminated pods (a
/// PodList).
std::string describe_object(resource_kind kind, const boost::json::value& object,
                            const boost::json::value* events, const boost::json::value* related,
                            scheduler::timestamp now);

/// The reason a pod, PodGroup or job waits, from its conditions (for a job: its PodGroup's);
/// empty when none is reported.
std::string pending_reason(resource_kind kind, const boost::json::value& object,
                           const boost::json::value* pod_group);

} // namespace phalanx::api::ctl
