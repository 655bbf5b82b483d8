#include "actors/kube_world.hpp"

#include "actors/operator_log.hpp"
#include "actors/protocol.hpp"
#include "actors/registry.hpp"

#include "api/codec.hpp"
#include "k8s/lease.hpp"
#include "k8s/operations.hpp"
#include "k8s/reflector.hpp"
#include "scheduler/quantity.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace phalanx::actors {

namespace json = boost::json;

namespace {

using clock_type = std::chrono::steady_clock;

// The collections watched, with what the reflector writes into list items.
struct collection {
  api::resource_kind kind;
  const char* path;
  const char* item_kind;
  const char* api_version;
};
constexpr collection collections[] = {
    {api::resource_kind::node, "/api/v1/nodes", "Node", "v1"},
    {api::resource_kind::queue, "/apis/scheduling.volcano.sh/v1beta1/queues", "Queue",
     "scheduling.volcano.sh/v1beta1"},
    {api::resource_kind::pod_group, "/apis/scheduling.volcano.sh/v1beta1/podgroups", "PodGroup",
     "scheduling.volcano.sh/v1beta1"},
    {api::resource_kind::pod, "/api/v1/pods", "Pod", "v1"},
};

std::string key_of_json(const json::value& v) {
  auto ns = k8s::string_at(v, {"metadata", "namespace"});
  auto name = k8s::string_at(v, {"metadata", "name"});
  return ns.empty() ? name : ns + "/" + name;
}

std::string default_identity() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + "_" + std::to_string(::getpid());
}

// A binding to post: the pod, and where.
struct binding_job {
  uint64_t pod = 0;
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string node;
  int attempts = 0;
  clock_type::time_point not_before{};
};

// A call the apiserver's RBAC refused does not succeed by being tried again: an operator must
// grant its rule. Each refused rule is said as an error naming it (verb, resource, apiGroup),
// whatever level the caller logs its own failure at: at its first refusal, then at most every
// 30 s while the refusals go on (the watches and the election retry every few seconds).
class denial_reporter {
 public:
  /// `call` names what was tried; `failure` is its error text (k8s::denied_call_of reads it).
  /// Thread-safe.
  void operator()(std::string_view call, std::string_view failure) {
    auto d = k8s::denied_call_of(failure);
    if (!d)
      return;
    auto rule = d->verb + " " + d->resource + " " + d->api_group;
    auto now = clock_type::now();
    {
      std::lock_guard lock(mutex_);
      auto [at, fresh] = said_.try_emplace(rule, now);
      if (!fresh && now - at->second < std::chrono::seconds(30))
        return;
      at->second = now;
    }
    oplog::error("forbidden by RBAC: the ClusterRole lacks this rule")
        .kv("verb", d->verb)
        .kv("resource", d->resource)
        .kv("api_group", d->api_group)
        .kv("namespace", d->namespace_name)
        .kv("call", call);
  }

 private:
  std::mutex mutex_;
  std::map<std::string, clock_type::time_point> said_;
};

} // namespace

struct kube_world::impl {
  kubernetes_config config;
  denial_reporter report_denied;
  std::unique_ptr<k8s::client> client;
  std::unique_ptr<k8s::lease_elector> elector;
  registry_actor registry;
  std::function<void(std::string)> on_failure;

  class sink;
  class priority_class_sink;
  class namespace_sink;
  std::vector<std::unique_ptr<k8s::reflector_sink>> sinks;
  std::vector<std::unique_ptr<k8s::reflector>> reflectors;

  std::atomic<bool> stopping{false};
  std::atomic<bool> synced_sent{false};
  std::atomic<bool> lead_sent{false};
  std::thread monitor;

  // The PodGroups as the apiserver last showed them, by key: what a status write puts back.
  std::mutex raw_mutex;
  std::unordered_map<std::string, json::value> raw_groups;
  // Objects that did not decode, by key and resourceVersion: logged and evented once each.
  std::unordered_map<std::string, std::string> undecodable;

  // Bindings.
  std::mutex bind_mutex;
  std::condition_variable bind_cv;
  std::deque<binding_job> bind_queue;
  std::unordered_set<uint64_t> forgotten;
  std::vector<binding_outcome> outcomes;
  std::vector<std::thread> bind_workers;

  // Events and pod conditions, written by their own thread so that a burst of them never holds
  // a Binding back: bounded, the oldest dropped (and counted) when the apiserver cannot keep up.
  struct pod_note {
    std::string namespace_name, name, uid, message;  // PodScheduled=False with this message.
  };
  struct event_note {
    json::value object;  // The object the event is about (apiVersion, metadata).
    std::string kind, type, reason, message;
  };
  std::mutex notes_mutex;
  std::condition_variable notes_cv;
  std::unordered_map<std::string, pod_note> pod_notes;       // Latest per pod key.
  std::unordered_map<std::string, std::string> pod_written;  // Pod key -> message written.
  std::deque<event_note> event_notes;
  static constexpr std::size_t max_event_notes = 10'000;
  /// Preemption: victims to delete and the preemptors' pods to nominate, on the notes thread
  /// (a few per preemption; never dropped). A failed delete is tried again at the next turn.
  std::deque<pod_eviction> evictions;
  std::deque<pod_nomination> nominations;
  std::thread notes_writer;
  api::watch_handle pod_watch;

  // The PodGroups Volcano's pg controller makes for pods of ours that name none (no group-name
  // annotation), made here on the apiserver, under notes_mutex:
  // - a pod with a controller owner (a ReplicaSet's, StatefulSet's, DaemonSet's, batch Job's)
  //   belongs to its owner's, "podgroup-<owner uid>", owned by the owners the pod names, its
  //   minMember from their annotation scheduling.volcano.sh/group-min-member (1 without) and its
  //   minResources that many times one pod's requests. The pod waits for the object: its
  //   minMember is the owner's to say (group_by_owner);
  // - a lone pod gets one of its own, "podgroup-<pod uid>", owned by the pod (the garbage
  //   collector deletes it with the pod); the cache makes the same gang at once, and the object
  //   replaces it when its watch brings it.
  struct group_to_make {
    std::string namespace_name, name;
    std::string pod_name;  // The pod that asked for it first, for logs.
    std::string queue, priority_class;
    json::array owners;    // Its ownerReferences.
    bool by_owner = false; // Read the owners' annotations.
    scheduler::resources requests;  // One pod's.
    clock_type::time_point not_before{};
  };
  std::unordered_map<std::string, group_to_make> groups_to_make;  // By "<ns>/<name>".
  std::unordered_set<std::string> groups_made;  // Keys whose PodGroup exists.
  scheduling_config scheduling;

  // Status writes: the latest status of each PodGroup not written yet, by key.
  std::mutex status_mutex;
  std::condition_variable status_cv;
  std::unordered_map<std::string, api::pod_group_object> status_pending;
  std::unordered_map<std::string, std::string> status_written;  // Key -> status JSON.
  std::unordered_map<std::string, std::string> event_written;   // Key -> last event's text.
  std::thread status_writer;
  api::watch_handle status_watch;
  // Queue status: counted by the registry when read (api::queue_object), so read every
  // queue_status_period and written when it changed.
  api::service* service = nullptr;
  /// Name -> the status JSON last written, and to which object (its uid): a queue deleted and
  /// made again under its name is another object, whose status is written though it reads the
  /// same.
  struct written_status {
    std::string uid;
    std::string text;
  };
  std::unordered_map<std::string, written_status> queue_status_written;
  clock_type::time_point queue_status_due{};
  static constexpr auto queue_status_period = std::chrono::seconds(1);

  std::mutex counters_mutex;
  kube_world_counters counters;
  // The same counts in /metrics (set once by create, read-only after).
  std::vector<std::pair<uint64_t kube_world_counters::*, api::counter*>> metrics;

  bool may_bind() const {
    if (stopping.load())
      return false;
    return elector ? elector->leading_now() : true;
  }

  void count(uint64_t kube_world_counters::*field, uint64_t n = 1) {
    {
      std::lock_guard lock(counters_mutex);
      counters.*field += n;
    }
    for (const auto& [f, metric] : metrics)
      if (f == field)
        metric->inc(n);
  }

  void register_metrics(api::metrics_registry& r) {
    using c = kube_world_counters;
    auto& bindings = r.counter_family("phalanx_kube_bindings_total",
                                      "Bindings to the apiserver by outcome: posted, done (bound, "
                                      "or found bound there), gone (404, another uid), retried, "
                                      "refused (403, 422...), not_leading (I6: not posted).",
                                      {"outcome"});
    auto& writes = r.counter_family(
        "phalanx_kube_writes_total",
        "Writes to the apiserver: podgroup_status, queue_status, pod_condition, event, "
        "lone_pod_podgroup (a PodGroup of one made for a pod with none), owner_podgroup (the "
        "PodGroup of the pods of one owner, a ReplicaSet's...).",
        {"what"});
    metrics = {
        {&c::bindings_posted, &bindings.with({"posted"})},
        {&c::bindings_done, &bindings.with({"done"})},
        {&c::bindings_gone, &bindings.with({"gone"})},
        {&c::bindings_retried, &bindings.with({"retried"})},
        {&c::bindings_refused, &bindings.with({"refused"})},
        {&c::bindings_dropped_not_leading, &bindings.with({"not_leading"})},
        {&c::status_writes, &writes.with({"podgroup_status"})},
        {&c::queue_status_writes, &writes.with({"queue_status"})},
        {&c::lone_groups_created, &writes.with({"lone_pod_podgroup"})},
        {&c::owner_groups_created, &writes.with({"owner_podgroup"})},
        {&c::pod_conditions_written, &writes.with({"pod_condition"})},
        {&c::events_written, &writes.with({"event"})},
        {&c::pods_evicted, &writes.with({"pod_eviction"})},
        {&c::nominations_written, &writes.with({"pod_nomination"})},
        {&c::events_dropped,
         &r.add_counter("phalanx_kube_events_dropped_total",
                        "Events and pod conditions dropped, oldest first, because the apiserver "
                        "could not keep up.")},
        {&c::undecodable_objects,
         &r.add_counter("phalanx_kube_undecodable_objects_total",
                        "Watched objects left out of the cache because they do not decode.")},
    };
  }

  // -- in

  void send_delta(world_delta d) { caf::anon_send(registry, delta_atom::value, std::move(d)); }

  std::optional<api::object> decode(api::resource_kind kind, const json::value& v,
                                    const std::string& resource_version) {
    api::decode_options o;
    o.expected_kind = kind;
    o.read_status = true;
    o.validate = true;
    auto obj = api::decode_object(v, o);
    if (obj)
      return std::move(*obj);
    auto key = key_of_json(v);
    count(&kube_world_counters::undecodable_objects);
    bool fresh = false;
    {
      std::lock_guard lock(raw_mutex);
      auto [i, added] = undecodable.try_emplace(key, resource_version);
      fresh = added || i->second != resource_version;
      i->second = resource_version;
    }
    if (fresh) {
      oplog::warn("object left out: it does not decode")
          .kv("kind", api::to_string(kind))
          .kv("key", key)
          .kv("error", obj.error().message);
      queue_event({v, std::string(k8s::string_at(v, {"kind"})), "Warning", "Invalid",
                   "phalanx cannot read this object, so it does not schedule it: " +
                       obj.error().message});
    }
    return std::nullopt;
  }

  // A minimal object of `kind` naming what `v` names: enough to remove it from the cache.
  static api::object named(api::resource_kind kind, const json::value& v) {
    scheduler::object_meta meta;
    meta.name = k8s::string_at(v, {"metadata", "name"});
    meta.namespace_name = k8s::string_at(v, {"metadata", "namespace"});
    meta.uid = scheduler::object_uid(k8s::string_at(v, {"metadata", "uid"}));
    switch (kind) {
      case api::resource_kind::node: {
        api::node_object o;
        o.node.meta = std::move(meta);
        return o;
      }
      case api::resource_kind::queue: {
        api::queue_object o;
        o.queue.meta = std::move(meta);
        return o;
      }
      case api::resource_kind::pod_group: {
        api::pod_group_object o;
        o.group.meta = std::move(meta);
        return o;
      }
      case api::resource_kind::job: {
        api::job_object o;
        o.job.meta = std::move(meta);
        return o;
      }
      case api::resource_kind::priority_class: {
        api::priority_class_object o;
        o.priority_class.meta = std::move(meta);
        return o;
      }
      case api::resource_kind::pod:
        break;
    }
    api::pod_object o;
    o.pod.meta = std::move(meta);
    return o;
  }

  void remember_group(const json::value& v, bool removed) {
    std::lock_guard lock(raw_mutex);
    auto key = key_of_json(v);
    if (removed)
      raw_groups.erase(key);
    else
      raw_groups[key] = v;
  }

  void check_synced() {
    if (synced_sent.load())
      return;
    for (const auto& r : reflectors)
      if (!r->synced())
        return;
    if (synced_sent.exchange(true))
      return;
    world_delta d;
    d.what = world_delta::type::synced;
    send_delta(std::move(d));
    maybe_lead();
  }

  void maybe_lead() {
    if (!synced_sent.load() || !may_bind() || lead_sent.exchange(true))
      return;
    oplog::info("scheduling: caches synced and this process may bind");
    caf::anon_send(registry, lead_atom::value);
  }

  // -- bindings

  void queue_bindings(const std::string& node, const pod_refs& pods) {
    {
      std::lock_guard lock(bind_mutex);
      for (const auto& p : pods) {
        forgotten.erase(p.id);
        bind_queue.push_back({p.id, p.pod->meta.namespace_name.str(), p.pod->meta.name.str(),
                              p.pod->meta.uid.str(), node, 0, {}});
      }
    }
    bind_cv.notify_all();
  }

  void forget(const std::vector<uint64_t>& ids) {
    std::lock_guard lock(bind_mutex);
    for (auto id : ids)
      forgotten.insert(id);
  }

  void flush_outcomes() {
    std::vector<binding_outcome> out;
    {
      std::lock_guard lock(bind_mutex);
      out.swap(outcomes);
    }
    if (!out.empty())
      caf::anon_send(registry, outcome_atom::value, std::move(out));
  }

  void bind_worker() {
    for (;;) {
      binding_job job;
      {
        std::unique_lock lock(bind_mutex);
        for (;;) {
          if (stopping.load())
            return;
          auto now = clock_type::now();
          auto due = std::find_if(bind_queue.begin(), bind_queue.end(),
                                  [&](const binding_job& j) { return j.not_before <= now; });
          if (due != bind_queue.end()) {
            job = std::move(*due);
            bind_queue.erase(due);
            break;
          }
          bind_cv.wait_for(lock, std::chrono::milliseconds(50));
        }
        if (forgotten.erase(job.pod) != 0)
          continue;  // Deleted meanwhile.
      }
      post(std::move(job));
      bool idle = false;
      {
        std::lock_guard lock(bind_mutex);
        idle = bind_queue.empty() || outcomes.size() >= 256;
      }
      if (idle)
        flush_outcomes();
    }
  }

  void post(binding_job job) {
    // I6: a process that does not hold the lease now never binds, whatever it was told before.
    if (!may_bind()) {
      count(&kube_world_counters::bindings_dropped_not_leading);
      return;
    }
    count(&kube_world_counters::bindings_posted);
    auto outcome = k8s::bind_pod(*client, job.namespace_name, job.name, job.uid, job.node);
    auto report = [&](binding_outcome::type t, std::string message) {
      std::lock_guard lock(bind_mutex);
      outcomes.push_back({t, job.pod, std::move(message)});
    };
    switch (outcome.result) {
      case k8s::bind_result::bound:
        queue_event({pod_reference(job.namespace_name, job.name, job.uid), "Pod", "Normal",
                     "Scheduled",
                     "Successfully assigned " + job.namespace_name + "/" + job.name + " to " +
                         job.node});
        [[fallthrough]];
      case k8s::bind_result::already_bound_here:
        count(&kube_world_counters::bindings_done);
        return report(binding_outcome::type::done, {});
      case k8s::bind_result::gone:
        count(&kube_world_counters::bindings_gone);
        return report(binding_outcome::type::gone, outcome.message);
      case k8s::bind_result::rejected:
        // For good as asked (RBAC, admission): loudly, and again later in case it is fixed.
        count(&kube_world_counters::bindings_refused);
        oplog::error("binding refused by the apiserver")
            .kv("pod", job.namespace_name + "/" + job.name)
            .kv("node", job.node)
            .kv("error", outcome.message);
        report_denied("bind a pod", outcome.message);
        job.not_before = clock_type::now() + std::chrono::seconds(30);
        break;
      case k8s::bind_result::retry: {
        count(&kube_world_counters::bindings_retried);
        auto delay = std::chrono::milliseconds(100) * (1 << std::min(job.attempts, 6));
        if (outcome.retry_after)
          delay = std::max<std::chrono::milliseconds>(delay, *outcome.retry_after);
        job.not_before = clock_type::now() + delay;
        if (job.attempts % 5 == 4)
          oplog::warn("binding retried")
              .kv("pod", job.namespace_name + "/" + job.name)
              .kv("attempts", int64_t{job.attempts} + 1)
              .kv("error", outcome.message);
        break;
      }
    }
    ++job.attempts;
    {
      std::lock_guard lock(bind_mutex);
      bind_queue.push_back(std::move(job));
    }
    bind_cv.notify_one();
  }

  // What the apiserver shows of a pod's PodScheduled=False message: written already (by us
  // before a restart, or by another scheduler), so not written again.
  void seen_pod_condition(const api::pod_object& p) {
    for (const auto& c : p.conditions)
      if (c.type == "PodScheduled" && c.status == "False") {
        std::lock_guard lock(notes_mutex);
        pod_written[p.pod.meta.namespace_name + "/" + p.pod.meta.name] = c.message;
      }
  }

  // -- the PodGroups of pods that name none

  // A pod of ours with a controller owner and no group joins its owner's PodGroup, as Volcano's
  // pg controller annotates it (we do not patch the pod: the cache reads the name from here).
  void group_by_owner(const json::value& item, api::pod_object& o) {
    auto& p = o.pod;
    if (!p.group.empty() || !is_our_scheduler(scheduling, p.scheduler_name.str()))
      return;
    const auto* refs = k8s::value_at(item, {"metadata", "ownerReferences"});
    if (!refs || !refs->is_array())
      return;
    for (const auto& r : refs->as_array()) {
      const auto* controller = k8s::value_at(r, {"controller"});
      auto uid = k8s::string_at(r, {"uid"});
      if (!controller || !controller->is_bool() || !controller->as_bool() || uid.empty())
        continue;
      p.group = "podgroup-" + uid;
      if (!scheduler::is_terminal(p.phase))
        ask_for_group(p, &refs->as_array());
      return;
    }
  }

  void consider_lone(const api::pod_object& o) {
    const auto& p = o.pod;
    if (!p.group.empty() || p.is_bound() || scheduler::is_terminal(p.phase) ||
        !is_our_scheduler(scheduling, p.scheduler_name.str()))
      return;
    ask_for_group(p, nullptr);
  }

  // Pod `p`'s PodGroup (p.group, or "podgroup-<its uid>") is to be made unless it exists:
  // owned by `owners` (the pod's owner references; its minMember is theirs to say), or by the
  // pod itself when null. Called at every event of such a pod: nothing is copied or built
  // before the group is known to be missing.
  void ask_for_group(const scheduler::pod& p, const json::array* owners) {
    auto name = p.group.empty() ? "podgroup-" + p.meta.uid.str() : p.group.str();
    auto key = p.meta.namespace_name.str() + "/" + name;
    {
      std::lock_guard lock(raw_mutex);
      if (raw_groups.count(key))
        return;
    }
    std::lock_guard lock(notes_mutex);
    if (groups_made.count(key) || groups_to_make.count(key))
      return;
    std::string queue(scheduler::default_queue_name);
    if (auto q = p.meta.annotations.find("scheduling.volcano.sh/queue-name"))
      queue = std::string(*q);
    json::array owned_by =
        owners ? *owners
               : json::array{json::object{{"apiVersion", "v1"},
                                          {"kind", "Pod"},
                                          {"name", p.meta.name.str()},
                                          {"uid", p.meta.uid.str()},
                                          {"controller", true}}};
    groups_to_make[key] = {p.meta.namespace_name.str(), std::move(name), p.meta.name.str(),
                           std::move(queue), p.priority_class_name.str(), std::move(owned_by),
                           owners != nullptr, p.requests, {}};
  }

  // A deleted pod's own PodGroup is not to be made (its owner's may still be: other pods).
  void forget_lone(const std::string& ns, const std::string& uid) {
    std::lock_guard lock(notes_mutex);
    groups_to_make.erase(ns + "/podgroup-" + uid);
    groups_made.erase(ns + "/podgroup-" + uid);
  }

  // A whole list of pods follows: pods deleted while the watch was away are not named one by
  // one, so what is remembered of them goes (a PodGroup made already answers 409 if asked again).
  void forget_every_lone() {
    std::lock_guard lock(notes_mutex);
    groups_to_make.clear();
    groups_made.clear();
  }

  // The annotations of a pod's owners, the first owner's value winning, as Volcano merges them.
  // An owner that cannot be read (gone, or not ours to read) adds nothing.
  std::map<std::string, std::string> owners_annotations(const group_to_make& g) {
    std::map<std::string, std::string> merged;
    for (const auto& r : g.owners) {
      // The owners Volcano's controller reads, by apiVersion and kind: their collection.
      struct readable_owner {
        std::string_view api_version, kind, plural;
      };
      static constexpr readable_owner readable[] = {
          {"apps/v1", "ReplicaSet", "replicasets"},
          {"apps/v1", "StatefulSet", "statefulsets"},
          {"apps/v1", "DaemonSet", "daemonsets"},
          {"batch/v1", "Job", "jobs"},
      };
      auto api_version = k8s::string_at(r, {"apiVersion"});
      auto kind = k8s::string_at(r, {"kind"});
      auto owner = k8s::string_at(r, {"name"});
      const auto* known =
          std::find_if(std::begin(readable), std::end(readable), [&](const auto& o) {
            return o.api_version == api_version && o.kind == kind;
          });
      if (known == std::end(readable) || owner.empty())
        continue;
      auto read = k8s::get_json(*client, "/apis/" + api_version + "/namespaces/" +
                                             g.namespace_name + "/" + std::string(known->plural) +
                                             "/" + owner);
      if (!read) {
        oplog::warn("the owner of a pod could not be read; its PodGroup takes minMember 1")
            .kv("owner", std::string(kind) + "/" + g.namespace_name + "/" + std::string(owner))
            .kv("error", read.error().to_string());
        report_denied("read the owner of a pod", read.error().message());
        continue;
      }
      if (const auto* a = k8s::value_at(*read, {"metadata", "annotations"}); a && a->is_object())
        for (const auto& [k, v] : a->as_object())
          if (v.is_string())
            merged.emplace(std::string(k), std::string(v.as_string()));
    }
    return merged;
  }

  json::object podgroup_of(const group_to_make& g) {
    int64_t min_member = 1;
    json::object annotations;
    if (g.by_owner) {
      auto inherited = owners_annotations(g);
      if (auto m = inherited.find("scheduling.volcano.sh/group-min-member"); m != inherited.end()) {
        int64_t n = 0;
        auto [end, ec] = std::from_chars(m->second.data(), m->second.data() + m->second.size(), n);
        if (ec == std::errc{} && end == m->second.data() + m->second.size() && n >= 1 &&
            n <= std::numeric_limits<int32_t>::max())
          min_member = n;
        else
          oplog::warn("an owner's group-min-member is not a positive whole number; its "
                      "PodGroup takes minMember 1")
              .kv("podgroup", g.namespace_name + "/" + g.name)
              .kv("value", m->second);
      }
      // Volcano's controller passes its owners' volcano.sh/ annotations on (preemptable, ...).
      for (const auto& [k, v] : inherited)
        if (k.starts_with("volcano.sh/"))
          annotations[k] = v;
    }
    json::object spec{{"minMember", min_member}, {"queue", g.queue}};
    if (!g.priority_class.empty())
      spec["priorityClassName"] = g.priority_class;
    if (g.by_owner) {
      json::object min_resources;
      g.requests.times(min_member).for_each([&](std::string_view name, int64_t amount) {
        if (name != scheduler::pods_resource)
          min_resources[name] = scheduler::format_resource_amount(name, amount);
      });
      if (!min_resources.empty())
        spec["minResources"] = std::move(min_resources);
    }
    json::object meta{{"name", g.name},
                      {"namespace", g.namespace_name},
                      {"ownerReferences", g.owners}};
    if (!annotations.empty())
      meta["annotations"] = std::move(annotations);
    return json::object{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                        {"kind", "PodGroup"},
                        {"metadata", std::move(meta)},
                        {"spec", std::move(spec)}};
  }

  void create_pod_groups() {
    std::vector<group_to_make> due;
    auto now = clock_type::now();
    {
      std::lock_guard lock(notes_mutex);
      for (auto i = groups_to_make.begin(); i != groups_to_make.end();)
        if (i->second.not_before <= now) {
          due.push_back(std::move(i->second));
          i = groups_to_make.erase(i);
        } else {
          ++i;
        }
    }
    for (auto& g : due) {
      auto made = k8s::post_json(*client, "/apis/scheduling.volcano.sh/v1beta1/namespaces/" +
                                              g.namespace_name + "/podgroups",
                                 podgroup_of(g));
      auto code = made ? errc::ok : made.error().code();
      std::lock_guard lock(notes_mutex);
      auto key = g.namespace_name + "/" + g.name;
      if (made || code == errc::already_exists) {
        if (made)
          count(g.by_owner ? &kube_world_counters::owner_groups_created
                           : &kube_world_counters::lone_groups_created);
        groups_made.insert(key);
      } else if (code != errc::not_found) {  // 404: the namespace is going.
        oplog::warn("PodGroup of a pod not created")
            .kv("podgroup", key)
            .kv("pod", g.namespace_name + "/" + g.pod_name)
            .kv("error", made.error().to_string());
        report_denied("create the PodGroup of a pod", made.error().message());
        g.not_before = clock_type::now() + std::chrono::seconds(5);
        groups_to_make.emplace(std::move(key), std::move(g));
      }
    }
  }

  // -- pod conditions and events

  void pod_changed(const api::pod_object& p) {
    std::string message;
    for (const auto& c : p.conditions)
      if (c.type == "PodScheduled" && c.status == "False")
        message = c.message;
    // A gated pod's condition (SchedulingGated) is the apiserver's own, written at its creation.
    if (message.empty() || p.pod.is_bound() || p.pod.is_gated())
      return;
    auto key = p.pod.meta.namespace_name + "/" + p.pod.meta.name;
    {
      std::lock_guard lock(notes_mutex);
      pod_notes[key] = {p.pod.meta.namespace_name.str(), p.pod.meta.name.str(),
                        p.pod.meta.uid.str(), std::move(message)};
    }
    notes_cv.notify_one();
  }

  void queue_event(event_note e) {
    {
      std::lock_guard lock(notes_mutex);
      if (event_notes.size() >= max_event_notes) {
        event_notes.pop_front();
        count(&kube_world_counters::events_dropped);
      }
      event_notes.push_back(std::move(e));
    }
    notes_cv.notify_one();
  }

  static json::value pod_reference(const std::string& ns, const std::string& name,
                                   const std::string& uid) {
    return json::object{{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", json::object{{"namespace", ns}, {"name", name}, {"uid", uid}}}};
  }

  // -- preemption

  void queue_evictions(eviction_batch batch) {
    {
      std::lock_guard lock(notes_mutex);
      for (auto& e : batch.evictions)
        evictions.push_back(std::move(e));
      for (auto& n : batch.nominations)
        nominations.push_back(std::move(n));
    }
    notes_cv.notify_one();
  }

  // Victims first (the preemptor waits for them), then its pods' nominatedNodeName, as
  // kube-scheduler and Volcano show a preemptor waiting for room. A victim whose delete failed
  // for a passing reason is tried again at the next turn; 404 and another uid mean it is gone.
  void evict_due() {
    std::deque<pod_eviction> victims;
    std::deque<pod_nomination> nominated;
    {
      std::lock_guard lock(notes_mutex);
      victims.swap(evictions);
      nominated.swap(nominations);
    }
    std::deque<pod_eviction> again;
    for (auto& v : victims) {
      auto done = k8s::evict_pod(*client, v.namespace_name, v.name, v.uid, v.message,
                                 "phalanx", config.identity);
      auto code = done.deleted.code();
      if (done.deleted.ok())
        count(&kube_world_counters::pods_evicted);
      if (!done.condition_written.ok() && done.condition_written.code() != errc::not_found &&
          done.condition_written.code() != errc::conflict) {
        oplog::warn("DisruptionTarget condition not written")
            .kv("pod", v.namespace_name + "/" + v.name)
            .kv("error", done.condition_written.to_string());
        report_denied("write a victim's DisruptionTarget condition",
                      done.condition_written.message());
      }
      if (done.deleted.ok() || code == errc::not_found || code == errc::conflict)
        continue;
      // The apiserver busy or away: again at the next turn. Refused (RBAC without pods delete,
      // say): said loudly once; the preemptor gives the room back after preemptionWait.
      if (code == errc::unavailable || code == errc::io_error) {
        oplog::warn("eviction failed; tried again")
            .kv("pod", v.namespace_name + "/" + v.name)
            .kv("error", done.deleted.to_string());
        again.push_back(std::move(v));
      } else {
        oplog::error("eviction refused")
            .kv("pod", v.namespace_name + "/" + v.name)
            .kv("error", done.deleted.to_string());
        report_denied("evict a pod", done.deleted.message());
      }
    }
    for (const auto& n : nominated) {
      json::object patch{{"status", json::object{{"nominatedNodeName", n.node}}}};
      auto done = k8s::patch_json(*client,
                                  "/api/v1/namespaces/" + n.namespace_name + "/pods/" + n.name +
                                      "/status",
                                  patch, k8s::patch_type::merge);
      if (done)
        count(&kube_world_counters::nominations_written);
      else if (done.error().code() != errc::not_found) {
        oplog::warn("nominatedNodeName not written")
            .kv("pod", n.namespace_name + "/" + n.name)
            .kv("error", done.error().to_string());
        report_denied("write a preemptor's nominatedNodeName", done.error().message());
      }
    }
    if (!again.empty()) {
      std::lock_guard lock(notes_mutex);
      for (auto& v : again)
        evictions.push_back(std::move(v));
    }
  }

  void notes_loop() {
    while (!stopping.load()) {
      std::unordered_map<std::string, pod_note> pods;
      std::deque<event_note> events;
      {
        std::unique_lock lock(notes_mutex);
        notes_cv.wait_for(lock, std::chrono::milliseconds(200), [&] {
          return stopping.load() || !pod_notes.empty() || !event_notes.empty() ||
                 !evictions.empty();
        });
        pods.swap(pod_notes);
        events.swap(event_notes);
      }
      if (!may_bind())
        continue;  // A standby writes nothing.
      evict_due();
      create_pod_groups();
      for (auto& [key, n] : pods) {
        if (pod_written[key] == n.message)
          continue;
        pod_written[key] = n.message;
        write_pod_condition(n);
        events.push_back({pod_reference(n.namespace_name, n.name, n.uid), "Pod", "Warning",
                          "FailedScheduling", n.message});
      }
      for (auto& e : events)
        post_event(e.object, e.kind, e.type, e.reason, e.message);
    }
  }

  // PodScheduled=False with the pod's own reason, as kube-scheduler and Volcano write it.
  void write_pod_condition(const pod_note& n) {
    auto now = api::format_time(scheduler::timestamp{std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::system_clock::now().time_since_epoch())});
    json::object patch{
        {"status",
         json::object{{"conditions",
                       json::array{json::object{{"type", "PodScheduled"},
                                                {"status", "False"},
                                                {"reason", "Unschedulable"},
                                                {"message", n.message.substr(0, 4096)},
                                                {"lastTransitionTime", now}}}}}}};
    auto path = "/api/v1/namespaces/" + n.namespace_name + "/pods/" + n.name + "/status";
    auto done = k8s::patch_json(*client, path, patch, k8s::patch_type::strategic_merge);
    if (done)
      count(&kube_world_counters::pod_conditions_written);
    else if (done.error().code() != errc::not_found) {
      static oplog::rate_limit limit{std::chrono::seconds(1), 5};
      if (auto left_out = limit.pass())
        oplog::warn("pod condition not written")
            .kv("pod", n.namespace_name + "/" + n.name)
            .kv("error", done.error().to_string())
            .kv("suppressed", *left_out);
      report_denied("write a pending pod's PodScheduled condition", done.error().message());
    }
  }

  // -- status

  void status_changed(const api::pod_group_object& g) {
    {
      std::lock_guard lock(status_mutex);
      status_pending[g.group.meta.namespace_name + "/" + g.group.meta.name] = g;
    }
    status_cv.notify_one();
  }

  void status_loop() {
    while (!stopping.load()) {
      std::unordered_map<std::string, api::pod_group_object> work;
      {
        std::unique_lock lock(status_mutex);
        status_cv.wait_for(lock, std::chrono::milliseconds(200),
                           [&] { return stopping.load() || !status_pending.empty(); });
        work.swap(status_pending);
      }
      // Only the leader writes; a standby's view is the same, and two writers would fight.
      if (!may_bind())
        continue;
      for (auto& [key, g] : work)
        write_status(key, g);
      if (clock_type::now() >= queue_status_due) {
        queue_status_due = clock_type::now() + queue_status_period;
        write_queue_statuses();
      }
    }
  }

  // Each Queue's status as Volcano keeps it (PodGroups by phase, what its bound pods hold, its
  // state), on the status subresource. A JSON patch that sets /status whole: a merge patch would
  // keep a resource that left `allocated`. Written only when it changed since the last write,
  // and only over the version of the queue the cache holds (the patch sets metadata.
  // resourceVersion, which the apiserver checks as a precondition): the state is another
  // writer's to set too (a user closing the queue, vcctl's close through Volcano's controller),
  // and a status built before the watch brought that change would put the old state back. A
  // conflict is written again, from the newer version, once the watch brings it.
  void write_queue_statuses() {
    auto answer = std::make_shared<std::promise<result<api::object_list>>>();
    auto listed = answer->get_future();
    service->list(api::resource_kind::queue, {},
                  [answer](result<api::object_list> r) { answer->set_value(std::move(r)); });
    if (listed.wait_for(std::chrono::seconds(5)) != std::future_status::ready)
      return;
    auto queues = listed.get();
    if (!queues)
      return;
    for (const auto& item : queues->items) {
      const auto* q = std::get_if<api::queue_object>(&item);
      if (q == nullptr)
        continue;
      auto encoded = api::encode_object(item);
      const auto* status = encoded.as_object().if_contains("status");
      if (status == nullptr)
        continue;
      auto text = json::serialize(*status);
      auto name = q->queue.meta.name.str();
      auto uid = k8s::string_at(encoded, {"metadata", "uid"});
      auto& written = queue_status_written[name];
      if (written.uid == uid && written.text == text)
        continue;
      json::array patch;
      if (auto version = k8s::string_at(encoded, {"metadata", "resourceVersion"});
          !version.empty())
        patch.push_back(json::object{
            {"op", "add"}, {"path", "/metadata/resourceVersion"}, {"value", version}});
      patch.push_back(json::object{{"op", "add"}, {"path", "/status"}, {"value", *status}});
      auto path = "/apis/scheduling.volcano.sh/v1beta1/queues/" + name + "/status";
      auto done = k8s::patch_json(*client, path, patch, k8s::patch_type::json_patch);
      if (done) {
        count(&kube_world_counters::queue_status_writes);
        written = {std::move(uid), std::move(text)};
      } else if (done.error().code() == errc::not_found) {
        // Not on the apiserver (the implicit default queue).
        written = {std::move(uid), std::move(text)};
      } else if (done.error().code() == errc::conflict) {
        // Changed since the cache read it: written from the newer version next time.
      } else {
        oplog::warn("Queue status not written").kv("queue", name).kv("error",
                                                                       done.error().to_string());
        report_denied("write a Queue's status", done.error().message());
      }
    }
  }

  void write_status(const std::string& key, const api::pod_group_object& g) {
    auto encoded = api::encode_object(api::object{g});
    const auto* status = encoded.as_object().if_contains("status");
    if (status == nullptr)
      return;
    auto text = json::serialize(*status);
    if (status_written[key] == text)
      return;
    json::value raw;
    {
      std::lock_guard lock(raw_mutex);
      auto i = raw_groups.find(key);
      if (i == raw_groups.end())
        return;  // Not on the apiserver (a lone pod's group is ours only), or gone.
      raw = i->second;
    }
    auto path = std::string("/apis/scheduling.volcano.sh/v1beta1/namespaces/") +
                g.group.meta.namespace_name.str() + "/podgroups/" + g.group.meta.name.str();
    for (int attempt = 0; attempt < 3; ++attempt) {
      raw.as_object()["status"] = *status;
      auto put = k8s::put_json(*client, path, raw);
      if (put) {
        count(&kube_world_counters::status_writes);
        status_written[key] = text;
        remember_group(*put, false);
        break;
      }
      if (put.error().code() != errc::conflict) {
        static oplog::rate_limit limit{std::chrono::seconds(1), 5};
        if (auto left_out = limit.pass())
          oplog::warn("PodGroup status not written")
              .kv("podgroup", key)
              .kv("error", put.error().to_string())
              .kv("suppressed", *left_out);
        report_denied("write a PodGroup's status", put.error().message());
        return;
      }
      auto fresh = k8s::get_json(*client, path);  // Someone else wrote it: on the newest.
      if (!fresh)
        return;
      raw = std::move(*fresh);
    }
    write_events(key, g, raw);
  }

  // A Normal Scheduled event when the gang starts running; a Warning Unschedulable event when its
  // pending reason changes: written only on change, as Volcano's scheduler does.
  void write_events(const std::string& key, const api::pod_group_object& g,
                    const json::value& raw) {
    std::string reason, message, type = "Warning";
    if (g.status.phase == scheduler::pod_group_phase::running) {
      reason = "Scheduled";
      type = "Normal";
      for (const auto& c : g.status.conditions)
        if (c.type == "Scheduled")
          message = c.message;
    } else {
      for (const auto& c : g.status.conditions)
        if (c.type == "Unschedulable" && c.status == "True") {
          reason = "Unschedulable";
          message = c.message;
        }
    }
    if (reason.empty())
      return;
    auto text = reason + "\n" + message;
    if (event_written[key] == text)
      return;
    event_written[key] = text;
    queue_event({raw, "PodGroup", type, reason, message});
  }

  void post_event(const json::value& object, std::string_view kind, const std::string& type,
                  const std::string& reason, const std::string& message) {
    auto ns = k8s::string_at(object, {"metadata", "namespace"});
    auto name = k8s::string_at(object, {"metadata", "name"});
    if (name.empty() || !client)
      return;
    if (ns.empty())
      ns = "default";
    auto now = api::format_time(scheduler::timestamp{std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::system_clock::now().time_since_epoch())});
    json::object event{
        {"apiVersion", "v1"},
        {"kind", "Event"},
        {"metadata", json::object{{"generateName", name + "."}, {"namespace", ns}}},
        {"involvedObject", json::object{{"apiVersion", k8s::string_at(object, {"apiVersion"})},
                                        {"kind", std::string(kind)},
                                        {"name", name},
                                        {"namespace", ns},
                                        {"uid", k8s::string_at(object, {"metadata", "uid"})}}},
        {"reason", reason},
        {"message", message.substr(0, 1024)},
        {"type", type},
        {"source", json::object{{"component", "phalanx"}}},
        {"reportingComponent", "phalanx"},
        {"reportingInstance", config.identity},
        {"firstTimestamp", now},
        {"lastTimestamp", now},
        {"count", 1}};
    auto posted = k8s::post_json(*client, "/api/v1/namespaces/" + ns + "/events", event);
    if (posted)
      count(&kube_world_counters::events_written);
    else {
      oplog::debug("event not written")
          .kv("object", ns + "/" + name)
          .kv("error", posted.error().to_string());
      report_denied("write an event", posted.error().message());
    }
  }
};

// What one reflector lists and watches, decoded and sent on as deltas.
class kube_world::impl::sink final : public k8s::reflector_sink {
 public:
  sink(impl& w, api::resource_kind kind) : w_(w), kind_(kind) {}

  void on_list(std::vector<json::value> items, const std::string& resource_version) override {
    world_delta d;
    d.what = world_delta::type::replace_all;
    d.kind = kind_;
    d.collection_version = resource_version;
    if (kind_ == api::resource_kind::pod_group) {
      std::lock_guard lock(w_.raw_mutex);
      w_.raw_groups.clear();
    }
    if (kind_ == api::resource_kind::pod)
      w_.forget_every_lone();
    for (auto& item : items) {
      if (kind_ == api::resource_kind::pod_group)
        w_.remember_group(item, false);
      if (auto obj = w_.decode(kind_, item, k8s::string_at(item, {"metadata", "resourceVersion"}))) {
        if (auto* p = std::get_if<api::pod_object>(&*obj)) {
          w_.seen_pod_condition(*p);
          w_.group_by_owner(item, *p);
          w_.consider_lone(*p);
        }
        d.objects.push_back(std::move(*obj));
      }
    }
    oplog::info("listed")
        .kv("kind", api::to_string(kind_))
        .kv("objects", static_cast<uint64_t>(d.objects.size()))
        .kv("resource_version", resource_version);
    w_.send_delta(std::move(d));
    w_.check_synced();
  }

  void on_event(k8s::event_type type, json::value object,
                const std::string& resource_version) override {
    world_delta d;
    d.kind = kind_;
    d.collection_version = resource_version;
    if (type == k8s::event_type::deleted) {
      d.what = world_delta::type::remove;
      if (kind_ == api::resource_kind::pod_group)
        w_.remember_group(object, true);
      if (kind_ == api::resource_kind::pod)
        w_.forget_lone(k8s::string_at(object, {"metadata", "namespace"}),
                       k8s::string_at(object, {"metadata", "uid"}));
      d.objects.push_back(named(kind_, object));
    } else {
      d.what = world_delta::type::upsert;
      if (kind_ == api::resource_kind::pod_group)
        w_.remember_group(object, false);
      if (auto obj = w_.decode(kind_, object, resource_version)) {
        if (auto* p = std::get_if<api::pod_object>(&*obj)) {
          w_.seen_pod_condition(*p);
          w_.group_by_owner(object, *p);
          w_.consider_lone(*p);
        }
        d.objects.push_back(std::move(*obj));
      }
    }
    w_.send_delta(std::move(d));
  }

  void on_bookmark(const std::string& resource_version) override {
    world_delta d;
    d.kind = kind_;
    d.collection_version = resource_version;
    w_.send_delta(std::move(d));
  }

  void on_error(const status& error) override {
    static oplog::rate_limit limit{std::chrono::seconds(1), 5};
    if (auto left_out = limit.pass())
      oplog::warn("watch error")
          .kv("kind", api::to_string(kind_))
          .kv("error", error.to_string())
          .kv("suppressed", *left_out);
    w_.report_denied("list and watch the cluster's objects", error.message());
  }

 private:
  impl& w_;
  api::resource_kind kind_;
};

namespace {

// A sink of a small collection kept whole in the world and sent whole at each change
// (PriorityClasses, Namespaces): a list replaces what is kept, an event changes one object, and
// the whole is sent when something changed. Its subclasses say how an object is kept.
class whole_collection_sink : public k8s::reflector_sink {
 public:
  void on_list(std::vector<json::value> items, const std::string&) override {
    forget_all();
    for (const auto& item : items)
      keep(item);
    send();
    listed_();
  }

  void on_event(k8s::event_type type, json::value object, const std::string&) override {
    auto name = k8s::string_at(object, {"metadata", "name"});
    if (name.empty())
      return;
    if (type == k8s::event_type::deleted ? forget(name) : keep(object))
      send();
  }

  void on_bookmark(const std::string&) override {}

  void on_error(const status& error) override {
    static oplog::rate_limit limit{std::chrono::seconds(1), 5};
    if (auto left_out = limit.pass())
      oplog::warn("watch error")
          .kv("kind", kind_)
          .kv("error", error.to_string())
          .kv("suppressed", *left_out);
    report_denied_(call_, error.message());
  }

 protected:
  // `kind`: the collection's name in logs ("namespaces"); `call`: what the ClusterRole must
  // allow, in an RBAC denial's words ("list and watch Namespaces"); `listed`: called after each
  // list (the world's sync check).
  whole_collection_sink(denial_reporter& report_denied, std::string_view kind,
                        std::string_view call, std::function<void()> listed)
      : report_denied_(report_denied), kind_(kind), call_(call), listed_(std::move(listed)) {}

  virtual void forget_all() = 0;
  // Keeps the object (named); true when what is kept changed.
  virtual bool keep(const json::value& object) = 0;
  // Forgets the object `name`; true when it was kept.
  virtual bool forget(const std::string& name) = 0;
  // Sends what is kept, whole.
  virtual void send() = 0;

 private:
  denial_reporter& report_denied_;
  std::string_view kind_;
  std::string_view call_;
  std::function<void()> listed_;
};

} // namespace

// The cluster's PriorityClasses (scheduling.k8s.io/v1), kept whole here and sent to the registry
// whole at every change: a few dozen objects at most, and a PodGroup's priority is resolved from
// them (Volcano's priority plugin orders jobs by it).
class kube_world::impl::priority_class_sink final : public whole_collection_sink {
 public:
  explicit priority_class_sink(impl& w)
      : whole_collection_sink(w.report_denied, "priorityclasses",
                              "list and watch PriorityClasses", [&w] { w.check_synced(); }),
        w_(w) {}

 private:
  void forget_all() override { classes_.clear(); }
  bool forget(const std::string& name) override { return classes_.erase(name) != 0; }

  // A class as the codec reads it (the apiserver validated it); one that does not read is left
  // out, with a warning.
  bool keep(const json::value& v) override {
    auto name = k8s::string_at(v, {"metadata", "name"});
    api::decode_options options;
    options.expected_kind = api::resource_kind::priority_class;
    options.validate = false;
    auto decoded = api::decode_object(v, options);
    if (name.empty() || !decoded) {
      oplog::warn("PriorityClass left out")
          .kv("name", name)
          .kv("error", decoded ? std::string("no name") : decoded.error().message);
      return classes_.erase(name) != 0;
    }
    auto c = std::get<api::priority_class_object>(std::move(*decoded)).priority_class;
    auto [at, added] = classes_.try_emplace(name, c);
    if (!added && at->second == c)
      return false;
    at->second = std::move(c);
    return true;
  }

  // The whole set: the registry resolves priorities, the default (were there two, the lower
  // value wins, as kube-apiserver's Priority admission picks) and preemption policies from it.
  void send() override {
    world_delta d;
    d.what = world_delta::type::priority_classes;
    d.kind = api::resource_kind::priority_class;
    for (const auto& [name, c] : classes_)
      d.objects.emplace_back(api::priority_class_object{c});
    w_.send_delta(std::move(d));
  }

  impl& w_;
  std::map<std::string, scheduler::priority_class> classes_;
};

// The cluster's Namespaces, for their labels: a pod affinity term's namespaceSelector is matched
// against them, as kube-scheduler's InterPodAffinity reads its Namespace lister. Kept here and
// sent whole at every change that touches labels, as an immutable directory the planners and
// node actors share (cluster_view::publish_namespaces). Namespaces change rarely; the labels of
// a few thousand are a few hundred kilobytes at most.
class kube_world::impl::namespace_sink final : public whole_collection_sink {
 public:
  explicit namespace_sink(impl& w)
      : whole_collection_sink(w.report_denied, "namespaces", "list and watch Namespaces",
                              [&w] { w.check_synced(); }),
        w_(w) {}

 private:
  void forget_all() override { labels_.clear(); }
  bool forget(const std::string& name) override { return labels_.erase(name) != 0; }

  // Keeps the namespace's labels; true when they changed (a status or annotation write changes
  // nothing kept). Values that are not strings are left out (the apiserver allows none).
  bool keep(const json::value& v) override {
    auto name = k8s::string_at(v, {"metadata", "name"});
    if (name.empty())
      return false;
    std::map<std::string, std::string> labels;
    if (const auto* meta = v.is_object() ? v.as_object().if_contains("metadata") : nullptr)
      if (const auto* l = meta->is_object() ? meta->as_object().if_contains("labels") : nullptr)
        if (l->is_object())
          for (const auto& [key, value] : l->as_object())
            if (value.is_string())
              labels.emplace(std::string(key), std::string(value.as_string()));
    auto [at, added] = labels_.try_emplace(name, labels);
    if (!added && at->second == labels)
      return false;
    at->second = std::move(labels);
    return true;
  }

  void send() override {
    auto dir = std::make_shared<scheduler::namespace_directory>();
    for (const auto& [name, labels] : labels_) {
      scheduler::label_set set;
      for (const auto& [key, value] : labels)
        set.set(key, value);
      dir->set(name, std::move(set));
    }
    world_delta d;
    d.what = world_delta::type::namespaces;
    d.namespaces = std::move(dir);
    w_.send_delta(std::move(d));
  }

  impl& w_;
  std::map<std::string, std::map<std::string, std::string>> labels_;
};

namespace {

// The binder actor: a shell that hands the pods of committed rounds to the binding workers.
struct kube_binder_state {
  static inline const char* name = "phalanx.kube_binder";
  kube_world::impl* world = nullptr;
};

binder_actor::behavior_type kube_binder(binder_actor::stateful_pointer<kube_binder_state> self,
                                        kube_world::impl* world) {
  self->state.world = world;
  return {
    [self](bind_pods_atom, uint32_t, const scheduler::shared_string& node, const pod_refs& pods) {
      self->state.world->queue_bindings(node.str(), pods);
    },
    [self](forget_atom, const std::vector<uint64_t>& ids) { self->state.world->forget(ids); },
    [self](evict_atom, eviction_batch& batch) {
      self->state.world->queue_evictions(std::move(batch));
    },
    // The simulation's messages: nothing to do against a real cluster (its kubelets run pods).
    [](fail_atom, uint64_t) {},
    [](adopt_atom, const pod_refs&) {},
    [](finished_atom, const std::vector<pod_outcome>&) {},
    [](terminate_atom, const std::vector<termination_order>&) {},
    [](tick_atom) {},
    [](stalled_atom) {},
    [](spec_atom, const status_sink_actor&) {},
  };
}

// Hands each registry object of type `Object` that was added or changed (a pod with a pending
// reason, a PodGroup's status) to one of the world's writers.
template <class Object>
class registry_change_sink final : public api::watch_sink {
 public:
  explicit registry_change_sink(std::function<void(const Object&)> changed)
      : changed_(std::move(changed)) {}
  bool on_event(const api::watch_event& e) override {
    // Added too: a pod whose reason is known when it comes (its PodGroup is missing) says so.
    if (e.kind != api::watch_event::type::deleted)
      if (const auto* o = std::get_if<Object>(&e.obj))
        changed_(*o);
    return true;
  }
  void on_close(status) override {}

 private:
  std::function<void(const Object&)> changed_;
};

// Lists and watches one collection of the apiserver into `sink` (kept by the world).
void watch_collection(kube_world::impl& w, k8s::reflector_options o,
                      std::unique_ptr<k8s::reflector_sink> sink) {
  auto path = o.path;
  w.sinks.push_back(std::move(sink));
  auto r = k8s::reflector::create(*w.client, std::move(o), *w.sinks.back());
  if (!r) {
    oplog::line(spdlog::level::critical, "cannot watch")
        .kv("path", path)
        .kv("error", r.error().to_string());
    return;
  }
  w.reflectors.push_back(std::move(*r));
}

} // namespace

kube_world::kube_world(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

kube_world::~kube_world() { stop(); }

result<std::unique_ptr<kube_world>> kube_world::create(const kubernetes_config& config,
                                                      const scheduling_config& scheduling,
                                                      api::metrics_registry& metrics) {
  auto p = std::make_unique<impl>();
  p->config = config;
  p->scheduling = scheduling;
  p->register_metrics(metrics);
  if (p->config.identity.empty())
    p->config.identity = default_identity();
  if (p->config.binding_workers < 1)
    return status{errc::invalid_argument, "kubernetes: binding workers must be at least 1"};
  // A connection per binding worker, and a few for the status writer, the lone pods'
  // PodGroups and the evictions: a request waits for a free connection, so a pool smaller than
  // the workers caps the Bindings in flight at its size. (The Lease has a client of its own.)
  auto connection = config.connection;
  connection.connections = std::max(connection.connections, config.binding_workers + 4);
  auto c = k8s::client::create(std::move(connection));
  if (!c)
    return c.error();
  p->client = std::move(*c);
  if (config.leader_elect) {
    k8s::lease_options lo;
    lo.namespace_name = config.lock_namespace;
    lo.name = config.lock_name;
    lo.identity = p->config.identity;
    lo.lease_duration = config.lease_duration;
    lo.renew_deadline = config.renew_deadline;
    lo.retry_period = config.retry_period;
    auto* raw = p.get();
    lo.on_started_leading = [raw] {
      oplog::info("leading").kv("identity", raw->config.identity);
      raw->maybe_lead();
    };
    lo.on_stopped_leading = [raw] {
      if (raw->stopping.load())
        return;
      oplog::error("lost the leader lease: binding stops").kv("identity", raw->config.identity);
      if (raw->on_failure)
        raw->on_failure("this process lost the leader lease " + raw->config.lock_namespace +
                        "/" + raw->config.lock_name);
    };
    lo.on_failure = [raw](const status& error) {
      raw->report_denied("take or renew the leader Lease", error.message());
    };
    lo.on_new_leader = [](const std::string& identity) {
      oplog::info("leader").kv("identity", identity.empty() ? std::string("(none)") : identity);
    };
    auto e = k8s::lease_elector::create(config.connection, std::move(lo));
    if (!e)
      return e.error();
    p->elector = std::move(*e);
  }
  return std::unique_ptr<kube_world>(new kube_world(std::move(p)));
}

binder_actor kube_world::spawn_binder(caf::actor_system& sys) {
  return sys.spawn(kube_binder, impl_.get());
}

void kube_world::start(registry_actor registry, api::service& service,
                       const std::map<std::string, std::string>& watch_versions,
                       std::function<void(std::string)> on_failure) {
  auto& w = *impl_;
  w.registry = std::move(registry);
  w.service = &service;
  w.on_failure = std::move(on_failure);
  for (const auto& c : collections) {
    k8s::reflector_options o;
    o.path = c.path;
    o.kind = c.item_kind;
    o.api_version = c.api_version;
    if (auto v = watch_versions.find("watch/" + std::string(api::to_string(c.kind)));
        v != watch_versions.end())
      o.resume_from = v->second;
    watch_collection(w, std::move(o), std::make_unique<impl::sink>(w, c.kind));
  }
  // Not checkpointed: a few objects, listed again at every start.
  k8s::reflector_options classes;
  classes.path = "/apis/scheduling.k8s.io/v1/priorityclasses";
  classes.kind = "PriorityClass";
  classes.api_version = "scheduling.k8s.io/v1";
  watch_collection(w, std::move(classes), std::make_unique<impl::priority_class_sink>(w));
  // Not checkpointed either: listed again at every start, for their labels.
  k8s::reflector_options namespaces;
  namespaces.path = "/api/v1/namespaces";
  namespaces.kind = "Namespace";
  namespaces.api_version = "v1";
  watch_collection(w, std::move(namespaces), std::make_unique<impl::namespace_sink>(w));
  for (auto& r : w.reflectors)
    r->start();
  for (int i = 0; i < w.config.binding_workers; ++i)
    w.bind_workers.emplace_back([&w] { w.bind_worker(); });
  w.status_watch = service.watch(
      api::resource_kind::pod_group, {}, 0,
      std::make_shared<registry_change_sink<api::pod_group_object>>(
          [&w](const api::pod_group_object& g) { w.status_changed(g); }));
  w.status_writer = std::thread([&w] { w.status_loop(); });
  w.pod_watch = service.watch(api::resource_kind::pod, {}, 0,
                              std::make_shared<registry_change_sink<api::pod_object>>(
                                  [&w](const api::pod_object& p) { w.pod_changed(p); }));
  w.notes_writer = std::thread([&w] { w.notes_loop(); });
  if (w.elector)
    w.elector->start();
  // Watches resumed from a checkpoint report synced without a callback; so does a leader.
  w.monitor = std::thread([&w] {
    while (!w.stopping.load()) {
      w.check_synced();
      w.maybe_lead();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
}

void kube_world::stop() {
  auto& w = *impl_;
  if (w.stopping.exchange(true))
    return;
  w.bind_cv.notify_all();
  w.status_cv.notify_all();
  if (w.monitor.joinable())
    w.monitor.join();
  for (auto& r : w.reflectors)
    r->stop();
  for (auto& t : w.bind_workers)
    t.join();
  w.bind_workers.clear();
  if (w.status_writer.joinable())
    w.status_writer.join();
  w.notes_cv.notify_all();
  if (w.notes_writer.joinable())
    w.notes_writer.join();
  w.status_watch.reset();
  w.pod_watch.reset();
  if (w.elector)
    w.elector->stop();
}

bool kube_world::may_bind() const { return impl_->may_bind(); }

kube_world_counters kube_world::counters() const {
  std::lock_guard lock(impl_->counters_mutex);
  return impl_->counters;
}

} // namespace phalanx::actors
