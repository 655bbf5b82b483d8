#include "api/table.hpp"

#include "api/codec.hpp"
#include "api/json_mapper.hpp"
#include "api/kinds.hpp"
#include "api/wire.hpp"

#include <boost/json.hpp>

#include <array>
#include <iterator>

namespace phalanx::api {

namespace json = boost::json;

namespace {

constexpr std::string_view name_description =
  "Name must be unique within a namespace. Is required when creating resources, although some "
  "resources may allow a client to request the generation of an appropriate name automatically.";
constexpr std::string_view age_description =
  "CreationTimestamp is a timestamp representing the server time when this object was created.";

constexpr std::array<table_column, 9> pod_columns = {{
  {"Name", "string", "name", name_description, 0},
  {"Ready", "string", "", "The number of containers that are ready, of all containers.", 0},
  {"Status", "string", "", "The pod's phase.", 0},
  {"Restarts", "string", "", "The number of times the containers have been restarted.", 0},
  {"Age", "string", "", age_description, 0},
  {"IP", "string", "", "The IP address allocated to the pod.", 1},
  {"Node", "string", "", "The node the pod is bound to.", 1},
  {"Nominated Node", "string", "", "The node the pod is nominated to by preemption.", 1},
  {"Readiness Gates", "string", "", "The pod's readiness gates.", 1},
}};

constexpr std::array<table_column, 10> node_columns = {{
  {"Name", "string", "name", name_description, 0},
  {"Status", "string", "", "The status of the node: Ready, and SchedulingDisabled when cordoned.",
   0},
  {"Roles", "string", "", "The roles of the node, from its node-role.kubernetes.io/ labels.", 0},
  {"Age", "string", "", age_description, 0},
  {"Version", "string", "", "The kubelet version the node reports.", 0},
  {"Internal-IP", "string", "", "The node's internal IP address.", 1},
  {"External-IP", "string", "", "The node's external IP address.", 1},
  {"OS-Image", "string", "", "The OS image the node reports.", 1},
  {"Kernel-Version", "string", "", "The kernel version the node reports.", 1},
  {"Container-Runtime", "string", "", "The container runtime the node reports.", 1},
}};

constexpr std::array<table_column, 6> pod_group_columns = {{
  {"Name", "string", "name", name_description, 0},
  {"STATUS", "string", "", "The PodGroup's phase (status.phase).", 0},
  {"minMember", "integer", "", "The minimum number of pods to start together (spec.minMember).",
   0},
  {"RUNNINGS", "integer", "", "The number of running pods (status.running).", 0},
  {"AGE", "string", "", age_description, 0},
  {"QUEUE", "string", "", "The queue of the PodGroup (spec.queue).", 1},
}};

constexpr std::array<table_column, 4> queue_columns = {{
  {"Name", "string", "name", name_description, 0},
  {"AGE", "string", "", age_description, 0},
  {"WEIGHT", "integer", "", "The queue's weight in fair share (spec.weight).", 1},
  {"STATE", "string", "", "Open, Closed or Closing (status.state).", 1},
}};

constexpr std::array<table_column, 6> job_columns = {{
  {"Name", "string", "name", name_description, 0},
  {"STATUS", "string", "", "The job's phase (status.state.phase).", 0},
  {"minAvailable", "integer", "", "The minimum number of pods to run (status.minAvailable).", 0},
  {"RUNNINGS", "integer", "", "The number of running pods (status.running).", 0},
  {"AGE", "string", "", age_description, 0},
  {"QUEUE", "string", "", "The queue of the job (spec.queue).", 1},
}};

// kubectl's columns for PriorityClasses.
constexpr std::array<table_column, 5> priority_class_columns = {{
  {"Name", "string", "name", name_description, 0},
  {"Value", "integer", "", "The priority of the objects naming the class (value).", 0},
  {"Global-Default", "boolean", "", "Objects naming no class take this one (globalDefault).", 0},
  {"Age", "string", "", age_description, 0},
  {"PreemptionPolicy", "string", "", "PreemptLowerPriority or Never (preemptionPolicy).", 0},
}};

std::string age(scheduler::timestamp created, scheduler::timestamp now) {
  if (created == scheduler::timestamp{})
    return "<unknown>";
  return human_duration(now - created);
}

std::size_t container_count(const scheduler::pod& p) {
  if (!p.spec_json)
    return 1;
  json::error_code ec;
  auto v = json::parse(p.spec_json.view(), ec);
  if (ec || !v.is_object())
    return 1;
  const auto* c = v.get_object().if_contains("containers");
  if (c == nullptr || !c->is_array() || c->get_array().empty())
    return 1;
  return c->get_array().size();
}

std::string node_roles(const scheduler::node& n) {
  constexpr std::string_view prefix = "node-role.kubernetes.io/";
  std::string roles;
  for (const auto& [k, v] : n.meta.labels.entries()) {
    std::string_view role;
    if (k.rfind(prefix, 0) == 0)
      role = std::string_view(k).substr(prefix.size());
    else if (k == "kubernetes.io/role")
      role = v;
    if (role.empty())
      continue;
    if (!roles.empty())
      roles += ',';
    roles += role;
  }
  return roles.empty() ? "<none>" : roles;
}

json::object row_metadata(const object& o) {
  v1::PartialObjectMetadata m;
  m.set_kind("PartialObjectMetadata");
  m.set_api_version("meta.k8s.io/v1");
  wire::write_meta(meta_of(o), *m.mutable_metadata());
  return message_to_json(m);
}

} // namespace

std::span<const table_column> table_columns(resource_kind kind) noexcept {
  switch (kind) {
    case resource_kind::pod:
      return pod_columns;
    case resource_kind::node:
      return node_columns;
    case resource_kind::pod_group:
      return pod_group_columns;
    case resource_kind::queue:
      return queue_columns;
    case resource_kind::job:
      return job_columns;
    case resource_kind::priority_class:
      return priority_class_columns;
  }
  return {};
}

std::vector<json::value> table_cells(const object& o, scheduler::timestamp now) {
  std::vector<json::value> cells;
  std::visit(
    [&](const auto& x) {
      using T = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<T, pod_object>) {
        const auto& p = x.pod;
        std::size_t n = container_count(p);
        std::size_t ready = p.phase == scheduler::pod_phase::running ? n : 0;
        cells.emplace_back(std::to_string(ready) + "/" + std::to_string(n));
        // kubectl's printer: a pod being deleted shows Terminating whatever its phase, a
        // finished one its containers' end (Completed, Error; the simulated pods' phase says
        // it), any other its phase.
        cells.emplace_back(x.termination                           ? std::string("Terminating")
                           : p.phase == scheduler::pod_phase::succeeded ? std::string("Completed")
                           : p.phase == scheduler::pod_phase::failed    ? std::string("Error")
                                                         : std::string(scheduler::to_string(p.phase)));
        cells.emplace_back(std::to_string(p.restart_count));
        cells.emplace_back(age(p.meta.creation_time, now));
        cells.emplace_back("<none>");
        cells.emplace_back(p.node_name.empty() ? std::string("<none>") : p.node_name.str());
        cells.emplace_back("<none>");
        cells.emplace_back("<none>");
      } else if constexpr (std::is_same_v<T, node_object>) {
        const auto& n = x.node;
        cells.emplace_back(n.unschedulable ? "Ready,SchedulingDisabled" : "Ready");
        cells.emplace_back(node_roles(n));
        cells.emplace_back(age(n.meta.creation_time, now));
        cells.emplace_back("<none>");
        for (int i = 0; i < 5; ++i)
          cells.emplace_back("<none>");
      } else if constexpr (std::is_same_v<T, pod_group_object>) {
        cells.emplace_back(scheduler::to_string(x.status.phase));
        cells.emplace_back(x.group.min_member);
        cells.emplace_back(x.status.running);
        cells.emplace_back(age(x.group.meta.creation_time, now));
        cells.emplace_back(x.group.queue);
      } else if constexpr (std::is_same_v<T, queue_object>) {
        cells.emplace_back(age(x.queue.meta.creation_time, now));
        cells.emplace_back(x.queue.weight);
        cells.emplace_back(scheduler::to_string(x.queue.state));
      } else if constexpr (std::is_same_v<T, priority_class_object>) {
        const auto& c = x.priority_class;
        cells.emplace_back(c.value);
        cells.emplace_back(c.global_default);
        cells.emplace_back(age(c.meta.creation_time, now));
        cells.emplace_back(scheduler::to_string(c.preemption));
      } else {
        cells.emplace_back(scheduler::to_string(x.status.phase));
        cells.emplace_back(x.status.min_available);
        cells.emplace_back(x.status.running);
        cells.emplace_back(age(x.job.meta.creation_time, now));
        cells.emplace_back(x.job.queue);
      }
    },
    o);
  cells.insert(cells.begin(), json::value(json::string(meta_of(o).name.view())));
  return cells;
}

std::string_view to_string(include_object i) noexcept {
  switch (i) {
    case include_object::none:
      return "None";
    case include_object::metadata:
      return "Metadata";
    case include_object::object:
      return "Object";
  }
  return "Metadata";
}

std::optional<include_object> include_object_from_string(std::string_view text) noexcept {
  for (int i = 0; i <= static_cast<int>(include_object_last); ++i) {
    auto v = static_cast<include_object>(i);
    if (to_string(v) == text)
      return v;
  }
  return std::nullopt;
}

json::value make_table(std::span<const table_column> columns, std::vector<table_row> rows,
                       uint64_t resource_version, bool column_definitions) {
  json::object out;
  out["kind"] = "Table";
  out["apiVersion"] = "meta.k8s.io/v1";
  out["metadata"] = json::object{{"resourceVersion", std::to_string(resource_version)}};
  if (column_definitions) {
    json::array cols;
    for (const auto& c : columns) {
      json::object col;
      col["name"] = c.name;
      col["type"] = c.type;
      col["format"] = c.format;
      col["description"] = c.description;
      col["priority"] = c.priority;
      cols.push_back(std::move(col));
    }
    out["columnDefinitions"] = std::move(cols);
  }
  json::array out_rows;
  out_rows.reserve(rows.size());
  for (auto& r : rows) {
    json::object row;
    row["cells"] = json::array(std::make_move_iterator(r.cells.begin()),
                               std::make_move_iterator(r.cells.end()));
    if (!r.object.is_null())
      row["object"] = std::move(r.object);
    out_rows.push_back(std::move(row));
  }
  out["rows"] = std::move(out_rows);
  return out;
}

json::value encode_table(resource_kind kind, const std::vector<object>& items,
                         uint64_t resource_version, const table_options& options) {
  std::vector<table_row> rows;
  rows.reserve(items.size());
  for (const auto& o : items) {
    table_row row{table_cells(o, options.now), nullptr};
    switch (options.include) {
      case include_object::none:
        break;
      case include_object::metadata:
        row.object = row_metadata(o);
        break;
      case include_object::object:
        row.object = encode_object(o);
        break;
    }
    rows.push_back(std::move(row));
  }
  return make_table(table_columns(kind), std::move(rows), resource_version,
                    options.column_definitions);
}

} // namespace phalanx::api
