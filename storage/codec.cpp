#include "storage/codec.hpp"

#include "records.pb.h"

#include "scheduler/sla.hpp"

#include <google/protobuf/io/coded_stream.h>

#include <concepts>
#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace phalanx::storage {

namespace {

namespace sch = phalanx::scheduler;

// The model enums and the record enums list their values in the same order; the record enums
// start at 1 because 0 means "never written". A new model enumerator breaks these asserts until
// records.proto has it too.
static_assert(int(sch::taint_effect_last) + 1 == v1::TaintEffect_MAX);
static_assert(int(sch::toleration_operator_last) + 1 == v1::TolerationOperator_MAX);
static_assert(int(sch::selector_operator_last) + 1 == v1::SelectorOperator_MAX);
static_assert(int(sch::pod_phase_last) + 1 == v1::PodPhase_MAX);
static_assert(int(sch::queue_state_last) + 1 == v1::QueueState_MAX);
static_assert(int(sch::preemption_policy_last) + 1 == v1::PreemptionPolicy_MAX);
static_assert(int(sch::job_phase_last) + 1 == v1::JobPhase_MAX);

template <class Enum>
int to_record(Enum e) noexcept {
  return static_cast<int>(e) + 1;
}

int64_t to_ns(sch::timestamp t) noexcept {
  return t.time_since_epoch().count();
}
sch::timestamp from_ns(int64_t ns) noexcept {
  return sch::timestamp{sch::duration{ns}};
}

void assign(std::string* field, std::string_view value) {
  field->assign(value.data(), value.size());
}

// Moves a decoded bytes field out of the (reused) message.
std::string take(std::string* field) {
  return std::move(*field);
}

// ------------------------------------------------------------------------------------------------
// Encoding

void encode_labels(const sch::label_set& labels,
                   google::protobuf::RepeatedPtrField<v1::Label>* out) {
  out->Reserve(static_cast<int>(labels.size()));
  for (const auto& [key, value] : labels.entries()) {
    auto* l = out->Add();
    assign(l->mutable_key(), key);
    assign(l->mutable_value(), value);
  }
}

void encode_meta(const sch::object_meta& m, v1::ObjectMeta* out) {
  assign(out->mutable_name(), m.name);
  assign(out->mutable_namespace_name(), m.namespace_name);
  sch::object_uid::text_buffer uid;
  assign(out->mutable_uid(), m.uid.text(uid));
  encode_labels(m.labels, out->mutable_labels());
  encode_labels(m.annotations, out->mutable_annotations());
  out->set_creation_time_ns(to_ns(m.creation_time));
  out->set_resource_version(m.resource_version);
}

void encode_resources(const sch::resources& r, v1::Resources* out) {
  out->set_cpu_milli(r.cpu_milli);
  out->set_memory_bytes(r.memory_bytes);
  out->set_ephemeral_bytes(r.ephemeral_bytes);
  out->set_pods(r.pods);
  for (const auto& e : r.extended()) {
    auto* a = out->add_extended();
    assign(a->mutable_name(), e.name.str());
    a->set_amount(e.amount);
  }
}

void encode_limit(const sch::resource_limit& l, v1::ResourceLimit* out) {
  l.for_each([&](std::string_view name, int64_t cap) {
    auto* a = out->add_caps();
    assign(a->mutable_name(), name);
    a->set_amount(cap);
  });
}

void encode_requirements(const std::vector<sch::node_selector_requirement>& reqs,
                         google::protobuf::RepeatedPtrField<v1::NodeSelectorRequirement>* out) {
  for (const auto& r : reqs) {
    auto* m = out->Add();
    assign(m->mutable_key(), r.key);
    m->set_op(static_cast<v1::SelectorOperator>(to_record(r.op)));
    for (const auto& v : r.values)
      assign(m->add_values(), v);
  }
}

void encode_label_selector(const sch::label_selector& s, v1::LabelSelector* out) {
  encode_labels(s.match_labels, out->mutable_match_labels());
  encode_requirements(s.match_expressions, out->mutable_match_expressions());
}

void encode_pod_affinity_term(const sch::pod_affinity_term& t, v1::PodAffinityTerm* out) {
  // mutable_* marks the selector present even when it is empty.
  if (t.selector)
    encode_label_selector(*t.selector, out->mutable_selector());
  for (const auto& ns : t.namespaces)
    assign(out->add_namespaces(), ns);
  if (t.namespace_selector)
    encode_label_selector(*t.namespace_selector, out->mutable_namespace_selector());
  assign(out->mutable_topology_key(), t.topology_key);
}

void encode_weighted_terms(const std::vector<sch::weighted_pod_affinity_term>& terms,
                           google::protobuf::RepeatedPtrField<v1::WeightedPodAffinityTerm>* out) {
  for (const auto& w : terms) {
    auto* m = out->Add();
    m->set_weight(w.weight);
    encode_pod_affinity_term(w.term, m->mutable_term());
  }
}

void encode_topology_spread_constraint(const sch::topology_spread_constraint& c,
                                       v1::TopologySpreadConstraint* out) {
  out->set_max_skew(c.max_skew);
  assign(out->mutable_topology_key(), c.topology_key);
  out->set_do_not_schedule(c.do_not_schedule);
  // mutable_* marks the selector present even when it is empty.
  if (c.selector)
    encode_label_selector(*c.selector, out->mutable_selector());
  if (c.min_domains)
    out->set_min_domains(*c.min_domains);
  out->set_honor_node_affinity(c.honor_node_affinity);
  out->set_honor_node_taints(c.honor_node_taints);
  for (const auto& key : c.match_label_keys)
    assign(out->add_match_label_keys(), key);
}

void encode_node_selector_term(const sch::node_selector_term& term, v1::NodeSelectorTerm* out) {
  encode_requirements(term.match_expressions, out->mutable_match_expressions());
  encode_requirements(term.match_fields, out->mutable_match_fields());
}

void encode_constraints(const sch::placement_constraints& c, v1::PlacementConstraints* out) {
  encode_labels(c.node_selector, out->mutable_node_selector());
  for (const auto& term : c.required_node_affinity)
    encode_node_selector_term(term, out->add_required_node_affinity());
  for (const auto& w : c.preferred_node_affinity) {
    auto* t = out->add_preferred_node_affinity();
    t->set_weight(w.weight);
    encode_node_selector_term(w.preference, t->mutable_preference());
  }
  for (const auto& tol : c.tolerations) {
    auto* t = out->add_tolerations();
    assign(t->mutable_key(), tol.key);
    t->set_op(static_cast<v1::TolerationOperator>(to_record(tol.op)));
    assign(t->mutable_value(), tol.value);
    if (tol.effect)
      t->set_effect(static_cast<v1::TaintEffect>(to_record(*tol.effect)));
    if (tol.toleration_seconds)
      t->set_toleration_seconds(*tol.toleration_seconds);
  }
  for (const auto& gate : c.scheduling_gates)
    assign(out->add_scheduling_gates(), gate);
  for (const auto& t : c.required_pod_affinity)
    encode_pod_affinity_term(t, out->add_required_pod_affinity());
  for (const auto& t : c.required_pod_anti_affinity)
    encode_pod_affinity_term(t, out->add_required_pod_anti_affinity());
  encode_weighted_terms(c.preferred_pod_affinity, out->mutable_preferred_pod_affinity());
  encode_weighted_terms(c.preferred_pod_anti_affinity, out->mutable_preferred_pod_anti_affinity());
  for (const auto& hp : c.host_ports) {
    auto* m = out->add_host_ports();
    assign(m->mutable_protocol(), hp.protocol);
    assign(m->mutable_host_ip(), hp.host_ip);
    m->set_port(hp.port);
  }
  for (const auto& t : c.topology_spread)
    encode_topology_spread_constraint(t, out->add_topology_spread());
}

void encode_pod_body(const sch::pod& p, v1::Pod* out) {
  encode_meta(p.meta, out->mutable_meta());
  assign(out->mutable_group(), p.group);
  assign(out->mutable_role(), p.role);
  encode_resources(p.requests, out->mutable_requests());
  out->set_priority(p.priority);
  assign(out->mutable_priority_class_name(), p.priority_class_name);
  assign(out->mutable_scheduler_name(), p.scheduler_name);
  if (p.constraints) {
    v1::PlacementConstraints c;
    encode_constraints(*p.constraints, &c);
    // Serialized on its own so that equal constraints give equal bytes: decoding shares them.
    c.SerializeToString(out->mutable_constraints());
  }
  if (p.spec_json)
    assign(out->mutable_spec_json(), p.spec_json);
  out->set_phase(static_cast<v1::PodPhase>(to_record(p.phase)));
  assign(out->mutable_node_name(), p.node_name);
  out->set_start_time_ns(to_ns(p.start_time));
  out->set_finish_time_ns(to_ns(p.finish_time));
  out->set_restart_count(p.restart_count);
}

void encode_policies(const std::vector<sch::lifecycle_policy>& policies,
                     google::protobuf::RepeatedPtrField<v1::LifecyclePolicy>* out) {
  for (const auto& p : policies) {
    auto* m = out->Add();
    assign(m->mutable_action(), p.action);
    assign(m->mutable_event(), p.event);
    for (const auto& e : p.events)
      assign(m->add_events(), e);
    if (p.exit_code)
      m->set_exit_code(*p.exit_code);
    if (p.timeout)
      m->set_timeout_ns(p.timeout->count());
  }
}

void encode_status(const sch::job_status& s, v1::JobStatus* out) {
  out->set_phase(static_cast<v1::JobPhase>(to_record(s.phase)));
  assign(out->mutable_reason(), s.reason);
  assign(out->mutable_message(), s.message);
  out->set_last_transition_time_ns(to_ns(s.last_transition_time));
  out->set_min_available(s.min_available);
  out->set_pending(s.pending);
  out->set_running(s.running);
  out->set_succeeded(s.succeeded);
  out->set_failed(s.failed);
  out->set_terminating(s.terminating);
  out->set_unknown(s.unknown);
  out->set_retry_count(s.retry_count);
  out->set_version(s.version);
  for (const auto& t : s.tasks) {
    auto* m = out->add_tasks();
    assign(m->mutable_task(), t.task);
    m->set_pending(t.pending);
    m->set_running(t.running);
    m->set_succeeded(t.succeeded);
    m->set_failed(t.failed);
    m->set_unknown(t.unknown);
  }
  for (const auto& c : s.conditions) {
    auto* m = out->add_conditions();
    m->set_status(static_cast<v1::JobPhase>(to_record(c.status)));
    m->set_last_transition_time_ns(to_ns(c.last_transition_time));
  }
  if (s.running_duration)
    out->set_running_duration_ns(s.running_duration->count());
}

template <class Message>
std::string serialize(const Message& m) {
  std::string out;
  m.SerializeToString(&out);
  return out;
}

// ------------------------------------------------------------------------------------------------
// Decoding. Each function returns false with `error` set to "<field>: <what>"; callers prepend
// their own field name, so the message names the full path ("tasks[1].pod_template.meta.labels").

bool fail(std::string& error, std::string what) {
  error = std::move(what);
  return false;
}

bool nest(std::string& error, std::string_view prefix) {
  error.insert(0, prefix);
  return false;
}

std::string indexed(std::string_view name, int i) {
  std::string out{name};
  out += '[';
  out += std::to_string(i);
  out += "].";
  return out;
}

template <class Enum>
bool decode_enum(int value, Enum last, Enum& out, std::string_view field, std::string& error) {
  if (value < 1 || value > static_cast<int>(last) + 1)
    return fail(error, std::string(field) + ": unknown value " + std::to_string(value));
  out = static_cast<Enum>(value - 1);
  return true;
}

bool check_version(uint32_t version, std::string& error) {
  if (version == 0)
    return fail(error, "record_version: missing");
  if (version > record_version)
    return fail(error, "record_version " + std::to_string(version) +
                           " is newer than this build reads (" + std::to_string(record_version) +
                           ")");
  return true;
}

bool decode_labels(const google::protobuf::RepeatedPtrField<v1::Label>& in, sch::label_set& out,
                   std::string_view field, std::string& error) {
  if (in.empty())
    return true;
  sch::label_set::builder b(out);
  b.reserve(out.size() + static_cast<std::size_t>(in.size()));
  std::string_view previous;
  bool first = true;
  for (const auto& l : in) {
    // Strictly increasing keys: label_set's own order.
    if (!first && !(previous < std::string_view(l.key())))
      return fail(error,
                  std::string(field) + ": keys not sorted or repeated at \"" + l.key() + "\"");
    first = false;
    previous = l.key();
    b.add(l.key(), l.value());
  }
  out = b.build();
  return true;
}

// `names`, when given, shares the namespace's block (a pod's: every pod of a namespace names it).
bool decode_meta(v1::ObjectMeta& in, sch::object_meta& out, std::string& error,
                 sch::shared_string_pool* names = nullptr) {
  out.name = in.name();
  out.namespace_name = names ? names->share(in.namespace_name()) : in.namespace_name();
  out.uid = in.uid();
  if (!decode_labels(in.labels(), out.labels, "labels", error) ||
      !decode_labels(in.annotations(), out.annotations, "annotations", error))
    return nest(error, "meta.");
  out.creation_time = from_ns(in.creation_time_ns());
  out.resource_version = in.resource_version();
  return true;
}

bool decode_resources(const v1::Resources& in, sch::resources& out, std::string& error) {
  out.cpu_milli = in.cpu_milli();
  out.memory_bytes = in.memory_bytes();
  out.ephemeral_bytes = in.ephemeral_bytes();
  out.pods = in.pods();
  for (const auto& e : in.extended()) {
    const std::string& name = e.name();
    if (name.empty())
      return fail(error, "extended: empty resource name");
    if (sch::is_standard_resource(name))
      return fail(error, "extended: standard resource \"" + name + "\" listed as extended");
    if (e.amount() == 0)
      return fail(error, "extended: zero amount for \"" + name + "\"");
    auto handle = sch::resource_name::intern(name);
    if (!handle)
      return fail(error, "extended: cannot intern resource name \"" + name +
                             "\" (too many distinct extended resources)");
    if (out.get(*handle) != 0)
      return fail(error, "extended: \"" + name + "\" listed twice");
    out.set(*handle, e.amount());
  }
  return true;
}

bool decode_limit(const v1::ResourceLimit& in, sch::resource_limit& out, std::string& error) {
  for (const auto& c : in.caps()) {
    const std::string& name = c.name();
    if (name.empty())
      return fail(error, "caps: empty resource name");
    if (out.get(name))
      return fail(error, "caps: \"" + name + "\" listed twice");
    if (!out.set(name, c.amount()))
      return fail(error, "caps: cannot intern resource name \"" + name +
                             "\" (too many distinct extended resources)");
  }
  return true;
}

bool decode_requirements(google::protobuf::RepeatedPtrField<v1::NodeSelectorRequirement>& in,
                         std::vector<sch::node_selector_requirement>& out, std::string& error) {
  out.reserve(static_cast<std::size_t>(in.size()));
  int i = 0;
  for (auto& m : in) {
    auto& r = out.emplace_back();
    r.key = take(m.mutable_key());
    if (!decode_enum(m.op(), sch::selector_operator_last, r.op, "op", error))
      return nest(error, "[" + std::to_string(i) + "].");
    r.values.reserve(static_cast<std::size_t>(m.values_size()));
    for (auto& v : *m.mutable_values())
      r.values.push_back(take(&v));
    ++i;
  }
  return true;
}

bool decode_label_selector(v1::LabelSelector& in, sch::label_selector& out, std::string& error) {
  if (!decode_labels(in.match_labels(), out.match_labels, "match_labels", error))
    return false;
  if (!decode_requirements(*in.mutable_match_expressions(), out.match_expressions, error))
    return nest(error, "match_expressions");
  return true;
}

bool decode_pod_affinity_term(v1::PodAffinityTerm& in, sch::pod_affinity_term& out,
                              std::string& error) {
  if (in.has_selector()) {
    out.selector.emplace();
    if (!decode_label_selector(*in.mutable_selector(), *out.selector, error))
      return nest(error, "selector.");
  }
  out.namespaces.reserve(static_cast<std::size_t>(in.namespaces_size()));
  for (auto& ns : *in.mutable_namespaces())
    out.namespaces.push_back(take(&ns));
  if (in.has_namespace_selector()) {
    out.namespace_selector.emplace();
    if (!decode_label_selector(*in.mutable_namespace_selector(), *out.namespace_selector, error))
      return nest(error, "namespace_selector.");
  }
  out.topology_key = take(in.mutable_topology_key());
  return true;
}

bool decode_terms(google::protobuf::RepeatedPtrField<v1::PodAffinityTerm>& in,
                  std::vector<sch::pod_affinity_term>& out, std::string_view field,
                  std::string& error) {
  out.reserve(static_cast<std::size_t>(in.size()));
  int i = 0;
  for (auto& t : in) {
    if (!decode_pod_affinity_term(t, out.emplace_back(), error))
      return nest(error, indexed(field, i));
    ++i;
  }
  return true;
}

bool decode_weighted_terms(google::protobuf::RepeatedPtrField<v1::WeightedPodAffinityTerm>& in,
                           std::vector<sch::weighted_pod_affinity_term>& out,
                           std::string_view field, std::string& error) {
  out.reserve(static_cast<std::size_t>(in.size()));
  int i = 0;
  for (auto& w : in) {
    auto& term = out.emplace_back();
    term.weight = w.weight();
    if (!decode_pod_affinity_term(*w.mutable_term(), term.term, error))
      return nest(error, indexed(field, i) + "term.");
    ++i;
  }
  return true;
}

bool decode_topology_spread_constraint(v1::TopologySpreadConstraint& in,
                                       sch::topology_spread_constraint& out, std::string& error) {
  out.max_skew = in.max_skew();
  out.topology_key = take(in.mutable_topology_key());
  out.do_not_schedule = in.do_not_schedule();
  if (in.has_selector()) {
    out.selector.emplace();
    if (!decode_label_selector(*in.mutable_selector(), *out.selector, error))
      return nest(error, "selector.");
  }
  if (in.has_min_domains())
    out.min_domains = in.min_domains();
  out.honor_node_affinity = in.honor_node_affinity();
  out.honor_node_taints = in.honor_node_taints();
  out.match_label_keys.reserve(static_cast<std::size_t>(in.match_label_keys_size()));
  for (auto& key : *in.mutable_match_label_keys())
    out.match_label_keys.push_back(take(&key));
  return true;
}

bool decode_node_selector_term(v1::NodeSelectorTerm& in, sch::node_selector_term& out,
                               std::string& error) {
  if (!decode_requirements(*in.mutable_match_expressions(), out.match_expressions, error))
    return nest(error, "match_expressions");
  if (!decode_requirements(*in.mutable_match_fields(), out.match_fields, error))
    return nest(error, "match_fields");
  return true;
}

bool decode_constraints(v1::PlacementConstraints& in, sch::placement_constraints& out,
                        std::string& error) {
  if (!decode_labels(in.node_selector(), out.node_selector, "node_selector", error))
    return false;
  out.required_node_affinity.reserve(static_cast<std::size_t>(in.required_node_affinity_size()));
  int i = 0;
  for (auto& t : *in.mutable_required_node_affinity()) {
    if (!decode_node_selector_term(t, out.required_node_affinity.emplace_back(), error))
      return nest(error, indexed("required_node_affinity", i));
    ++i;
  }
  out.preferred_node_affinity.reserve(static_cast<std::size_t>(in.preferred_node_affinity_size()));
  i = 0;
  for (auto& t : *in.mutable_preferred_node_affinity()) {
    auto& w = out.preferred_node_affinity.emplace_back();
    w.weight = t.weight();
    if (!decode_node_selector_term(*t.mutable_preference(), w.preference, error))
      return nest(error, indexed("preferred_node_affinity", i) + "preference.");
    ++i;
  }
  out.tolerations.reserve(static_cast<std::size_t>(in.tolerations_size()));
  i = 0;
  for (auto& t : *in.mutable_tolerations()) {
    auto& tol = out.tolerations.emplace_back();
    tol.key = take(t.mutable_key());
    if (!decode_enum(t.op(), sch::toleration_operator_last, tol.op, "op", error))
      return nest(error, indexed("tolerations", i));
    tol.value = take(t.mutable_value());
    if (t.has_effect()) {
      sch::taint_effect e{};
      if (!decode_enum(t.effect(), sch::taint_effect_last, e, "effect", error))
        return nest(error, indexed("tolerations", i));
      tol.effect = e;
    }
    if (t.has_toleration_seconds())
      tol.toleration_seconds = t.toleration_seconds();
    ++i;
  }
  out.scheduling_gates.reserve(static_cast<std::size_t>(in.scheduling_gates_size()));
  for (auto& gate : *in.mutable_scheduling_gates())
    out.scheduling_gates.push_back(take(&gate));
  if (!decode_terms(*in.mutable_required_pod_affinity(), out.required_pod_affinity,
                    "required_pod_affinity", error) ||
      !decode_terms(*in.mutable_required_pod_anti_affinity(), out.required_pod_anti_affinity,
                    "required_pod_anti_affinity", error) ||
      !decode_weighted_terms(*in.mutable_preferred_pod_affinity(), out.preferred_pod_affinity,
                             "preferred_pod_affinity", error) ||
      !decode_weighted_terms(*in.mutable_preferred_pod_anti_affinity(),
                             out.preferred_pod_anti_affinity, "preferred_pod_anti_affinity", error))
    return false;
  out.host_ports.reserve(static_cast<std::size_t>(in.host_ports_size()));
  for (auto& m : *in.mutable_host_ports())
    out.host_ports.push_back({take(m.mutable_protocol()), take(m.mutable_host_ip()), m.port()});
  out.topology_spread.reserve(static_cast<std::size_t>(in.topology_spread_size()));
  i = 0;
  for (auto& m : *in.mutable_topology_spread()) {
    if (!decode_topology_spread_constraint(m, out.topology_spread.emplace_back(), error))
      return nest(error, indexed("topology_spread", i));
    ++i;
  }
  return true;
}

void decode_policies(google::protobuf::RepeatedPtrField<v1::LifecyclePolicy>& in,
                     std::vector<sch::lifecycle_policy>& out) {
  out.reserve(static_cast<std::size_t>(in.size()));
  for (auto& m : in) {
    auto& p = out.emplace_back();
    p.action = take(m.mutable_action());
    p.event = take(m.mutable_event());
    p.events.reserve(static_cast<std::size_t>(m.events_size()));
    for (auto& e : *m.mutable_events())
      p.events.push_back(take(&e));
    if (m.has_exit_code())
      p.exit_code = m.exit_code();
    if (m.has_timeout_ns())
      p.timeout = sch::duration{m.timeout_ns()};
  }
}

bool decode_status(v1::JobStatus& in, sch::job_status& out, std::string& error) {
  if (!decode_enum(in.phase(), sch::job_phase_last, out.phase, "phase", error))
    return false;
  out.reason = take(in.mutable_reason());
  out.message = take(in.mutable_message());
  out.last_transition_time = from_ns(in.last_transition_time_ns());
  out.min_available = in.min_available();
  out.pending = in.pending();
  out.running = in.running();
  out.succeeded = in.succeeded();
  out.failed = in.failed();
  out.terminating = in.terminating();
  out.unknown = in.unknown();
  out.retry_count = in.retry_count();
  out.version = in.version();
  if (in.has_running_duration_ns())
    out.running_duration = scheduler::duration(in.running_duration_ns());
  out.tasks.reserve(static_cast<std::size_t>(in.tasks_size()));
  for (auto& t : *in.mutable_tasks()) {
    auto& c = out.tasks.emplace_back();
    c.task = take(t.mutable_task());
    c.pending = t.pending();
    c.running = t.running();
    c.succeeded = t.succeeded();
    c.failed = t.failed();
    c.unknown = t.unknown();
  }
  out.conditions.reserve(static_cast<std::size_t>(in.conditions_size()));
  for (int i = 0; i < in.conditions_size(); ++i) {
    const auto& m = in.conditions(i);
    auto& c = out.conditions.emplace_back();
    if (!decode_enum(m.status(), sch::job_phase_last, c.status,
                     "conditions[" + std::to_string(i) + "].status", error))
      return false;
    c.last_transition_time = from_ns(m.last_transition_time_ns());
  }
  return true;
}

template <class Message>
bool parse(Message& m, std::string_view bytes, std::string& error) {
  if (bytes.size() > static_cast<std::size_t>(INT32_MAX) ||
      !m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return fail(error, "not a valid " + Message::descriptor()->name() + " (" +
                           std::to_string(bytes.size()) + " bytes)");
  return true;
}

// Transparent hashing so that lookups by std::string_view need no temporary string.
struct text_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

// ------------------------------------------------------------------------------------------------
// The hot path: pod records decoded straight from the wire format into the model, without a
// protobuf message in between (no copy of each string into a message first, constraints and
// spec_json looked up by a view of the input). It reads exactly what encode(pod) writes, in any
// field order, skips unknown fields like protobuf does, and rejects malformed input; a singular
// message field that appears twice (which protobuf would merge, and the encoder never writes) is
// rejected too, except the record's pod itself: state updates (encode_pod_state) are appended as
// more occurrences of it, and are merged as protobuf would. Job task templates, being few, go
// through the generated code.

class wire_reader {
 public:
  explicit wire_reader(std::string_view bytes)
      : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  bool done() const noexcept { return p_ == end_; }

  bool varint(uint64_t& out) noexcept {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_)
        return false;
      auto byte = static_cast<uint8_t>(*p_++);
      if (shift == 63 && byte > 1)
        return false; // More than 64 bits.
      value |= uint64_t(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        out = value;
        return true;
      }
    }
    return false;
  }

  // The next field's number and wire type. Like protobuf, a tag is at most 5 bytes and 32 bits.
  bool tag(uint32_t& field, int& type) noexcept {
    uint64_t v = 0;
    const char* start = p_;
    if (!varint(v) || p_ - start > 5 || v > 0xffffffffu || (v >> 3) == 0)
      return false;
    field = static_cast<uint32_t>(v >> 3);
    type = static_cast<int>(v & 7);
    return true;
  }

  bool length_delimited(std::string_view& out) noexcept {
    uint64_t n = 0;
    if (!varint(n) || n > static_cast<uint64_t>(end_ - p_))
      return false;
    out = {p_, static_cast<std::size_t>(n)};
    p_ += n;
    return true;
  }

  bool skip(int type) noexcept {
    switch (type) {
      case 0: {
        uint64_t v = 0;
        return varint(v);
      }
      case 1:
        return advance(8);
      case 2: {
        std::string_view s;
        return length_delimited(s);
      }
      case 5:
        return advance(4);
      default:
        return false; // Groups (3, 4) are not used by these records; 6 and 7 do not exist.
    }
  }

 private:
  bool advance(std::size_t n) noexcept {
    if (static_cast<std::size_t>(end_ - p_) < n)
      return false;
    p_ += n;
    return true;
  }

  const char* p_;
  const char* end_;
};

constexpr int wire_varint = 0;
constexpr int wire_len = 2;

// Reads one field of an expected wire type; unknown fields are skipped by the callers.
struct field_reader {
  wire_reader& r;
  int type;
  bool u64(uint64_t& out) { return type == wire_varint && r.varint(out); }
  bool i64(int64_t& out) {
    uint64_t v = 0;
    if (!u64(v))
      return false;
    out = static_cast<int64_t>(v);
    return true;
  }
  bool i32(int32_t& out) {
    uint64_t v = 0;
    if (!u64(v))
      return false;
    out = static_cast<int32_t>(static_cast<uint32_t>(v)); // int32 keeps the low 32 bits.
    return true;
  }
  bool len(std::string_view& out) { return type == wire_len && r.length_delimited(out); }
  bool text(std::string& out) {
    std::string_view v;
    if (!len(v))
      return false;
    out.assign(v.data(), v.size());
    return true;
  }
  /// A uid, or a text only one object holds (its name: a shared_string's block of its own).
  template <class T>
  requires std::same_as<T, sch::object_uid> || std::same_as<T, sch::shared_string>
  bool text(T& out) {
    std::string_view v;
    if (!len(v))
      return false;
    out = T(v);
    return true;
  }
  /// Through `names`: a name many records repeat (a namespace, a node) shares one block.
  bool text(sch::shared_string& out, sch::shared_string_pool& names) {
    std::string_view v;
    if (!len(v))
      return false;
    out = names.share(v);
    return true;
  }
};

bool malformed(std::string& error, std::string_view what, std::size_t size) {
  return fail(error, "not a valid " + std::string(what) + " (" + std::to_string(size) + " bytes)");
}

// Label {1: key, 2: value}.
bool wire_label(std::string_view bytes, std::string_view& key, std::string_view& value) {
  wire_reader r(bytes);
  key = value = {};
  while (!r.done()) {
    uint32_t field = 0;
    int type = 0;
    if (!r.tag(field, type))
      return false;
    field_reader f{r, type};
    bool ok = field == 1 ? f.len(key) : field == 2 ? f.len(value) : r.skip(type);
    if (!ok)
      return false;
  }
  return true;
}

// The labels (or annotations) of one ObjectMeta being read: views into the record, built into
// a label_set when the ObjectMeta ends.
struct wire_labels {
  sch::label_set::builder pairs;
  std::string_view previous;
  bool first = true;  // No pair added yet.
};

bool wire_add_label(std::string_view bytes, wire_labels& state, std::string_view field,
                    std::string& error, bool& malformed_input) {
  std::string_view key, value;
  if (!wire_label(bytes, key, value)) {
    malformed_input = true;
    return false;
  }
  if (!state.first && !(state.previous < key))
    return fail(error, std::string(field) + ": keys not sorted or repeated at \"" +
                           std::string(key) + "\"");
  state.first = false;
  state.previous = key;
  state.pairs.add(key, value);
  return true;
}

// A record's ObjectMeta normally comes once; protobuf would append the labels of a second one.
// Records come in key order, so a job task's pods come one after another with the same sets
// but for their index: build_sharing() shares the previous pod's block or stores only the pair
// that differs (scheduler/model.hpp).
void wire_take_labels(wire_labels& state, sch::label_set& out) {
  if (state.first)
    return;
  if (out.empty()) {
    out = state.pairs.build_sharing();
    return;
  }
  sch::label_set::builder merged(out);
  for (auto e : state.pairs.build().entries())
    merged.add(e.first, e.second);
  out = merged.build();
}

// ObjectMeta. `malformed_input` tells a wire error (reported as "not a valid PodRecord") from a
// model error (reported with its field). The namespace is shared through `names`.
bool wire_meta(std::string_view bytes, sch::object_meta& out, std::string& error,
               bool& malformed_input, sch::shared_string_pool& names) {
  wire_reader r(bytes);
  // Kept per thread: their lists keep their capacity from one record to the next.
  thread_local wire_labels labels_scratch, annotations_scratch;
  auto& labels = labels_scratch;
  auto& annotations = annotations_scratch;
  labels.previous = annotations.previous = {};
  labels.first = annotations.first = true;
  labels.pairs.clear(); // A record refused halfway left its views behind.
  annotations.pairs.clear();
  while (!r.done()) {
    uint32_t field = 0;
    int type = 0;
    if (!r.tag(field, type))
      return malformed_input = true, false;
    field_reader f{r, type};
    bool ok = true;
    std::string_view v;
    int64_t ns = 0;
    uint64_t u = 0;
    switch (field) {
      case 1:
        ok = f.text(out.name);
        break;
      case 2:
        ok = f.text(out.namespace_name, names);
        break;
      case 3:
        ok = f.text(out.uid);
        break;
      case 4:
        if (!f.len(v))
          return malformed_input = true, false;
        if (!wire_add_label(v, labels, "labels", error, malformed_input))
          return malformed_input ? false : nest(error, "meta.");
        break;
      case 5:
        if (!f.len(v))
          return malformed_input = true, false;
        if (!wire_add_label(v, annotations, "annotations", error, malformed_input))
          return malformed_input ? false : nest(error, "meta.");
        break;
      case 6:
        ok = f.i64(ns);
        out.creation_time = from_ns(ns);
        break;
      case 7:
        ok = f.u64(u);
        out.resource_version = u;
        break;
      default:
        ok = r.skip(type);
    }
    if (!ok)
      return malformed_input = true, false;
  }
  wire_take_labels(labels, out.labels);
  wire_take_labels(annotations, out.annotations);
  return true;
}

// Resources, with decode_resources' checks.
bool wire_resources(std::string_view bytes, sch::resources& out, std::string& error,
                    bool& malformed_input) {
  wire_reader r(bytes);
  while (!r.done()) {
    uint32_t field = 0;
    int type = 0;
    if (!r.tag(field, type))
      return malformed_input = true, false;
    field_reader f{r, type};
    bool ok = true;
    switch (field) {
      case 1:
        ok = f.i64(out.cpu_milli);
        break;
      case 2:
        ok = f.i64(out.memory_bytes);
        break;
      case 3:
        ok = f.i64(out.ephemeral_bytes);
        break;
      case 4:
        ok = f.i64(out.pods);
        break;
      case 5: {
        std::string_view amount_bytes;
        if (!f.len(amount_bytes))
          return malformed_input = true, false;
        wire_reader a(amount_bytes);
        std::string_view name;
        int64_t amount = 0;
        while (!a.done()) {
          uint32_t af = 0;
          int at = 0;
          if (!a.tag(af, at))
            return malformed_input = true, false;
          field_reader g{a, at};
          bool aok = af == 1 ? g.len(name) : af == 2 ? g.i64(amount) : a.skip(at);
          if (!aok)
            return malformed_input = true, false;
        }
        std::string n(name);
        if (n.empty())
          return fail(error, "extended: empty resource name");
        if (sch::is_standard_resource(n))
          return fail(error, "extended: standard resource \"" + n + "\" listed as extended");
        if (amount == 0)
          return fail(error, "extended: zero amount for \"" + n + "\"");
        auto handle = sch::resource_name::intern(n);
        if (!handle)
          return fail(error, "extended: cannot intern resource name \"" + n +
                                 "\" (too many distinct extended resources)");
        if (out.get(*handle) != 0)
          return fail(error, "extended: \"" + n + "\" listed twice");
        out.set(*handle, amount);
        break;
      }
      default:
        ok = r.skip(type);
    }
    if (!ok)
      return malformed_input = true, false;
  }
  return true;
}

} // namespace

// ------------------------------------------------------------------------------------------------
// Keys and encoding

std::string key_of(const scheduler::node& n) {
  return object_key(n.meta.namespace_name, n.meta.name);
}
std::string key_of(const queue_record& q) {
  return object_key(q.queue.meta.namespace_name, q.queue.meta.name);
}
std::string key_of(const pod_group_record& g) {
  return object_key(g.group.meta.namespace_name, g.group.meta.name);
}
std::string key_of(const scheduler::pod& p) {
  return object_key(p.meta.namespace_name, p.meta.name);
}
std::string key_of(const job_record& j) {
  return object_key(j.job.meta.namespace_name, j.job.meta.name);
}
std::string key_of(const scheduler::priority_class& c) {
  return object_key(c.meta.namespace_name, c.meta.name);
}

std::string encode(const scheduler::node& n) {
  v1::NodeRecord r;
  r.set_record_version(record_version);
  encode_meta(n.meta, r.mutable_meta());
  encode_resources(n.allocatable, r.mutable_allocatable());
  for (const auto& t : n.taints) {
    auto* m = r.add_taints();
    assign(m->mutable_key(), t.key);
    assign(m->mutable_value(), t.value);
    m->set_effect(static_cast<v1::TaintEffect>(to_record(t.effect)));
  }
  r.set_unschedulable(n.unschedulable);
  return serialize(r);
}

std::string encode(const queue_record& rec) {
  const auto& q = rec.queue;
  v1::QueueRecord r;
  r.set_record_version(record_version);
  encode_meta(q.meta, r.mutable_meta());
  r.set_weight(q.weight);
  encode_limit(q.capability, r.mutable_capability());
  encode_resources(q.guarantee, r.mutable_guarantee());
  encode_limit(q.deserved, r.mutable_deserved());
  r.set_reclaimable(q.reclaimable);
  r.set_state(static_cast<v1::QueueState>(to_record(q.state)));
  assign(r.mutable_parent(), q.parent);
  r.set_priority(q.priority);
  return serialize(r);
}

std::string encode(const scheduler::priority_class& c) {
  v1::PriorityClassRecord r;
  r.set_record_version(record_version);
  encode_meta(c.meta, r.mutable_meta());
  r.set_value(c.value);
  r.set_global_default(c.global_default);
  assign(r.mutable_description(), c.description);
  r.set_preemption_policy(static_cast<v1::PreemptionPolicy>(to_record(c.preemption)));
  return serialize(r);
}

std::string encode(const pod_group_record& rec) {
  const auto& g = rec.group;
  v1::PodGroupRecord r;
  r.set_record_version(record_version);
  encode_meta(g.meta, r.mutable_meta());
  r.set_min_member(g.min_member);
  for (const auto& m : g.min_task_member) {
    auto* t = r.add_min_task_member();
    assign(t->mutable_role(), m.role);
    t->set_min(m.min);
  }
  encode_resources(g.min_resources, r.mutable_min_resources());
  assign(r.mutable_queue(), g.queue);
  assign(r.mutable_priority_class_name(), g.priority_class_name);
  r.set_priority(g.priority);
  return serialize(r);
}

namespace {

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// Bytes of a length-delimited field: tag, length, then the caller appends `size` bytes.
void put_length_prefix(std::string& out, uint32_t field, std::size_t size) {
  put_varint(out, (uint64_t{field} << 3) | 2);
  put_varint(out, size);
}

// Pod records, written straight from the model in the wire format: every pod created costs one,
// and building a v1::PodRecord first (a message per label, a copy of every string, then freeing
// it all) was most of the cost. The bytes are exactly what protobuf writes for the same record
// (fields in number order, proto3 defaults left out, `meta` and `requests` always present as
// encode_pod_body sets them); detail::reference_encode_pod keeps the generated path, and a test
// compares the two on random pods.
class pod_writer {
 public:
  // The record into `out` (replacing what it held). The body is built in a buffer this writer
  // keeps, as its length prefix comes before it.
  void record(const sch::pod& p, std::string& out) {
    body_.clear();
    pod(p, body_);
    out.clear();
    out.reserve(body_.size() + 16);
    put_varint_field(out, 1, record_version);
    put_bytes(out, 2, body_, true);
  }

 private:
  static void put_varint_field(std::string& out, uint32_t field, uint64_t v) {
    if (v == 0)
      return;
    put_varint(out, uint64_t{field} << 3);
    put_varint(out, v);
  }
  static void put_signed(std::string& out, uint32_t field, int64_t v) {
    put_varint_field(out, field, static_cast<uint64_t>(v));
  }
  // A bytes field; proto3 leaves an empty one out unless it is `optional` and present.
  static void put_bytes(std::string& out, uint32_t field, std::string_view v, bool always = false) {
    if (v.empty() && !always)
      return;
    put_length_prefix(out, field, v.size());
    out.append(v);
  }

  void labels(const sch::label_set& set, uint32_t field, std::string& out) {
    for (const auto& [key, value] : set.entries()) {
      scratch_.clear();
      put_bytes(scratch_, 1, key);
      put_bytes(scratch_, 2, value);
      put_bytes(out, field, scratch_, true);
    }
  }

  void meta(const sch::object_meta& m, std::string& out) {
    put_bytes(out, 1, m.name);
    put_bytes(out, 2, m.namespace_name);
    sch::object_uid::text_buffer uid;
    put_bytes(out, 3, m.uid.text(uid));
    labels(m.labels, 4, out);
    labels(m.annotations, 5, out);
    put_signed(out, 6, to_ns(m.creation_time));
    put_varint_field(out, 7, m.resource_version);
  }

  void resources(const sch::resources& r, std::string& out) {
    put_signed(out, 1, r.cpu_milli);
    put_signed(out, 2, r.memory_bytes);
    put_signed(out, 3, r.ephemeral_bytes);
    put_signed(out, 4, r.pods);
    for (const auto& e : r.extended()) {
      scratch_.clear();
      put_bytes(scratch_, 1, e.name.str());
      put_signed(scratch_, 2, e.amount);
      put_bytes(out, 5, scratch_, true);
    }
  }

  // Serialized on their own (equal constraints give equal bytes, which loading shares). The pods
  // of one task share one constraints object: its bytes are kept for the next pod.
  const std::string& constraints(const std::shared_ptr<const sch::placement_constraints>& c) {
    if (c != last_constraints_) {
      v1::PlacementConstraints m;
      encode_constraints(*c, &m);
      last_constraints_bytes_ = serialize(m);
      last_constraints_ = c;
    }
    return last_constraints_bytes_;
  }

  void pod(const sch::pod& p, std::string& out) {
    std::string m;
    meta(p.meta, m);
    put_bytes(out, 1, m, true);
    put_bytes(out, 2, p.group);
    put_bytes(out, 3, p.role);
    std::string r;
    resources(p.requests, r);
    put_bytes(out, 4, r, true);
    put_signed(out, 5, p.priority);
    put_bytes(out, 6, p.priority_class_name);
    put_bytes(out, 7, p.scheduler_name);
    if (p.constraints)
      put_bytes(out, 8, constraints(p.constraints), true);
    if (p.spec_json)
      put_bytes(out, 9, p.spec_json, true);
    put_varint_field(out, 10, static_cast<uint64_t>(to_record(p.phase)));
    put_bytes(out, 11, p.node_name);
    put_signed(out, 12, to_ns(p.start_time));
    put_signed(out, 13, to_ns(p.finish_time));
    put_varint_field(out, 15, p.restart_count);
  }

  std::string body_;
  std::string scratch_;
  std::shared_ptr<const sch::placement_constraints> last_constraints_;
  std::string last_constraints_bytes_;
};

} // namespace

void encode(const scheduler::pod& p, std::string& out) {
  // One writer per thread keeps its scratch buffer and the last constraints' bytes.
  thread_local pod_writer writer;
  writer.record(p, out);
}

std::string encode(const scheduler::pod& p) {
  std::string out;
  encode(p, out);
  return out;
}

namespace detail {
std::string reference_encode_pod(const scheduler::pod& p) {
  v1::PodRecord r;
  r.set_record_version(record_version);
  encode_pod_body(p, r.mutable_pod());
  return serialize(r);
}
} // namespace detail

// Written by hand rather than through v1::PodRecord: this runs for every binding and every phase
// change, and the message is six fields. Every field is written even when zero, so the update
// sets the state whatever the record held before (protobuf keeps the last value of a scalar).
std::string encode_pod_state(const scheduler::pod_runtime& p) {
  std::string out;
  encode_pod_state(p, out);
  return out;
}

void encode_pod_state(const scheduler::pod_runtime& p, std::string& out) {
  // PodRecord { 2: Pod { 1: ObjectMeta { 7: resource_version }, 10: phase, 11: node_name,
  // 12: start, 13: finish, 15: restart_count } }, written into one string: the lengths are known
  // up front. Every tag is one byte (fields below 16).
  auto varint_size = [](uint64_t v) -> std::size_t {
    return google::protobuf::io::CodedOutputStream::VarintSize64(v);
  };
  const auto version = p.resource_version;
  const auto phase = static_cast<uint64_t>(to_record(p.phase));
  const auto start = static_cast<uint64_t>(to_ns(p.start_time));
  const auto finish = static_cast<uint64_t>(to_ns(p.finish_time));
  const uint64_t restarts = p.restart_count;
  const std::size_t meta = 1 + varint_size(version);
  const std::size_t body = 1 + varint_size(meta) + meta + 1 + varint_size(phase) + 1 +
                           varint_size(p.node_name.size()) + p.node_name.size() + 1 +
                           varint_size(start) + 1 + varint_size(finish) + 1 +
                           varint_size(restarts);
  out.clear();
  out.reserve(1 + varint_size(body) + body);
  put_length_prefix(out, 2, body);
  put_length_prefix(out, 1, meta);
  put_varint(out, (7 << 3) | 0);
  put_varint(out, version);
  put_varint(out, (10 << 3) | 0);
  put_varint(out, phase);
  put_length_prefix(out, 11, p.node_name.size());
  out += p.node_name;
  put_varint(out, (12 << 3) | 0);
  put_varint(out, start);
  put_varint(out, (13 << 3) | 0);
  put_varint(out, finish);
  put_varint(out, (15 << 3) | 0);
  put_varint(out, restarts);
}

std::string encode_pod_tombstone(uint64_t resource_version) {
  // PodRecord { 2: Pod { 1: ObjectMeta { 7: resource_version }, 14: true } }.
  const std::size_t meta =
      1 + google::protobuf::io::CodedOutputStream::VarintSize64(resource_version);
  const std::size_t body = 1 + 1 + meta + 2;  // meta's tag and length (< 128), field 14.
  std::string out;
  put_length_prefix(out, 2, body);
  put_length_prefix(out, 1, meta);
  put_varint(out, (7 << 3) | 0);
  put_varint(out, resource_version);
  put_varint(out, (14 << 3) | 0);
  put_varint(out, 1);
  return out;
}

std::string encode(const job_record& rec) {
  const auto& j = rec.job;
  v1::JobRecord r;
  r.set_record_version(record_version);
  encode_meta(j.meta, r.mutable_meta());
  assign(r.mutable_queue(), j.queue);
  assign(r.mutable_scheduler_name(), j.scheduler_name);
  assign(r.mutable_priority_class_name(), j.priority_class_name);
  r.set_priority(j.priority);
  if (j.min_available)
    r.set_min_available(*j.min_available);
  r.set_max_retry(j.max_retry);
  for (const auto& t : j.tasks) {
    auto* m = r.add_tasks();
    assign(m->mutable_name(), t.name);
    m->set_replicas(t.replicas);
    if (t.min_available)
      m->set_min_available(*t.min_available);
    encode_pod_body(t.pod_template, m->mutable_pod_template());
    encode_policies(t.policies, m->mutable_policies());
    if (t.max_retry)
      m->set_max_retry(*t.max_retry);
    for (const auto& d : t.depends_on)
      assign(m->add_depends_on(), d);
    if (!t.depends_on_iteration.empty())
      assign(m->mutable_depends_on_iteration(), t.depends_on_iteration);
  }
  for (const auto& v : j.volumes) {
    auto* m = r.add_volumes();
    assign(m->mutable_mount_path(), v.mount_path);
    assign(m->mutable_volume_claim_name(), v.volume_claim_name);
    m->set_has_volume_claim(v.has_volume_claim);
  }
  if (j.min_success)
    r.set_min_success(*j.min_success);
  if (j.ttl_seconds_after_finished)
    r.set_ttl_seconds_after_finished(*j.ttl_seconds_after_finished);
  if (j.expansion_version != 0)
    r.set_expansion_version(j.expansion_version);
  encode_policies(j.policies, r.mutable_policies());
  for (const auto& [name, args] : j.plugins) {
    auto* m = r.add_plugins();
    assign(m->mutable_name(), name);
    for (const auto& a : args)
      assign(m->add_args(), a);
  }
  r.set_suspended(j.suspended);
  if (j.spec_json)
    assign(r.mutable_spec_json(), j.spec_json);
  encode_status(rec.status, r.mutable_status());
  return serialize(r);
}

// ------------------------------------------------------------------------------------------------
// Decoding

struct record_decoder::impl {
  // Reused between calls: parsing into a cleared message keeps its allocations.
  v1::NodeRecord node;
  v1::QueueRecord queue;
  v1::PriorityClassRecord priority_class;
  v1::PodGroupRecord group;
  v1::JobRecord job;
  v1::PlacementConstraints constraints_message;

  // Constraints by their serialized bytes.
  std::unordered_map<std::string, std::shared_ptr<const sch::placement_constraints>, text_hash,
                     std::equal_to<>>
      constraints;
  // spec_json texts by content.
  sch::shared_string_pool texts;

  // The last hit of each table: pods arrive in key order, so neighbours usually come from one
  // template, and comparing with the last hit is cheaper than hashing a kilobyte of JSON.
  const std::string* last_constraints_key = nullptr;
  std::shared_ptr<const sch::placement_constraints> last_constraints;
  sch::shared_string last_text;

  // A pod's four names (shared_string.hpp): the pods of a task share their blocks. The last value
  // of each field is checked first, as above; the pool catches the rest (a role in every gang),
  // and is asked directly for a pod's namespace and node name.
  sch::shared_string_pool names;
  sch::shared_string last_group, last_role, last_priority_class, last_scheduler;

  void share_name(std::string_view text, sch::shared_string& last, sch::shared_string& out) {
    if (last != text)
      last = names.share(text);
    out = last;
  }
  // The same for a record's length-delimited field; false when it is malformed.
  bool share_name(field_reader& f, sch::shared_string& last, sch::shared_string& out) {
    std::string_view v;
    if (!f.len(v))
      return false;
    share_name(v, last, out);
    return true;
  }

  bool shared_constraints(std::string_view bytes,
                          std::shared_ptr<const sch::placement_constraints>& out,
                          std::string& error) {
    if (last_constraints_key != nullptr && *last_constraints_key == bytes) {
      out = last_constraints;
      return true;
    }
    if (auto it = constraints.find(bytes); it != constraints.end()) {
      last_constraints_key = &it->first;
      last_constraints = it->second;
      out = it->second;
      return true;
    }
    if (!parse(constraints_message, bytes, error))
      return false;
    auto decoded = std::make_shared<sch::placement_constraints>();
    if (!decode_constraints(constraints_message, *decoded, error))
      return false;
    out = decoded;
    constraints.emplace(std::string(bytes), std::move(decoded));
    return true;
  }

  sch::shared_string shared_text(std::string_view text) {
    if (last_text && last_text == text)
      return last_text;
    return last_text = texts.share(text);
  }

  bool decode_pod_record(std::string_view bytes, sch::pod& out, std::string& error);
  bool decode_pod_fields(std::string_view body, std::size_t record_size, sch::pod& out,
                         std::string& error);
  /// `deleted` non-null: the update may be a tombstone (Pod.deleted), which sets it.
  bool apply_pod_state(std::string_view update, std::size_t record_size, sch::pod& out,
                       std::string& error, bool* deleted = nullptr);

  bool decode_pod_body(v1::Pod& in, sch::pod& out, std::string& error) {
    if (!decode_meta(*in.mutable_meta(), out.meta, error, &names))
      return false;
    share_name(in.group(), last_group, out.group);
    share_name(in.role(), last_role, out.role);
    if (!decode_resources(in.requests(), out.requests, error))
      return nest(error, "requests.");
    out.priority = in.priority();
    share_name(in.priority_class_name(), last_priority_class, out.priority_class_name);
    share_name(in.scheduler_name(), last_scheduler, out.scheduler_name);
    if (in.has_constraints() && !shared_constraints(in.constraints(), out.constraints, error))
      return nest(error, "constraints.");
    if (in.has_spec_json())
      out.spec_json = shared_text(in.spec_json());
    if (!decode_enum(in.phase(), sch::pod_phase_last, out.phase, "phase", error))
      return false;
    out.node_name = names.share(in.node_name());
    out.start_time = from_ns(in.start_time_ns());
    out.finish_time = from_ns(in.finish_time_ns());
    out.restart_count = sch::add_restarts(0, in.restart_count());
    return true;
  }
};

bool record_decoder::impl::decode_pod_record(std::string_view bytes, sch::pod& out,
                                             std::string& error) {
  // PodRecord {1: record_version, 2: pod}, followed by the state updates appended to it
  // (encode_pod_state): more occurrences of field 2, which protobuf merges into the first.
  wire_reader r(bytes);
  uint64_t version = 0;
  std::string_view body;
  bool has_body = false;
  bool has_updates = false;
  while (!r.done()) {
    uint32_t field = 0;
    int type = 0;
    if (!r.tag(field, type))
      return malformed(error, "PodRecord", bytes.size());
    field_reader f{r, type};
    bool ok = true;
    if (field == 1) {
      ok = f.u64(version);
    } else if (field == 2) {
      std::string_view v;
      ok = f.len(v);
      if (has_body)
        has_updates = true;
      else
        body = v;
      has_body = true;
    } else {
      ok = r.skip(type);
    }
    if (!ok)
      return malformed(error, "PodRecord", bytes.size());
  }
  if (!check_version(static_cast<uint32_t>(version), error))
    return false;
  if (!decode_pod_fields(body, bytes.size(), out, error))
    return false;
  if (!has_updates)
    return true;
  // Apply the updates in order: every occurrence of field 2 after the first (the walk above
  // already checked the framing).
  wire_reader again(bytes);
  bool first = true;
  while (!again.done()) {
    uint32_t field = 0;
    int type = 0;
    again.tag(field, type);
    field_reader f{again, type};
    if (field != 2) {
      again.skip(type);
      continue;
    }
    std::string_view v;
    f.len(v);
    if (!first && !apply_pod_state(v, bytes.size(), out, error))
      return false;
    first = false;
  }
  return true;
}

namespace {

// Fields 10-13 and 15 of Pod, the runtime state, which a record's body and a state update both
// carry.
// False for any other field; `ok` says whether the field was well formed. The node name is shared
// through `names`: a node's pods name it.
bool read_state_field(uint32_t field, field_reader& f, sch::pod& out, int64_t& phase, bool& ok,
                      sch::shared_string_pool& names) {
  int64_t ns = 0;
  switch (field) {
    case 10:
      ok = f.i64(phase);
      phase = static_cast<int32_t>(static_cast<uint32_t>(phase)); // An enum is an int32.
      return true;
    case 11:
      ok = f.text(out.node_name, names);
      return true;
    case 12:
      ok = f.i64(ns);
      out.start_time = from_ns(ns);
      return true;
    case 13:
      ok = f.i64(ns);
      out.finish_time = from_ns(ns);
      return true;
    case 15: {
      uint64_t restarts = 0;
      ok = f.u64(restarts);
      // A uint32 on the wire; the model holds up to 65535 (pod::restart_count).
      out.restart_count = sch::add_restarts(0, static_cast<int64_t>(std::min<uint64_t>(
                                                   restarts, std::numeric_limits<uint16_t>::max())));
      return true;
    }
    default:
      return false;
  }
}

} // namespace

// A state update (encode_pod_state): only meta.resource_version, phase, node name, times and the
// restart count. An update carrying any other field is refused: merging it would need protobuf's
// rules for repeated and message fields, which nothing writes.
bool record_decoder::impl::apply_pod_state(std::string_view update, std::size_t record_size,
                                           sch::pod& out, std::string& error, bool* deleted) {
  wire_reader p(update);
  int64_t phase = -1;
  while (!p.done()) {
    uint32_t field = 0;
    int type = 0;
    if (!p.tag(field, type))
      return malformed(error, "PodRecord", record_size);
    field_reader f{p, type};
    bool ok = true;
    std::string_view v;
    switch (field) {
      case 1: {
        if (!f.len(v))
          return malformed(error, "PodRecord", record_size);
        wire_reader m(v);
        while (ok && !m.done()) {
          uint32_t mf = 0;
          int mt = 0;
          uint64_t u = 0;
          if (!m.tag(mf, mt))
            return malformed(error, "PodRecord", record_size);
          field_reader g{m, mt};
          if (mf != 7)
            return fail(error, "pod state update: meta field " + std::to_string(mf) +
                                   " (an update holds only resource_version)");
          ok = g.u64(u);
          out.meta.resource_version = u;
        }
        break;
      }
      case 14: {
        uint64_t flag = 0;
        if (deleted == nullptr)
          return fail(error, "pod state update: a deletion (field 14) in the record of a pod "
                             "that is stored as its own record");
        ok = f.u64(flag);
        *deleted = *deleted || flag != 0;
        break;
      }
      default:
        if (read_state_field(field, f, out, phase, ok, names))
          break;
        return fail(error, "pod state update: field " + std::to_string(field) +
                               " (an update holds only the phase, node name, times, restart "
                               "count and resource_version)");
    }
    if (!ok)
      return malformed(error, "PodRecord", record_size);
  }
  if (phase == -1)
    return true;
  return decode_enum(static_cast<int>(phase), sch::pod_phase_last, out.phase, "phase", error);
}

bool record_decoder::impl::decode_pod_fields(std::string_view body, std::size_t record_size,
                                             sch::pod& out, std::string& error) {
  wire_reader p(body);
  bool seen_meta = false, seen_requests = false, malformed_input = false;
  int64_t phase = 0;
  while (!p.done()) {
    uint32_t field = 0;
    int type = 0;
    if (!p.tag(field, type))
      return malformed(error, "PodRecord", record_size);
    field_reader f{p, type};
    bool ok = true;
    std::string_view v;
    switch (field) {
      case 1:
        if (seen_meta || !f.len(v))
          return malformed(error, "PodRecord", record_size);
        seen_meta = true;
        if (!wire_meta(v, out.meta, error, malformed_input, names))
          return malformed_input ? malformed(error, "PodRecord", record_size) : false;
        break;
      case 2:
        ok = share_name(f, last_group, out.group);
        break;
      case 3:
        ok = share_name(f, last_role, out.role);
        break;
      case 4:
        if (seen_requests || !f.len(v))
          return malformed(error, "PodRecord", record_size);
        seen_requests = true;
        if (!wire_resources(v, out.requests, error, malformed_input))
          return malformed_input ? malformed(error, "PodRecord", record_size)
                                 : nest(error, "requests.");
        break;
      case 5:
        ok = f.i32(out.priority);
        break;
      case 6:
        ok = share_name(f, last_priority_class, out.priority_class_name);
        break;
      case 7:
        ok = share_name(f, last_scheduler, out.scheduler_name);
        break;
      case 8:
        if (!f.len(v))
          return malformed(error, "PodRecord", record_size);
        if (!shared_constraints(v, out.constraints, error))
          return nest(error, "constraints.");
        break;
      case 9:
        if (!f.len(v))
          return malformed(error, "PodRecord", record_size);
        out.spec_json = shared_text(v);
        break;
      default:
        if (!read_state_field(field, f, out, phase, ok, names))
          ok = p.skip(type);
    }
    if (!ok)
      return malformed(error, "PodRecord", record_size);
  }
  return decode_enum(static_cast<int>(phase), sch::pod_phase_last, out.phase, "phase", error);
}

record_decoder::record_decoder() : impl_(std::make_unique<impl>()) {}
record_decoder::~record_decoder() = default;
record_decoder::record_decoder(record_decoder&&) noexcept = default;
record_decoder& record_decoder::operator=(record_decoder&&) noexcept = default;

std::size_t record_decoder::distinct_constraints() const noexcept {
  return impl_->constraints.size();
}
std::size_t record_decoder::distinct_spec_json() const noexcept {
  return impl_->texts.size();
}

namespace {

status corrupt(std::string error) {
  return {errc::corruption, std::move(error)};
}

template <class T, class Decode>
result<T> decode_value(std::string_view bytes, Decode&& decode) {
  T out;
  if (auto s = decode(bytes, out); !s.ok())
    return s;
  return out;
}

} // namespace

status record_decoder::decode(std::string_view bytes, scheduler::node& out) {
  auto& in = impl_->node;
  std::string error;
  if (!parse(in, bytes, error) || !check_version(in.record_version(), error))
    return corrupt(std::move(error));
  out = sch::node{};
  if (!decode_meta(*in.mutable_meta(), out.meta, error))
    return corrupt(std::move(error));
  if (!decode_resources(in.allocatable(), out.allocatable, error))
    return corrupt("allocatable." + error);
  out.taints.reserve(static_cast<std::size_t>(in.taints_size()));
  int i = 0;
  for (auto& t : *in.mutable_taints()) {
    auto& taint = out.taints.emplace_back();
    taint.key = take(t.mutable_key());
    taint.value = take(t.mutable_value());
    if (!decode_enum(t.effect(), sch::taint_effect_last, taint.effect, "effect", error))
      return corrupt(indexed("taints", i) + error);
    ++i;
  }
  out.unschedulable = in.unschedulable();
  return {};
}

status record_decoder::decode(std::string_view bytes, queue_record& rec) {
  auto& in = impl_->queue;
  std::string error;
  if (!parse(in, bytes, error) || !check_version(in.record_version(), error))
    return corrupt(std::move(error));
  rec = queue_record{};
  auto& out = rec.queue;
  if (!decode_meta(*in.mutable_meta(), out.meta, error))
    return corrupt(std::move(error));
  out.weight = in.weight();
  if (!decode_limit(in.capability(), out.capability, error))
    return corrupt("capability." + error);
  if (!decode_resources(in.guarantee(), out.guarantee, error))
    return corrupt("guarantee." + error);
  if (!decode_limit(in.deserved(), out.deserved, error))
    return corrupt("deserved." + error);
  out.reclaimable = in.reclaimable();
  if (!decode_enum(in.state(), sch::queue_state_last, out.state, "state", error))
    return corrupt(std::move(error));
  out.parent = take(in.mutable_parent());
  out.priority = in.priority();
  return {};
}

status record_decoder::decode(std::string_view bytes, sch::priority_class& out) {
  auto& in = impl_->priority_class;
  std::string error;
  if (!parse(in, bytes, error) || !check_version(in.record_version(), error))
    return corrupt(std::move(error));
  out = sch::priority_class{};
  if (!decode_meta(*in.mutable_meta(), out.meta, error))
    return corrupt(std::move(error));
  out.value = in.value();
  out.global_default = in.global_default();
  out.description = take(in.mutable_description());
  if (!decode_enum(in.preemption_policy(), sch::preemption_policy_last, out.preemption,
                   "preemption_policy", error))
    return corrupt(std::move(error));
  return {};
}

status record_decoder::decode(std::string_view bytes, pod_group_record& rec) {
  auto& in = impl_->group;
  std::string error;
  if (!parse(in, bytes, error) || !check_version(in.record_version(), error))
    return corrupt(std::move(error));
  rec = pod_group_record{};
  auto& out = rec.group;
  if (!decode_meta(*in.mutable_meta(), out.meta, error))
    return corrupt(std::move(error));
  out.min_member = in.min_member();
  out.min_task_member.reserve(static_cast<std::size_t>(in.min_task_member_size()));
  for (auto& m : *in.mutable_min_task_member())
    out.min_task_member.push_back({take(m.mutable_role()), m.min()});
  if (!decode_resources(in.min_resources(), out.min_resources, error))
    return corrupt("min_resources." + error);
  out.queue = take(in.mutable_queue());
  out.priority_class_name = take(in.mutable_priority_class_name());
  out.priority = in.priority();
  if (auto sla = scheduler::read_sla_waiting_time(out.meta); sla && *sla)
    out.sla_waiting_time = **sla;
  return {};
}

status record_decoder::decode(std::string_view bytes, scheduler::pod& out) {
  std::string error;
  out = sch::pod{};
  if (!impl_->decode_pod_record(bytes, out, error))
    return corrupt(std::move(error));
  return {};
}

status record_decoder::decode(std::string_view bytes, job_record& rec) {
  auto& in = impl_->job;
  std::string error;
  if (!parse(in, bytes, error) || !check_version(in.record_version(), error))
    return corrupt(std::move(error));
  rec = job_record{};
  auto& out = rec.job;
  if (!decode_meta(*in.mutable_meta(), out.meta, error))
    return corrupt(std::move(error));
  out.queue = take(in.mutable_queue());
  out.scheduler_name = take(in.mutable_scheduler_name());
  out.priority_class_name = take(in.mutable_priority_class_name());
  out.priority = in.priority();
  if (in.has_min_available())
    out.min_available = in.min_available();
  out.max_retry = in.max_retry();
  out.tasks.reserve(static_cast<std::size_t>(in.tasks_size()));
  int i = 0;
  for (auto& m : *in.mutable_tasks()) {
    auto& t = out.tasks.emplace_back();
    t.name = take(m.mutable_name());
    t.replicas = m.replicas();
    if (m.has_min_available())
      t.min_available = m.min_available();
    if (!impl_->decode_pod_body(*m.mutable_pod_template(), t.pod_template, error))
      return corrupt(indexed("tasks", i) + "pod_template." + error);
    decode_policies(*m.mutable_policies(), t.policies);
    if (m.has_max_retry())
      t.max_retry = m.max_retry();
    for (auto& d : *m.mutable_depends_on())
      t.depends_on.push_back(take(&d));
    t.depends_on_iteration = take(m.mutable_depends_on_iteration());
    ++i;
  }
  for (auto& m : *in.mutable_volumes())
    out.volumes.push_back(
        {take(m.mutable_mount_path()), take(m.mutable_volume_claim_name()), m.has_volume_claim()});
  if (in.has_min_success())
    out.min_success = in.min_success();
  if (in.has_ttl_seconds_after_finished())
    out.ttl_seconds_after_finished = in.ttl_seconds_after_finished();
  if (in.has_expansion_version())
    out.expansion_version = in.expansion_version();
  decode_policies(*in.mutable_policies(), out.policies);
  out.plugins.reserve(static_cast<std::size_t>(in.plugins_size()));
  for (auto& m : *in.mutable_plugins()) {
    auto& [name, args] = out.plugins.emplace_back();
    name = take(m.mutable_name());
    args.reserve(static_cast<std::size_t>(m.args_size()));
    for (auto& a : *m.mutable_args())
      args.push_back(take(&a));
  }
  out.suspended = in.suspended();
  if (in.has_spec_json())
    out.spec_json = impl_->shared_text(in.spec_json());
  if (!decode_status(*in.mutable_status(), rec.status, error))
    return corrupt("status." + error);
  return {};
}

bool record_decoder::holds_only_pod_state(std::string_view bytes) noexcept {
  // A record's first tag is field 1 (record_version, a varint: 0x08); an update's is field 2
  // (its pod, length-delimited: 0x12). The encoders write fields in number order.
  return !bytes.empty() && static_cast<unsigned char>(bytes.front()) == ((2 << 3) | 2);
}

status record_decoder::decode_pod_state(std::string_view bytes, scheduler::pod_runtime& out,
                                        bool& deleted) {
  // The update with the highest resource version wins whole (on a tie, the later one): every
  // update of one pod is minted after the one before, so only an update of an earlier pod of the
  // same name written late can come after a newer one, and it must not undo the newer pod's
  // state (see decode_pod_state in codec.hpp).
  std::string error;
  sch::pod best;
  bool best_deleted = false;
  bool any = false;
  wire_reader r(bytes);
  while (!r.done()) {
    uint32_t field = 0;
    int type = 0;
    if (!r.tag(field, type))
      return corrupt("not a valid pod state update");
    field_reader f{r, type};
    std::string_view update;
    if (field != 2 || !f.len(update))
      return corrupt("pod state update: field " + std::to_string(field) +
                     " (a key without a record holds only state updates, field 2)");
    sch::pod state;
    bool is_tombstone = false;
    if (!impl_->apply_pod_state(update, bytes.size(), state, error, &is_tombstone))
      return corrupt(std::move(error));
    if (any && state.meta.resource_version < best.meta.resource_version)
      continue;
    best = std::move(state);
    best_deleted = is_tombstone;
    any = true;
  }
  deleted = best_deleted;
  out = sch::runtime_of(best);
  return {};
}

namespace detail {

result<scheduler::pod> reference_decode_pod(std::string_view bytes) {
  record_decoder decoder;
  v1::PodRecord in;
  std::string error;
  if (!parse(in, bytes, error) || !check_version(in.record_version(), error))
    return corrupt(std::move(error));
  sch::pod out;
  if (!decoder.impl_->decode_pod_body(*in.mutable_pod(), out, error))
    return corrupt(std::move(error));
  return out;
}

} // namespace detail

result<scheduler::node> record_decoder::decode_node(std::string_view bytes) {
  return decode_value<sch::node>(bytes, [&](auto b, auto& o) { return decode(b, o); });
}
result<queue_record> record_decoder::decode_queue(std::string_view bytes) {
  return decode_value<queue_record>(bytes, [&](auto b, auto& o) { return decode(b, o); });
}
result<pod_group_record> record_decoder::decode_pod_group(std::string_view bytes) {
  return decode_value<pod_group_record>(bytes, [&](auto b, auto& o) { return decode(b, o); });
}
result<scheduler::pod> record_decoder::decode_pod(std::string_view bytes) {
  return decode_value<sch::pod>(bytes, [&](auto b, auto& o) { return decode(b, o); });
}
result<job_record> record_decoder::decode_job(std::string_view bytes) {
  return decode_value<job_record>(bytes, [&](auto b, auto& o) { return decode(b, o); });
}
result<scheduler::priority_class> record_decoder::decode_priority_class(std::string_view bytes) {
  return decode_value<sch::priority_class>(bytes, [&](auto b, auto& o) { return decode(b, o); });
}

} // namespace phalanx::storage
