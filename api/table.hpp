#pragma once

// meta.k8s.io/v1 Tables: what kubectl prints for `get` when it asks
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`. Columns per kind (priority-1 columns
// appear with -o wide):
//   pods:      NAME READY STATUS RESTARTS AGE [IP NODE NOMINATED NODE READINESS GATES]
//   nodes:     NAME STATUS ROLES AGE VERSION [INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION
//              CONTAINER-RUNTIME]
//   podgroups: NAME STATUS MINMEMBER RUNNINGS AGE [QUEUE]        (Volcano's printer columns)
//   queues:    NAME AGE [WEIGHT STATE]
//   jobs:      NAME STATUS MINAVAILABLE RUNNINGS AGE [QUEUE]     (Volcano's printer columns)
// kubectl adds NAMESPACE itself (with -A) from each row's object metadata.

#include "api/service.hpp"

#include <boost/json/value.hpp>

#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace phalanx::api {

struct table_column {
  std::string_view name;
  std::string_view type;    // "string", "integer", "date"
  std::string_view format;  // "name" for the NAME column, else ""
  std::string_view description;
  int priority;             // 0: always; 1: -o wide
};

/// The columns of a kind.
std::span<const table_column> table_columns(resource_kind kind) noexcept;

/// The cells of one object's row, one per column of its kind: strings and integers.
std::vector<boost::json::value> table_cells(const object& o, scheduler::timestamp now);

/// What each row carries as its `object` (Kubernetes' includeObject parameter).
enum class include_object { none, metadata, object };
std::string_view to_string(include_object i) noexcept;  // "None", "Metadata", "Object"
std::optional<include_object> include_object_from_string(std::string_view text) noexcept;
inline constexpr include_object include_object_last = include_object::object;

struct table_options {
  scheduler::timestamp now{};                     // For the AGE column.
  include_object include = include_object::metadata;
  bool column_definitions = true;                 // False for watch events after the first.
};

/// One row of a Table: its cells, and the object it carries (null: none, includeObject=None).
struct table_row {
  std::vector<boost::json::value> cells;
  boost::json::value object;
};

/// A meta.k8s.io/v1 Table of rows already made, at `resource_version`, with the definitions of
/// `columns` when `column_definitions`.
boost::json::value make_table(std::span<const table_column> columns, std::vector<table_row> rows,
                              uint64_t resource_version, bool column_definitions);

/// A Table of `items` of `kind` at collection version `resource_version`.
boost::json::value encode_table(resource_kind kind, const std::vector<object>& items,
                                uint64_t resource_version, const table_options& options);

} // namespace phalanx::api
