#include "api/wire.hpp"

#include "api/codec.hpp"

#include "scheduler/job_plugins.hpp"
#include "scheduler/job_volumes.hpp"
#include "scheduler/quantity.hpp"
#include "scheduler/sla.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>

namespace phalanx::api::wire {

namespace json = boost::json;
using scheduler::field_error;
using scheduler::field_error_type;

namespace {

std::string child(std::string_view path, std::string_view name) {
  std::string out(path);
  out += '.';
  out += name;
  return out;
}

std::string index(std::string_view path, std::size_t i) {
  std::string out(path);
  out += '[';
  out += std::to_string(i);
  out += ']';
  return out;
}

std::string key(std::string_view path, std::string_view k) {
  std::string out(path);
  out += '[';
  out += k;
  out += ']';
  return out;
}

// Map entries sorted by key: protobuf maps iterate in no particular order, and errors and
// results must not depend on it.
template <class V>
std::vector<std::pair<std::string, V>> sorted(const google::protobuf::Map<std::string, V>& m) {
  std::vector<std::pair<std::string, V>> out(m.begin(), m.end());
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

scheduler::label_set to_label_set(const google::protobuf::Map<std::string, std::string>& m) {
  scheduler::label_set::builder out;
  out.reserve(m.size());
  for (const auto& [k, v] : m)
    out.add(k, v);
  return out.build();
}

// The rule of a quantity error without the "quantity "<text>" " prefix the parser puts first
// (the field error shows the value already).
std::string quantity_rule(const std::string& message) {
  constexpr std::string_view prefix = "quantity \"";
  if (message.rfind(prefix, 0) != 0)
    return message;
  std::size_t i = prefix.size();
  while (i < message.size() && message[i] != '"') {
    if (message[i] == '\\')
      ++i;
    ++i;
  }
  if (i >= message.size())
    return message;
  ++i;  // The closing quote.
  if (message.compare(i, 5, "... (") == 0) {
    auto close = message.find(')', i);
    if (close == std::string::npos)
      return message;
    i = close + 1;
  }
  if (i < message.size() && message[i] == ' ')
    ++i;
  return i < message.size() ? message.substr(i) : message;
}

// Parses one resource amount; reports under `path`.
std::optional<int64_t> read_amount(std::string_view name, const std::string& text,
                                   const std::string& path, reader& r) {
  // The model's rules on names and amounts, checked here too so the error names the field the
  // user wrote (a container's requests) rather than the pod's summed requests.
  if (auto broken = scheduler::is_resource_name(name); !broken.empty()) {
    r.errors.push_back(scheduler::invalid_error(path, name, broken.front()));
    return std::nullopt;
  }
  auto amount = scheduler::parse_quantity(text, scheduler::unit_of(name));
  if (!amount) {
    r.errors.push_back(
      scheduler::invalid_error(path, text, quantity_rule(amount.error().message())));
    return std::nullopt;
  }
  if (*amount < 0) {
    r.errors.push_back(
      scheduler::invalid_error(path, text, "must be greater than or equal to 0"));
    return std::nullopt;
  }
  if (*amount > scheduler::max_resource_amount) {
    r.errors.push_back(scheduler::invalid_error(
      path, text,
      "must be less than or equal to " +
        scheduler::format_resource_amount(name, scheduler::max_resource_amount) +
        " (2^53, the largest amount accepted)"));
    return std::nullopt;
  }
  return *amount;
}

scheduler::resources read_resources(const google::protobuf::Map<std::string, std::string>& m,
                                    std::string_view path, reader& r) {
  scheduler::resources out;
  for (const auto& [name, text] : sorted(m)) {
    std::string p = key(path, name);
    auto amount = read_amount(name, text, p, r);
    if (!amount)
      continue;
    if (!out.set(name, *amount))
      r.errors.push_back(scheduler::invalid_error(
        p, name, "too many distinct resource names (at most " +
                   std::to_string(scheduler::resource_name::max_names) + ")"));
  }
  return out;
}

scheduler::resource_limit read_limit(const google::protobuf::Map<std::string, std::string>& m,
                                     std::string_view path, reader& r) {
  scheduler::resource_limit out;
  for (const auto& [name, text] : sorted(m)) {
    std::string p = key(path, name);
    auto amount = read_amount(name, text, p, r);
    if (!amount)
      continue;
    if (!out.set(name, *amount))
      r.errors.push_back(scheduler::invalid_error(
        p, name, "too many distinct resource names (at most " +
                   std::to_string(scheduler::resource_name::max_names) + ")"));
  }
  return out;
}

void write_resources(const scheduler::resources& in,
                     google::protobuf::Map<std::string, std::string>& out,
                     bool skip_pods = false) {
  in.for_each([&](std::string_view name, int64_t amount) {
    if (skip_pods && name == scheduler::pods_resource)
      return;
    out[std::string(name)] = scheduler::format_resource_amount(name, amount);
  });
}

void write_limit(const scheduler::resource_limit& in,
                 google::protobuf::Map<std::string, std::string>& out) {
  in.for_each([&](std::string_view name, int64_t cap) {
    out[std::string(name)] = scheduler::format_resource_amount(name, cap);
  });
}

scheduler::timestamp read_time(const std::string& text, const std::string& path, reader& r) {
  if (text.empty())
    return {};
  if (auto t = parse_time(text))
    return *t;
  r.errors.push_back(scheduler::invalid_error(
    path, text, "must be an RFC 3339 time such as 2024-05-01T12:00:00Z"));
  return {};
}

template <class Enum, std::size_t N>
std::optional<Enum> read_enum(const std::string& text, const std::string& path, reader& r,
                              std::optional<Enum> (*parse)(std::string_view) noexcept,
                              const std::array<std::string_view, N>& supported) {
  if (auto v = parse(text))
    return v;
  r.errors.push_back(scheduler::not_supported_error(path, text, supported));
  return std::nullopt;
}

constexpr std::array<std::string_view, 6> selector_operators = {"In",     "NotIn", "Exists",
                                                                "DoesNotExist", "Gt", "Lt"};
constexpr std::array<std::string_view, 3> taint_effects = {"NoSchedule", "PreferNoSchedule",
                                                           "NoExecute"};
constexpr std::array<std::string_view, 2> toleration_operators = {"Exists", "Equal"};
constexpr std::array<std::string_view, 5> pod_phases = {"Pending", "Running", "Succeeded",
                                                        "Failed", "Unknown"};
constexpr std::array<std::string_view, 5> pod_group_phases = {"Pending", "Running", "Unknown",
                                                              "Inqueue", "Completed"};
constexpr std::array<std::string_view, 3> queue_states = {"Open", "Closed", "Closing"};
constexpr std::array<std::string_view, 2> preemption_policies = {"PreemptLowerPriority", "Never"};
constexpr std::array<std::string_view, 10> job_phases = {
  "Pending",    "Aborting",  "Aborted",     "Running",    "Restarting",
  "Completing", "Completed", "Terminating", "Terminated", "Failed"};

std::vector<scheduler::node_selector_requirement> read_requirements(
  const google::protobuf::RepeatedPtrField<v1::NodeSelectorRequirement>& in,
  std::string_view path, reader& r) {
  std::vector<scheduler::node_selector_requirement> out;
  for (int i = 0; i < in.size(); ++i) {
    const auto& req = in[i];
    std::string p = index(path, std::size_t(i));
    scheduler::node_selector_requirement q;
    q.key = req.key();
    if (req.operator_().empty()) {
      r.errors.push_back(scheduler::required_error(child(p, "operator"), ""));
      continue;
    }
    auto op = read_enum(req.operator_(), child(p, "operator"), r,
                        &scheduler::selector_operator_from_string, selector_operators);
    if (!op)
      continue;
    q.op = *op;
    q.values.assign(req.values().begin(), req.values().end());
    out.push_back(std::move(q));
  }
  return out;
}

// One selector of a pod affinity term (its labelSelector or its namespaceSelector) or of a
// topology spread constraint. The operator's spelling is checked here; which operators a label
// selector allows, and the rules on keys and values, are scheduler::validate_placement's.
scheduler::label_selector read_label_selector(const v1::LabelSelector& in, std::string_view path,
                                              reader& r) {
  scheduler::label_selector out;
  out.match_labels = to_label_set(in.match_labels());
  for (int i = 0; i < in.match_expressions_size(); ++i) {
    const auto& req = in.match_expressions(i);
    std::string p = index(child(path, "matchExpressions"), std::size_t(i));
    auto op = scheduler::selector_operator_from_string(req.operator_());
    if (!op) {
      // The apiserver's words for any operator it does not know, an empty one included.
      r.errors.push_back(scheduler::invalid_error(child(p, "operator"), req.operator_(),
                                                  "not a valid selector operator"));
      continue;
    }
    out.match_expressions.push_back(
      {req.key(), *op, std::vector<std::string>(req.values().begin(), req.values().end())});
  }
  return out;
}

scheduler::pod_affinity_term read_pod_affinity_term(const v1::PodAffinityTerm& in,
                                                    std::string_view path, reader& r) {
  scheduler::pod_affinity_term out;
  if (in.has_label_selector())
    out.selector = read_label_selector(in.label_selector(), child(path, "labelSelector"), r);
  out.namespaces.assign(in.namespaces().begin(), in.namespaces().end());
  if (in.has_namespace_selector())
    out.namespace_selector =
      read_label_selector(in.namespace_selector(), child(path, "namespaceSelector"), r);
  out.topology_key = in.topology_key();
  // matchLabelKeys and mismatchLabelKeys stand for requirements on the pod's own labels, which
  // the apiserver (Kubernetes 1.31 and later) writes into labelSelector when it creates the pod.
  // What a server sent has them there already, so the keys are ignored; what a user submits
  // here would need that merge, which Phalanx does not do, so they are refused rather than
  // silently widening the selector.
  if (!r.read_status) {
    constexpr std::string_view unsupported =
      "not supported by Phalanx: write the requirement into labelSelector instead";
    if (in.match_label_keys_size() > 0)
      r.errors.push_back(
        scheduler::forbidden_error(child(path, "matchLabelKeys"), std::string(unsupported)));
    if (in.mismatch_label_keys_size() > 0)
      r.errors.push_back(
        scheduler::forbidden_error(child(path, "mismatchLabelKeys"), std::string(unsupported)));
  }
  return out;
}

// podAffinity or podAntiAffinity, under `path` ("spec.affinity.podAffinity").
void read_pod_affinity(const v1::PodAffinity& in, std::string_view path, reader& r,
                       std::vector<scheduler::pod_affinity_term>& required,
                       std::vector<scheduler::weighted_pod_affinity_term>& preferred) {
  std::string required_path = child(path, "requiredDuringSchedulingIgnoredDuringExecution");
  for (int i = 0; i < in.required_during_scheduling_ignored_during_execution_size(); ++i)
    required.push_back(
      read_pod_affinity_term(in.required_during_scheduling_ignored_during_execution(i),
                             index(required_path, std::size_t(i)), r));
  std::string preferred_path = child(path, "preferredDuringSchedulingIgnoredDuringExecution");
  for (int i = 0; i < in.preferred_during_scheduling_ignored_during_execution_size(); ++i) {
    const auto& w = in.preferred_during_scheduling_ignored_during_execution(i);
    // An absent weight is 0, as in Kubernetes, and validation refuses it.
    preferred.push_back(
      {w.weight(), read_pod_affinity_term(
                     w.pod_affinity_term(),
                     child(index(preferred_path, std::size_t(i)), "podAffinityTerm"), r)});
  }
}

bool has_pod_affinity_terms(const v1::PodAffinity& a) {
  return a.required_during_scheduling_ignored_during_execution_size() > 0 ||
         a.preferred_during_scheduling_ignored_during_execution_size() > 0;
}

// Kubernetes lists them sorted in its Unsupported value errors.
constexpr std::array<std::string_view, 3> port_protocols = {"SCTP", "TCP", "UDP"};
constexpr int32_t max_port = 65535;

std::string port_range_rule() {
  return "must be between 1 and " + std::to_string(max_port) + ", inclusive";
}

// Where a (protocol, hostIP, hostPort) may not repeat: in the whole list for containers, which
// run together; within each container for init containers, which run one after another.
enum class port_scope { whole_list, each_container };

// The ports of one list of containers, defaulted and validated as the apiserver does for a pod:
// an empty protocol is TCP; with hostNetwork a hostPort left 0 is the containerPort, and one set
// must equal it. Returns the ports with a hostPort, once each, in order.
std::vector<scheduler::host_port> read_container_ports(
  const google::protobuf::RepeatedPtrField<v1::Container>& containers, bool host_network,
  std::string_view path, port_scope unique_within, reader& r) {
  std::vector<scheduler::host_port> out;
  std::vector<scheduler::host_port> taken;
  for (int c = 0; c < containers.size(); ++c) {
    if (unique_within == port_scope::each_container)
      taken.clear();
    const auto& ports = containers[c].ports();
    for (int i = 0; i < ports.size(); ++i) {
      const auto& port = ports[i];
      std::string p = index(child(index(path, std::size_t(c)), "ports"), std::size_t(i));
      bool valid = true;
      const int32_t container_port = port.container_port();
      if (container_port == 0) {
        r.errors.push_back(scheduler::required_error(child(p, "containerPort"), ""));
        valid = false;
      } else if (container_port < 0 || container_port > max_port) {
        r.errors.push_back(
          scheduler::invalid_error(child(p, "containerPort"), container_port, port_range_rule()));
        valid = false;
      }
      int32_t host = port.host_port();
      if (host_network && host == 0)
        host = container_port;
      if (host != 0 && (host < 0 || host > max_port)) {
        r.errors.push_back(scheduler::invalid_error(child(p, "hostPort"), host, port_range_rule()));
        valid = false;
      } else if (host_network && host != container_port) {
        r.errors.push_back(scheduler::invalid_error(
          child(p, "hostPort"), host, "must match `containerPort` when `hostNetwork` is true"));
        valid = false;
      }
      std::string protocol = port.protocol().empty() ? "TCP" : port.protocol();
      if (std::find(port_protocols.begin(), port_protocols.end(), protocol) ==
          port_protocols.end()) {
        r.errors.push_back(
          scheduler::not_supported_error(child(p, "protocol"), protocol, port_protocols));
        valid = false;
      }
      if (!valid || host == 0)
        continue;
      scheduler::host_port hp{std::move(protocol), port.host_ip(), host};
      if (std::find(taken.begin(), taken.end(), hp) != taken.end()) {
        // The apiserver names the port as "<protocol>/<hostIP>/<hostPort>".
        r.errors.push_back(scheduler::duplicate_error(
          child(p, "hostPort"), hp.protocol + "/" + hp.host_ip + "/" + std::to_string(hp.port)));
        continue;
      }
      taken.push_back(hp);
      out.push_back(std::move(hp));
    }
  }
  return out;
}

// The host ports a pod takes on its node. Only its containers' count, as in kube-scheduler's
// NodePorts plugin: an init container has ended before the containers start, and its ports are
// only validated.
std::vector<scheduler::host_port> read_host_ports(const v1::PodSpec& spec,
                                                  std::string_view spec_path, reader& r) {
  (void)read_container_ports(spec.init_containers(), spec.host_network(),
                             child(spec_path, "initContainers"), port_scope::each_container, r);
  return read_container_ports(spec.containers(), spec.host_network(),
                              child(spec_path, "containers"), port_scope::whole_list, r);
}

// Kubernetes lists them sorted in its Unsupported value errors.
constexpr std::array<std::string_view, 2> unsatisfiable_actions = {"DoNotSchedule",
                                                                   "ScheduleAnyway"};
constexpr std::array<std::string_view, 2> node_inclusion_policies = {"Honor", "Ignore"};

// nodeAffinityPolicy or nodeTaintsPolicy as "honor?". Absent is `absent_means_honor`, as
// Kubernetes reads nil; the apiserver refuses any other text, an empty one included.
bool read_node_inclusion_policy(bool present, const std::string& text, bool absent_means_honor,
                                const std::string& path, reader& r) {
  if (!present)
    return absent_means_honor;
  if (text == "Honor")
    return true;
  if (text == "Ignore")
    return false;
  r.errors.push_back(scheduler::not_supported_error(path, text, node_inclusion_policies));
  return absent_means_honor;
}

// Where a pod spec comes from, for its topology spread selectors: the apiserver (Kubernetes 1.34
// and later, gate MatchLabelKeysInPodTopologySpreadSelectorMerge) writes `key In (value)` into
// labelSelector.matchExpressions for each matchLabelKeys key the pod has a label for, when it
// creates a pod; never in a pod template, and never in what a user submits.
enum class spread_selectors { as_written, maybe_merged_by_apiserver };

// Takes out of the constraint's selector the requirements the apiserver merged in for its
// matchLabelKeys, so that the model holds the selector as the user wrote it whichever apiserver
// sent the pod, and the scheduler does the merge (with the pod's labels) for every pod alike.
// A user cannot have written such a requirement: the apiserver refuses a key found both in
// matchLabelKeys and in labelSelector. The value is not compared with the pod's label: labels
// may change after creation, and the merged requirement still names the key once.
void unmerge_match_label_keys(scheduler::topology_spread_constraint& c) {
  if (!c.selector || c.match_label_keys.empty())
    return;
  std::erase_if(c.selector->match_expressions, [&](const scheduler::node_selector_requirement& e) {
    return e.op == scheduler::selector_operator::in && e.values.size() == 1 &&
           std::find(c.match_label_keys.begin(), c.match_label_keys.end(), e.key) !=
             c.match_label_keys.end();
  });
}

// One of spec.topologySpreadConstraints. The spellings of whenUnsatisfiable and the node
// inclusion policies are checked here (the model holds them as flags); every other rule is
// scheduler::validate_placement's. matchLabelKeys stay apart from the selector, as written.
scheduler::topology_spread_constraint read_topology_spread_constraint(
  const v1::TopologySpreadConstraint& in, std::string_view path, spread_selectors origin,
  reader& r) {
  scheduler::topology_spread_constraint out;
  // An absent maxSkew is 0, as in Kubernetes (no default), and validation refuses it.
  out.max_skew = in.max_skew();
  out.topology_key = in.topology_key();
  const auto& action = in.when_unsatisfiable();
  if (action == "DoNotSchedule")
    out.do_not_schedule = true;
  else if (action == "ScheduleAnyway")
    out.do_not_schedule = false;
  else
    r.errors.push_back(scheduler::not_supported_error(child(path, "whenUnsatisfiable"), action,
                                                      unsatisfiable_actions));
  if (in.has_label_selector())
    out.selector = read_label_selector(in.label_selector(), child(path, "labelSelector"), r);
  if (in.has_min_domains())
    out.min_domains = in.min_domains();
  out.honor_node_affinity =
    read_node_inclusion_policy(in.has_node_affinity_policy(), in.node_affinity_policy(), true,
                               child(path, "nodeAffinityPolicy"), r);
  out.honor_node_taints =
    read_node_inclusion_policy(in.has_node_taints_policy(), in.node_taints_policy(), false,
                               child(path, "nodeTaintsPolicy"), r);
  out.match_label_keys.assign(in.match_label_keys().begin(), in.match_label_keys().end());
  if (origin == spread_selectors::maybe_merged_by_apiserver)
    unmerge_match_label_keys(out);
  return out;
}

// A nodeSelectorTerm (required or preferred) under `path`.
scheduler::node_selector_term read_node_selector_term(const v1::NodeSelectorTerm& in,
                                                      std::string_view path, reader& r) {
  scheduler::node_selector_term term;
  term.match_expressions =
    read_requirements(in.match_expressions(), child(path, "matchExpressions"), r);
  term.match_fields = read_requirements(in.match_fields(), child(path, "matchFields"), r);
  return term;
}

bool has_constraints(const v1::PodSpec& spec) {
  if (!spec.node_selector().empty() || spec.tolerations_size() > 0 ||
      spec.scheduling_gates_size() > 0 || spec.topology_spread_constraints_size() > 0)
    return true;
  if (!spec.has_affinity())
    return false;
  const auto& a = spec.affinity();
  return (a.has_node_affinity() &&
          (a.node_affinity().has_required_during_scheduling_ignored_during_execution() ||
           a.node_affinity().preferred_during_scheduling_ignored_during_execution_size() > 0)) ||
         has_pod_affinity_terms(a.pod_affinity()) || has_pod_affinity_terms(a.pod_anti_affinity());
}

std::shared_ptr<const scheduler::placement_constraints> read_constraints(
  const v1::PodSpec& spec, std::string_view spec_path, spread_selectors origin, reader& r) {
  auto host_ports = read_host_ports(spec, spec_path, r);
  if (!has_constraints(spec) && host_ports.empty())
    return nullptr;
  auto c = std::make_shared<scheduler::placement_constraints>();
  c->host_ports = std::move(host_ports);
  c->node_selector = to_label_set(spec.node_selector());
  if (spec.has_affinity() && spec.affinity().has_node_affinity()) {
    const auto& na = spec.affinity().node_affinity();
    if (na.has_required_during_scheduling_ignored_during_execution()) {
      std::string base =
        child(spec_path, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution");
      const auto& terms = na.required_during_scheduling_ignored_during_execution();
      for (int i = 0; i < terms.node_selector_terms_size(); ++i)
        c->required_node_affinity.push_back(
          read_node_selector_term(terms.node_selector_terms(i),
                                  index(child(base, "nodeSelectorTerms"), std::size_t(i)), r));
    }
    std::string preferred_path =
      child(spec_path, "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution");
    for (int i = 0; i < na.preferred_during_scheduling_ignored_during_execution_size(); ++i) {
      const auto& w = na.preferred_during_scheduling_ignored_during_execution(i);
      // An absent weight is 0, as in Kubernetes, and validation refuses it.
      c->preferred_node_affinity.push_back(
        {w.weight(), read_node_selector_term(
                       w.preference(), child(index(preferred_path, std::size_t(i)), "preference"),
                       r)});
    }
  }
  if (spec.affinity().has_pod_affinity())
    read_pod_affinity(spec.affinity().pod_affinity(), child(spec_path, "affinity.podAffinity"), r,
                      c->required_pod_affinity, c->preferred_pod_affinity);
  if (spec.affinity().has_pod_anti_affinity())
    read_pod_affinity(spec.affinity().pod_anti_affinity(),
                      child(spec_path, "affinity.podAntiAffinity"), r,
                      c->required_pod_anti_affinity, c->preferred_pod_anti_affinity);
  for (int i = 0; i < spec.topology_spread_constraints_size(); ++i)
    c->topology_spread.push_back(read_topology_spread_constraint(
      spec.topology_spread_constraints(i),
      index(child(spec_path, "topologySpreadConstraints"), std::size_t(i)), origin, r));
  for (int i = 0; i < spec.tolerations_size(); ++i) {
    const auto& t = spec.tolerations(i);
    std::string p = index(child(spec_path, "tolerations"), std::size_t(i));
    scheduler::toleration tol;
    tol.key = t.key();
    tol.value = t.value();
    if (!t.operator_().empty()) {
      auto op = read_enum(t.operator_(), child(p, "operator"), r,
                          &scheduler::toleration_operator_from_string, toleration_operators);
      if (op)
        tol.op = *op;
    }
    if (!t.effect().empty())
      tol.effect = read_enum(t.effect(), child(p, "effect"), r,
                             &scheduler::taint_effect_from_string, taint_effects);
    if (t.has_toleration_seconds())
      tol.toleration_seconds = t.toleration_seconds();
    c->tolerations.push_back(std::move(tol));
  }
  // Kubernetes' validation: each gate a qualified name, no name twice.
  for (int i = 0; i < spec.scheduling_gates_size(); ++i) {
    const auto& name = spec.scheduling_gates(i).name();
    std::string p = index(child(spec_path, "schedulingGates"), std::size_t(i));
    bool valid = true;
    for (auto& problem : scheduler::is_qualified_name(name)) {
      r.errors.push_back({scheduler::field_error_type::invalid, p, scheduler::go_quote(name),
                          std::move(problem)});
      valid = false;
    }
    if (!valid)
      continue;
    if (std::find(c->scheduling_gates.begin(), c->scheduling_gates.end(), name) !=
        c->scheduling_gates.end()) {
      r.errors.push_back({scheduler::field_error_type::duplicate, p, scheduler::go_quote(name), ""});
      continue;
    }
    c->scheduling_gates.push_back(name);
  }
  return c;
}

std::vector<scheduler::container_resources> read_containers(
  const google::protobuf::RepeatedPtrField<v1::Container>& in, std::string_view path,
  reader& r) {
  std::vector<scheduler::container_resources> out;
  out.reserve(std::size_t(in.size()));
  for (int i = 0; i < in.size(); ++i) {
    const auto& c = in[i];
    std::string p = index(path, std::size_t(i));
    scheduler::container_resources cr;
    cr.name = c.name();
    cr.requests = read_resources(c.resources().requests(), child(p, "resources.requests"), r);
    cr.limits = read_resources(c.resources().limits(), child(p, "resources.limits"), r);
    // Kubernetes' defaulting: a resource with a limit and no request requests its limit.
    for (const auto& [name, text] : c.resources().limits()) {
      if (c.resources().requests().count(name) == 0)
        cr.requests.set(name, cr.limits.get(name));
    }
    out.push_back(std::move(cr));
  }
  return out;
}

// A JSON member of an object, or nullptr.
const json::value* member(const json::value* v, std::string_view name) {
  if (v == nullptr || !v->is_object())
    return nullptr;
  return v->get_object().if_contains(name);
}

scheduler::shared_string keep_json(const json::value* v) {
  if (v == nullptr || v->is_null())
    return {};
  return canonical_json(*v);
}

// The pod-spec part of a pod or a job's pod template.
void read_pod_spec(const v1::PodSpec& spec, const json::value* raw_spec, std::string_view path,
                   spread_selectors origin, reader& r, scheduler::pod& out) {
  auto containers = read_containers(spec.containers(), child(path, "containers"), r);
  auto init_containers = read_containers(spec.init_containers(), child(path, "initContainers"), r);
  auto overhead = read_resources(spec.overhead(), child(path, "overhead"), r);
  out.requests = scheduler::effective_requests(containers, init_containers, overhead);
  out.priority = spec.has_priority() ? spec.priority() : 0;
  out.priority_class_name = spec.priority_class_name();
  out.scheduler_name = spec.scheduler_name();
  out.node_name = spec.node_name();
  out.constraints = read_constraints(spec, path, origin, r);
  if (out.is_gated() && !out.node_name.empty())
    r.errors.push_back(scheduler::forbidden_error(
        child(path, "nodeName"), "cannot be set until all schedulingGates have been removed"));
  // Not modelled (the registry reads it from the spec's JSON when the pod is deleted: rarely),
  // but checked as the apiserver does, so a delete never meets a grace period it cannot use.
  if (const auto* grace = member(raw_spec, "terminationGracePeriodSeconds");
      grace != nullptr && !grace->is_null() &&
      !(grace->is_uint64() || (grace->is_int64() && grace->get_int64() >= 0)))
    r.errors.push_back(
        grace->is_int64()
            ? scheduler::invalid_error(child(path, "terminationGracePeriodSeconds"),
                                       grace->get_int64(), "must be greater than or equal to 0")
            : scheduler::invalid_error(child(path, "terminationGracePeriodSeconds"),
                                       canonical_json(*grace), "must be an integer"));
  out.spec_json = keep_json(raw_spec);
}

void read_role_and_group(scheduler::pod& p) {
  if (auto g = p.meta.annotations.find(scheduler::pod_group_annotation))
    p.group = *g;
  if (auto role = p.meta.annotations.find(scheduler::task_spec_key))
    p.role = *role;
  else if (auto role_label = p.meta.labels.find(scheduler::task_spec_key))
    p.role = *role_label;
}

std::vector<scheduler::lifecycle_policy> read_policies(
  const google::protobuf::RepeatedPtrField<v1::LifecyclePolicy>& in, std::string_view path,
  reader& r) {
  std::vector<scheduler::lifecycle_policy> out;
  for (int i = 0; i < in.size(); ++i) {
    const auto& p = in[i];
    scheduler::lifecycle_policy lp;
    lp.action = p.action();
    lp.event = p.event();
    lp.events.assign(p.events().begin(), p.events().end());
    if (p.has_exit_code())
      lp.exit_code = p.exit_code();
    if (!p.timeout().empty()) {
      auto ns = scheduler::parse_duration_ns(p.timeout());
      if (ns)
        lp.timeout = scheduler::duration{*ns};
      else
        r.errors.push_back(scheduler::invalid_error(child(index(path, std::size_t(i)), "timeout"),
                                                    p.timeout(), ns.error().message()));
    }
    out.push_back(std::move(lp));
  }
  return out;
}

void write_policies(const std::vector<scheduler::lifecycle_policy>& in,
                    google::protobuf::RepeatedPtrField<v1::LifecyclePolicy>& out) {
  for (const auto& lp : in) {
    auto* p = out.Add();
    p->set_action(lp.action);
    p->set_event(lp.event);
    for (const auto& e : lp.events)
      p->add_events(e);
    if (lp.exit_code)
      p->set_exit_code(*lp.exit_code);
    if (lp.timeout)
      p->set_timeout(scheduler::format_duration_ns(lp.timeout->count()));
  }
}

void write_requirements(const std::vector<scheduler::node_selector_requirement>& in,
                        google::protobuf::RepeatedPtrField<v1::NodeSelectorRequirement>& out) {
  for (const auto& q : in) {
    auto* req = out.Add();
    req->set_key(q.key);
    req->set_operator_(std::string(scheduler::to_string(q.op)));
    for (const auto& v : q.values)
      req->add_values(v);
  }
}

void write_label_selector(const scheduler::label_selector& in, v1::LabelSelector& out) {
  for (const auto& [k, v] : in.match_labels.entries())
    (*out.mutable_match_labels())[k] = v;
  for (const auto& q : in.match_expressions) {
    auto* req = out.add_match_expressions();
    req->set_key(q.key);
    req->set_operator_(std::string(scheduler::to_string(q.op)));
    for (const auto& v : q.values)
      req->add_values(v);
  }
}

void write_pod_affinity_term(const scheduler::pod_affinity_term& in, v1::PodAffinityTerm& out) {
  // mutable_* makes the selector present even when empty: {} stays {}, and nil stays absent.
  if (in.selector)
    write_label_selector(*in.selector, *out.mutable_label_selector());
  for (const auto& ns : in.namespaces)
    out.add_namespaces(ns);
  if (in.namespace_selector)
    write_label_selector(*in.namespace_selector, *out.mutable_namespace_selector());
  out.set_topology_key(in.topology_key);
}

void write_node_selector_term(const scheduler::node_selector_term& in, v1::NodeSelectorTerm& out) {
  write_requirements(in.match_expressions, *out.mutable_match_expressions());
  write_requirements(in.match_fields, *out.mutable_match_fields());
}

void write_pod_affinity(const std::vector<scheduler::pod_affinity_term>& required,
                        const std::vector<scheduler::weighted_pod_affinity_term>& preferred,
                        v1::PodAffinity& out) {
  for (const auto& t : required)
    write_pod_affinity_term(t, *out.add_required_during_scheduling_ignored_during_execution());
  for (const auto& w : preferred) {
    auto* term = out.add_preferred_during_scheduling_ignored_during_execution();
    term->set_weight(w.weight);
    write_pod_affinity_term(w.term, *term->mutable_pod_affinity_term());
  }
}

// The policies are written only where they differ from the default, as Kubernetes leaves them
// unset; they read back the same.
void write_topology_spread_constraint(const scheduler::topology_spread_constraint& in,
                                      v1::TopologySpreadConstraint& out) {
  out.set_max_skew(in.max_skew);
  out.set_topology_key(in.topology_key);
  out.set_when_unsatisfiable(in.do_not_schedule ? "DoNotSchedule" : "ScheduleAnyway");
  // mutable_* makes the selector present even when empty: {} stays {}, and nil stays absent.
  if (in.selector)
    write_label_selector(*in.selector, *out.mutable_label_selector());
  if (in.min_domains)
    out.set_min_domains(*in.min_domains);
  if (!in.honor_node_affinity)
    out.set_node_affinity_policy("Ignore");
  if (in.honor_node_taints)
    out.set_node_taints_policy("Honor");
  for (const auto& key : in.match_label_keys)
    out.add_match_label_keys(key);
}

scheduler::condition read_condition(const std::string& type, const std::string& status,
                                    const std::string& reason, const std::string& message,
                                    const std::string& time, const std::string& path, reader& r) {
  scheduler::condition c;
  c.type = type;
  c.status = status;
  c.reason = reason;
  c.message = message;
  c.last_transition_time = read_time(time, child(path, "lastTransitionTime"), r);
  return c;
}

uint64_t read_resource_version(const std::string& text, reader& r) {
  if (text.empty())
    return 0;
  uint64_t v = 0;
  auto res = std::from_chars(text.data(), text.data() + text.size(), v);
  if (res.ec != std::errc{} || res.ptr != text.data() + text.size()) {
    r.errors.push_back(scheduler::invalid_error("metadata.resourceVersion", text,
                                                "must be a decimal number"));
    return 0;
  }
  return v;
}

constexpr std::string_view phase_pending = "Pending";
constexpr std::string_view phase_running = "Running";
constexpr std::string_view phase_succeeded = "Succeeded";
constexpr std::string_view phase_failed = "Failed";
constexpr std::string_view phase_unknown = "Unknown";

} // namespace

std::optional<scheduler::job_phase> job_phase_from_string(std::string_view text) noexcept {
  for (int i = 0; i <= static_cast<int>(scheduler::job_phase_last); ++i) {
    auto p = static_cast<scheduler::job_phase>(i);
    if (scheduler::to_string(p) == text)
      return p;
  }
  return std::nullopt;
}

void read_meta(const v1::ObjectMeta& in, reader& r, scheduler::object_meta& out) {
  out.name = in.name();
  out.namespace_name = in.namespace_();
  out.labels = to_label_set(in.labels());
  out.annotations = to_label_set(in.annotations());
  if (r.read_status) {
    out.uid = in.uid();
    out.resource_version = read_resource_version(in.resource_version(), r);
    out.creation_time = read_time(in.creation_timestamp(), "metadata.creationTimestamp", r);
  }
}

void write_meta(const scheduler::object_meta& in, v1::ObjectMeta& out) {
  out.set_name(in.name.str());
  out.set_namespace_(in.namespace_name.str());
  out.set_uid(in.uid.str());
  if (in.resource_version != 0)
    out.set_resource_version(std::to_string(in.resource_version));
  out.set_creation_timestamp(format_time(in.creation_time));
  for (const auto& [k, v] : in.labels.entries())
    (*out.mutable_labels())[k] = v;
  for (const auto& [k, v] : in.annotations.entries())
    (*out.mutable_annotations())[k] = v;
}

// ---- Pods

pod_object read_pod(const v1::Pod& in, const json::value& raw, reader& r) {
  pod_object out;
  auto& p = out.pod;
  read_meta(in.metadata(), r, p.meta);
  read_role_and_group(p);
  read_pod_spec(in.spec(), member(&raw, "spec"), "spec",
                r.read_status ? spread_selectors::maybe_merged_by_apiserver
                              : spread_selectors::as_written,
                r, p);
  if (r.read_status) {
    const auto& st = in.status();
    if (!st.phase().empty()) {
      if (auto phase = read_enum(st.phase(), "status.phase", r, &scheduler::pod_phase_from_string,
                                 pod_phases))
        p.phase = *phase;
    }
    for (int i = 0; i < st.conditions_size(); ++i) {
      const auto& c = st.conditions(i);
      out.conditions.push_back(read_condition(c.type(), c.status(), c.reason(), c.message(),
                                              c.last_transition_time(),
                                              index("status.conditions", std::size_t(i)), r));
    }
    p.start_time = read_time(st.start_time(), "status.startTime", r);
    // The pod's restarts are its containers', init containers included (what Volcano's
    // TaskFailed sums).
    for (const auto* list : {&st.container_statuses(), &st.init_container_statuses()})
      for (const auto& c : *list)
        p.restart_count = scheduler::add_restarts(p.restart_count, c.restart_count());
    // An apiserver's terminating pod (Kubernetes mode, or phalanxctl reading phalanxd).
    if (!in.metadata().deletion_timestamp().empty())
      out.termination = scheduler::pod_termination{
          read_time(in.metadata().deletion_timestamp(), "metadata.deletionTimestamp", r),
          in.metadata().deletion_grace_period_seconds()};
  }
  return out;
}

v1::PodSpec write_pod_spec(const scheduler::pod& p) {
  v1::PodSpec spec;
  auto* c = spec.add_containers();
  c->set_name("main");
  write_resources(p.requests, *c->mutable_resources()->mutable_requests(), /*skip_pods=*/true);
  spec.set_node_name(p.node_name.str());
  spec.set_scheduler_name(p.scheduler_name.str());
  spec.set_priority_class_name(p.priority_class_name.str());
  if (p.priority != 0)
    spec.set_priority(p.priority);
  if (p.constraints) {
    const auto& pc = *p.constraints;
    for (const auto& [k, v] : pc.node_selector.entries())
      (*spec.mutable_node_selector())[k] = v;
    if (!pc.required_node_affinity.empty()) {
      auto* terms = spec.mutable_affinity()
                      ->mutable_node_affinity()
                      ->mutable_required_during_scheduling_ignored_during_execution();
      for (const auto& t : pc.required_node_affinity)
        write_node_selector_term(t, *terms->add_node_selector_terms());
    }
    for (const auto& w : pc.preferred_node_affinity) {
      auto* term = spec.mutable_affinity()
                     ->mutable_node_affinity()
                     ->add_preferred_during_scheduling_ignored_during_execution();
      term->set_weight(w.weight);
      write_node_selector_term(w.preference, *term->mutable_preference());
    }
    for (const auto& t : pc.tolerations) {
      auto* tol = spec.add_tolerations();
      tol->set_key(t.key);
      tol->set_operator_(std::string(scheduler::to_string(t.op)));
      tol->set_value(t.value);
      if (t.effect)
        tol->set_effect(std::string(scheduler::to_string(*t.effect)));
      if (t.toleration_seconds)
        tol->set_toleration_seconds(*t.toleration_seconds);
    }
    if (!pc.required_pod_affinity.empty() || !pc.preferred_pod_affinity.empty())
      write_pod_affinity(pc.required_pod_affinity, pc.preferred_pod_affinity,
                         *spec.mutable_affinity()->mutable_pod_affinity());
    if (!pc.required_pod_anti_affinity.empty() || !pc.preferred_pod_anti_affinity.empty())
      write_pod_affinity(pc.required_pod_anti_affinity, pc.preferred_pod_anti_affinity,
                         *spec.mutable_affinity()->mutable_pod_anti_affinity());
    for (const auto& gate : pc.scheduling_gates)
      spec.add_scheduling_gates()->set_name(gate);
    for (const auto& t : pc.topology_spread)
      write_topology_spread_constraint(t, *spec.add_topology_spread_constraints());
    // The model keeps the node's side of a port only; the container's side is shown as the same
    // number, which reads back to the same host port.
    for (const auto& hp : pc.host_ports) {
      auto* port = c->add_ports();
      port->set_container_port(hp.port);
      port->set_host_port(hp.port);
      port->set_protocol(hp.protocol);
      port->set_host_ip(hp.host_ip);
    }
  }
  return spec;
}

v1::Pod write_pod(const pod_object& in) {
  v1::Pod out;
  const auto& p = in.pod;
  out.set_kind("Pod");
  out.set_api_version("v1");
  write_meta(p.meta, *out.mutable_metadata());
  auto& annotations = *out.mutable_metadata()->mutable_annotations();
  if (!p.group.empty() && annotations.count(std::string(scheduler::pod_group_annotation)) == 0)
    annotations[std::string(scheduler::pod_group_annotation)] = p.group;
  if (!p.role.empty() && annotations.count(std::string(scheduler::task_spec_key)) == 0 &&
      !p.meta.labels.contains(scheduler::task_spec_key))
    annotations[std::string(scheduler::task_spec_key)] = p.role;
  *out.mutable_spec() = write_pod_spec(p);
  auto* st = out.mutable_status();
  st->set_phase(std::string(scheduler::to_string(p.phase)));
  for (const auto& c : in.conditions) {
    auto* pc = st->add_conditions();
    pc->set_type(c.type);
    pc->set_status(c.status);
    pc->set_reason(c.reason);
    pc->set_message(c.message);
    pc->set_last_transition_time(format_time(c.last_transition_time));
  }
  st->set_start_time(format_time(p.start_time));
  if (p.is_bound()) {
    // Its kubelet knows it: the one container write_pod_spec shows, with the pod's restarts
    // (encode_object names a kept spec's containers instead).
    auto* c = st->add_container_statuses();
    c->set_name("main");
    c->set_ready(p.phase == scheduler::pod_phase::running);
    c->set_restart_count(p.restart_count);
    if (in.exit_code) {
      auto* t = c->mutable_state()->mutable_terminated();
      t->set_exit_code(*in.exit_code);
      t->set_reason(*in.exit_code == 0 ? "Completed" : "Error");
      t->set_started_at(format_time(p.start_time));
      t->set_finished_at(format_time(p.finish_time));
    }
  }
  if (in.termination) {
    out.mutable_metadata()->set_deletion_timestamp(format_time(in.termination->deadline));
    out.mutable_metadata()->set_deletion_grace_period_seconds(in.termination->grace_seconds);
  }
  return out;
}

// ---- Nodes

node_object read_node(const v1::Node& in, reader& r) {
  node_object out;
  auto& n = out.node;
  read_meta(in.metadata(), r, n.meta);
  n.unschedulable = in.spec().unschedulable();
  for (int i = 0; i < in.spec().taints_size(); ++i) {
    const auto& t = in.spec().taints(i);
    std::string p = index("spec.taints", std::size_t(i));
    scheduler::taint taint;
    taint.key = t.key();
    taint.value = t.value();
    if (t.effect().empty()) {
      r.errors.push_back(scheduler::required_error(child(p, "effect"), ""));
      continue;
    }
    auto effect =
      read_enum(t.effect(), child(p, "effect"), r, &scheduler::taint_effect_from_string,
                taint_effects);
    if (!effect)
      continue;
    taint.effect = *effect;
    n.taints.push_back(std::move(taint));
  }
  const auto& st = in.status();
  bool from_capacity = st.allocatable().empty();
  const auto& amounts = from_capacity ? st.capacity() : st.allocatable();
  n.allocatable =
    read_resources(amounts, from_capacity ? "status.capacity" : "status.allocatable", r);
  if (amounts.count(std::string(scheduler::pods_resource)) == 0)
    n.allocatable.pods = default_max_pods;
  if (r.read_status) {
    out.allocated = read_resources(st.allocated(), "status.allocated", r);
    out.pod_count = st.has_allocated_pods() ? st.allocated_pods() : 0;
  }
  return out;
}

v1::Node write_node(const node_object& in) {
  v1::Node out;
  const auto& n = in.node;
  out.set_kind("Node");
  out.set_api_version("v1");
  write_meta(n.meta, *out.mutable_metadata());
  out.mutable_spec()->set_unschedulable(n.unschedulable);
  for (const auto& t : n.taints) {
    auto* taint = out.mutable_spec()->add_taints();
    taint->set_key(t.key);
    taint->set_value(t.value);
    taint->set_effect(std::string(scheduler::to_string(t.effect)));
  }
  auto* st = out.mutable_status();
  write_resources(n.allocatable, *st->mutable_capacity());
  write_resources(n.allocatable, *st->mutable_allocatable());
  write_resources(in.allocated, *st->mutable_allocated());
  st->set_allocated_pods(in.pod_count);
  return out;
}

// ---- PodGroups

pod_group_object read_pod_group(const v1::PodGroup& in, reader& r) {
  pod_group_object out;
  auto& g = out.group;
  read_meta(in.metadata(), r, g.meta);
  const auto& spec = in.spec();
  if (spec.has_min_member())
    g.min_member = spec.min_member();
  for (const auto& [role, min] : sorted(spec.min_task_member()))
    g.min_task_member.push_back({role, min});
  g.min_resources = read_resources(spec.min_resources(), "spec.minResources", r);
  g.queue = spec.queue().empty() ? std::string(scheduler::default_queue_name) : spec.queue();
  g.priority_class_name = spec.priority_class_name();
  // An annotation that does not read is the validator's to refuse (standalone) or, in what the
  // apiserver sends, ignored as Volcano's sla plugin ignores it.
  if (auto sla = scheduler::read_sla_waiting_time(g.meta); sla && *sla)
    g.sla_waiting_time = **sla;
  if (r.read_status) {
    const auto& st = in.status();
    if (!st.phase().empty()) {
      if (auto phase = read_enum(st.phase(), "status.phase", r,
                                 &scheduler::pod_group_phase_from_string, pod_group_phases))
        out.status.phase = *phase;
    }
    for (int i = 0; i < st.conditions_size(); ++i) {
      const auto& c = st.conditions(i);
      out.status.conditions.push_back(
        read_condition(c.type(), c.status(), c.reason(), c.message(), c.last_transition_time(),
                       index("status.conditions", std::size_t(i)), r));
    }
    out.status.running = st.running();
    out.status.succeeded = st.succeeded();
    out.status.failed = st.failed();
  }
  return out;
}

v1::PodGroup write_pod_group(const pod_group_object& in) {
  v1::PodGroup out;
  const auto& g = in.group;
  out.set_kind("PodGroup");
  out.set_api_version("scheduling.volcano.sh/v1beta1");
  write_meta(g.meta, *out.mutable_metadata());
  auto* spec = out.mutable_spec();
  spec->set_min_member(g.min_member);
  for (const auto& m : g.min_task_member)
    (*spec->mutable_min_task_member())[m.role] = m.min;
  spec->set_queue(g.queue);
  spec->set_priority_class_name(g.priority_class_name);
  write_resources(g.min_resources, *spec->mutable_min_resources());
  auto* st = out.mutable_status();
  st->set_phase(std::string(scheduler::to_string(in.status.phase)));
  for (const auto& c : in.status.conditions) {
    auto* pc = st->add_conditions();
    pc->set_type(c.type);
    pc->set_status(c.status);
    pc->set_reason(c.reason);
    pc->set_message(c.message);
    pc->set_last_transition_time(format_time(c.last_transition_time));
  }
  st->set_running(in.status.running);
  st->set_succeeded(in.status.succeeded);
  st->set_failed(in.status.failed);
  return out;
}

// ---- Queues

queue_object read_queue(const v1::Queue& in, reader& r) {
  queue_object out;
  auto& q = out.queue;
  read_meta(in.metadata(), r, q.meta);
  const auto& spec = in.spec();
  if (spec.has_weight())
    q.weight = spec.weight();
  q.capability = read_limit(spec.capability(), "spec.capability", r);
  if (spec.has_reclaimable())
    q.reclaimable = spec.reclaimable();
  q.guarantee = read_resources(spec.guarantee().resource(), "spec.guarantee.resource", r);
  q.deserved = read_limit(spec.deserved(), "spec.deserved", r);
  q.parent = spec.parent();
  if (spec.has_priority())
    q.priority = spec.priority();
  if (r.read_status) {
    const auto& st = in.status();
    if (!st.state().empty()) {
      // Closing is how a Closed queue whose PodGroups still live is shown (Volcano's controller
      // writes it, and so does Kubernetes mode's status): as the queue's own state it is Closed.
      // Read as itself, a queue in it would not decode, and would drop out of a watching cache.
      if (auto state = read_enum(st.state(), "status.state", r,
                                 &scheduler::queue_state_from_string, queue_states))
        q.state = *state == scheduler::queue_state::closing ? scheduler::queue_state::closed
                                                             : *state;
    }
    out.status.pending = st.pending();
    out.status.inqueue = st.inqueue();
    out.status.running = st.running();
    out.status.unknown = st.unknown();
    out.status.completed = st.completed();
    out.status.allocated = read_resources(st.allocated(), "status.allocated", r);
    out.status.deserved = read_resources(st.deserved(), "status.deserved", r);
  }
  return out;
}

v1::Queue write_queue(const queue_object& in) {
  v1::Queue out;
  const auto& q = in.queue;
  out.set_kind("Queue");
  out.set_api_version("scheduling.volcano.sh/v1beta1");
  write_meta(q.meta, *out.mutable_metadata());
  auto* spec = out.mutable_spec();
  spec->set_weight(q.weight);
  write_limit(q.capability, *spec->mutable_capability());
  spec->set_reclaimable(q.reclaimable);
  if (!q.guarantee.is_zero())
    write_resources(q.guarantee, *spec->mutable_guarantee()->mutable_resource());
  write_limit(q.deserved, *spec->mutable_deserved());
  spec->set_parent(q.parent);
  if (q.priority != 0)
    spec->set_priority(q.priority);
  auto* st = out.mutable_status();
  st->set_state(std::string(scheduler::to_string(q.state)));
  st->set_pending(in.status.pending);
  st->set_inqueue(in.status.inqueue);
  st->set_running(in.status.running);
  st->set_unknown(in.status.unknown);
  st->set_completed(in.status.completed);
  write_resources(in.status.allocated, *st->mutable_allocated());
  write_resources(in.status.deserved, *st->mutable_deserved());
  return out;
}

// ---- PriorityClasses

priority_class_object read_priority_class(const v1::PriorityClass& in, reader& r) {
  priority_class_object out;
  auto& c = out.priority_class;
  read_meta(in.metadata(), r, c.meta);
  c.value = in.value();  // Absent: 0, as the apiserver defaults it.
  c.global_default = in.global_default();
  c.description = in.description();
  // Absent means the default, as the apiserver defaults it; an empty text is not a policy.
  if (in.has_preemption_policy()) {
    if (auto p = read_enum(in.preemption_policy(), "preemptionPolicy", r,
                           &scheduler::preemption_policy_from_string, preemption_policies))
      c.preemption = *p;
  }
  return out;
}

v1::PriorityClass write_priority_class(const priority_class_object& in) {
  v1::PriorityClass out;
  const auto& c = in.priority_class;
  out.set_kind("PriorityClass");
  out.set_api_version("scheduling.k8s.io/v1");
  write_meta(c.meta, *out.mutable_metadata());
  out.set_value(c.value);
  out.set_global_default(c.global_default);
  out.set_description(c.description);
  out.set_preemption_policy(std::string(scheduler::to_string(c.preemption)));
  return out;
}

// ---- Jobs

job_object read_job(const v1::Job& in, const json::value& raw, reader& r) {
  job_object out;
  auto& j = out.job;
  read_meta(in.metadata(), r, j.meta);
  const auto& spec = in.spec();
  const json::value* raw_spec = member(&raw, "spec");
  j.queue = spec.queue().empty() ? std::string(scheduler::default_queue_name) : spec.queue();
  j.scheduler_name = spec.scheduler_name();
  j.priority_class_name = spec.priority_class_name();
  if (spec.has_min_available())
    j.min_available = spec.min_available();
  if (spec.has_max_retry())
    j.max_retry = spec.max_retry();
  const json::value* raw_tasks = member(raw_spec, "tasks");
  for (int i = 0; i < spec.tasks_size(); ++i) {
    const auto& t = spec.tasks(i);
    std::string p = index("spec.tasks", std::size_t(i));
    scheduler::job_task task;
    task.name = t.name();
    task.replicas = t.has_replicas() ? t.replicas() : 0;
    if (t.has_min_available())
      task.min_available = t.min_available();
    if (t.has_max_retry())
      task.max_retry = t.max_retry();
    task.policies = read_policies(t.policies(), child(p, "policies"), r);
    for (const auto& d : t.depends_on().name())
      task.depends_on.push_back(d);
    task.depends_on_iteration = t.depends_on().iteration();
    const json::value* raw_task = nullptr;
    if (raw_tasks != nullptr && raw_tasks->is_array() &&
        std::size_t(i) < raw_tasks->get_array().size())
      raw_task = &raw_tasks->get_array()[std::size_t(i)];
    auto& tpl = task.pod_template;
    tpl.meta.labels = to_label_set(t.template_().metadata().labels());
    tpl.meta.annotations = to_label_set(t.template_().metadata().annotations());
    tpl.role = t.name();
    read_pod_spec(t.template_().spec(), member(member(raw_task, "template"), "spec"),
                  child(p, "template.spec"), spread_selectors::as_written, r, tpl);
    j.tasks.push_back(std::move(task));
  }
  j.policies = read_policies(spec.policies(), "spec.policies", r);
  if (spec.has_min_success())
    j.min_success = spec.min_success();
  if (spec.has_ttl_seconds_after_finished())
    j.ttl_seconds_after_finished = spec.ttl_seconds_after_finished();
  const json::value* raw_volumes = member(raw_spec, "volumes");
  for (int i = 0; i < spec.volumes_size(); ++i) {
    const auto& v = spec.volumes(i);
    const json::value* raw_volume = nullptr;
    if (raw_volumes != nullptr && raw_volumes->is_array() &&
        std::size_t(i) < raw_volumes->get_array().size())
      raw_volume = &raw_volumes->get_array()[std::size_t(i)];
    const json::value* claim = member(raw_volume, "volumeClaim");
    j.volumes.push_back({v.mount_path(), v.volume_claim_name(),
                         claim != nullptr && !claim->is_null()});
  }
  for (const auto& [name, args] : sorted(spec.plugins()))
    j.plugins.emplace_back(name, std::vector<std::string>(args.values().begin(),
                                                          args.values().end()));
  j.spec_json = keep_json(raw_spec);
  if (r.read_status) {
    const auto& st = in.status();
    auto& s = out.status;
    if (!st.state().phase().empty()) {
      if (auto phase =
            read_enum(st.state().phase(), "status.state.phase", r, &job_phase_from_string,
                      job_phases))
        s.phase = *phase;
    }
    s.reason = st.state().reason();
    s.message = st.state().message();
    s.last_transition_time =
      read_time(st.state().last_transition_time(), "status.state.lastTransitionTime", r);
    s.min_available = st.has_min_available() ? st.min_available() : 0;
    s.pending = st.pending();
    s.running = st.running();
    s.succeeded = st.succeeded();
    s.failed = st.failed();
    s.terminating = st.terminating();
    s.unknown = st.unknown();
    s.retry_count = st.retry_count();
    s.version = st.version();
    if (!st.running_duration().empty()) {
      if (auto d = scheduler::parse_go_duration(st.running_duration()); d.ok())
        s.running_duration = *d;
      else
        r.errors.push_back(scheduler::invalid_error("status.runningDuration",
                                                    st.running_duration(),
                                                    "must be a Go duration such as 1m30s"));
    }
    for (int i = 0; i < st.conditions_size(); ++i) {
      const auto& c = st.conditions(i);
      const auto at = index("status.conditions", std::size_t(i));
      scheduler::job_condition jc;
      if (auto phase = read_enum(c.status(), child(at, "status"), r, &job_phase_from_string,
                                 job_phases))
        jc.status = *phase;
      jc.last_transition_time =
        read_time(c.last_transition_time(), child(at, "lastTransitionTime"), r);
      s.conditions.push_back(jc);
    }
    for (const auto& [task, counts] : sorted(st.task_status_count())) {
      scheduler::task_counts tc;
      tc.task = task;
      for (const auto& [phase, n] : counts.phase()) {
        if (phase == phase_pending)
          tc.pending = n;
        else if (phase == phase_running)
          tc.running = n;
        else if (phase == phase_succeeded)
          tc.succeeded = n;
        else if (phase == phase_failed)
          tc.failed = n;
        else if (phase == phase_unknown)
          tc.unknown = n;
      }
      s.tasks.push_back(std::move(tc));
    }
  }
  return out;
}

v1::Job write_job(const job_object& in) {
  v1::Job out;
  const auto& j = in.job;
  out.set_kind("Job");
  out.set_api_version("batch.volcano.sh/v1alpha1");
  write_meta(j.meta, *out.mutable_metadata());
  auto* spec = out.mutable_spec();
  spec->set_scheduler_name(j.scheduler_name);
  if (j.min_available)
    spec->set_min_available(*j.min_available);
  for (const auto& t : j.tasks) {
    auto* task = spec->add_tasks();
    task->set_name(t.name);
    task->set_replicas(t.replicas);
    if (t.min_available)
      task->set_min_available(*t.min_available);
    if (t.max_retry)
      task->set_max_retry(*t.max_retry);
    auto* tpl = task->mutable_template_();
    for (const auto& [k, v] : t.pod_template.meta.labels.entries())
      (*tpl->mutable_metadata()->mutable_labels())[k] = v;
    for (const auto& [k, v] : t.pod_template.meta.annotations.entries())
      (*tpl->mutable_metadata()->mutable_annotations())[k] = v;
    *tpl->mutable_spec() = write_pod_spec(t.pod_template);
    write_policies(t.policies, *task->mutable_policies());
    for (const auto& d : t.depends_on)
      task->mutable_depends_on()->add_name(d);
    if (!t.depends_on_iteration.empty())
      task->mutable_depends_on()->set_iteration(t.depends_on_iteration);
  }
  for (const auto& v : j.volumes) {
    auto* volume = spec->add_volumes();
    volume->set_mount_path(v.mount_path);
    volume->set_volume_claim_name(v.volume_claim_name);
  }
  if (j.min_success)
    spec->set_min_success(*j.min_success);
  if (j.ttl_seconds_after_finished)
    spec->set_ttl_seconds_after_finished(*j.ttl_seconds_after_finished);
  write_policies(j.policies, *spec->mutable_policies());
  for (const auto& [name, args] : j.plugins) {
    auto& list = (*spec->mutable_plugins())[name];
    for (const auto& a : args)
      list.add_values(a);
  }
  spec->set_queue(j.queue);
  spec->set_max_retry(j.max_retry);
  spec->set_priority_class_name(j.priority_class_name);

  const auto& s = in.status;
  auto* st = out.mutable_status();
  st->mutable_state()->set_phase(std::string(scheduler::to_string(s.phase)));
  st->mutable_state()->set_reason(s.reason);
  st->mutable_state()->set_message(s.message);
  st->mutable_state()->set_last_transition_time(format_time(s.last_transition_time));
  st->set_min_available(s.min_available);
  st->set_pending(s.pending);
  st->set_running(s.running);
  st->set_succeeded(s.succeeded);
  st->set_failed(s.failed);
  st->set_terminating(s.terminating);
  st->set_unknown(s.unknown);
  st->set_retry_count(s.retry_count);
  st->set_version(s.version);
  if (s.running_duration)
    st->set_running_duration(scheduler::format_duration_ns(s.running_duration->count()));
  // What the job's plugins made, as Volcano's OnJobAdd records it, and the claims its volumes
  // mount, as its createJobIOIfNotExist does.
  auto& controlled = *st->mutable_controlled_resources();
  for (auto name : scheduler::controlled_plugins(scheduler::plugin_settings_of(j)))
    controlled["plugin-" + std::string(name)] = std::string(name);
  for (const auto& claim : scheduler::named_claims(j))
    controlled[scheduler::claim_resource_key(claim)] = claim;
  for (const auto& c : s.conditions) {
    auto* pc = st->add_conditions();
    pc->set_status(std::string(scheduler::to_string(c.status)));
    pc->set_last_transition_time(format_time(c.last_transition_time));
  }
  for (const auto& tc : s.tasks) {
    auto& phases = *(*st->mutable_task_status_count())[tc.task].mutable_phase();
    if (tc.pending != 0)
      phases[std::string(phase_pending)] = tc.pending;
    if (tc.running != 0)
      phases[std::string(phase_running)] = tc.running;
    if (tc.succeeded != 0)
      phases[std::string(phase_succeeded)] = tc.succeeded;
    if (tc.failed != 0)
      phases[std::string(phase_failed)] = tc.failed;
    if (tc.unknown != 0)
      phases[std::string(phase_unknown)] = tc.unknown;
  }
  return out;
}

} // namespace phalanx::api::wire
