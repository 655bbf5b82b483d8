#include "actors/kube_job_controller.hpp"

#include "actors/interfaces.hpp"
#include "actors/operator_log.hpp"

#include "api/codec.hpp"
#include "k8s/client.hpp"
#include "k8s/job_objects.hpp"
#include "k8s/operations.hpp"
#include "k8s/reflector.hpp"
#include "k8s/ssh_keys.hpp"
#include "scheduler/job.hpp"
#include "scheduler/job_lifecycle.hpp"
#include "scheduler/job_plugins.hpp"
#include "scheduler/job_sync.hpp"
#include "scheduler/job_volumes.hpp"
#include "scheduler/quantity.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace phalanx::actors {

namespace json = boost::json;

/// What one of the controller's watches delivered: a whole list, or one change.
struct kube_job_input {
  enum class collection { jobs, pods, pod_groups, commands };
  collection from = collection::jobs;
  /// A whole list: `objects` is every object of the collection (what is not in it is gone).
  bool listed = false;
  /// For one change: what happened to objects[0].
  k8s::event_type change = k8s::event_type::added;
  std::vector<json::value> objects;
};

/// A policy's delayed action that is due (Volcano's delayAction), or, without one, the event of a
/// failed step of the job to handle again.
struct kube_job_timer {
  std::string job_key;
  std::string job_uid;
  /// The delayed action's id in its job's list of delayed actions (0 for a retry).
  uint64_t delay_id = 0;
};

namespace {

using namespace std::chrono_literals;

constexpr auto retry_after = 2s;
// A step that changes the phase syncs the job again; a chain of such syncs stops after this many
// (no chain of the table is longer; a longer one would be two rules disagreeing about the pods).
constexpr int max_follow_ups = 4;
constexpr auto tick_period = 1s;

scheduler::timestamp wall_now() {
  return scheduler::timestamp{std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch())};
}

std::string key_of(const json::value& v) {
  return k8s::string_at(v, {"metadata", "namespace"}) + "/" +
         k8s::string_at(v, {"metadata", "name"});
}

// A policy's action waiting for its timeout (Volcano's delayAction), until an event about its
// pod or another action cancels it.
struct delayed_action {
  uint64_t id = 0;
  scheduler::resolved_action action;
  std::string pod_uid;
};

// A Job as the controller keeps it.
struct job_entry {
  json::value raw;  // As last listed or watched.
  std::string uid;
  std::shared_ptr<const scheduler::job> job;  // Null when it does not decode: left alone.
  /// Its plugins' settings (scheduler::plugin_settings_of), read with `job`.
  scheduler::job_plugin_settings plugins;
  /// Its plugins' objects exist (Volcano's OnJobAdd ran in this process): from then on only the
  /// svc ConfigMap is kept in step with the spec (Volcano's OnJobUpdate).
  bool plugin_objects_made = false;
  /// The svc ConfigMap's data agrees with the spec as it is now (a spec change clears it).
  bool hosts_in_step = false;
  /// Its volumes' claims exist and their names are in the job's spec (Volcano's
  /// createJobIOIfNotExist went through in this process); a change of its volumes clears it.
  bool claims_ready = false;
  /// status.controlledResources as the status last written records it.
  json::object controlled_resources_written;
  /// The last PodGroupPending event's message (record_pod_group_pending): said once a change.
  std::string pod_group_pending_said;
  /// Steps that failed in a row (step_failed); a step that goes through clears it.
  int32_t failed_steps = 0;
  std::string spec_text;                      // Its spec, to see spec changes.
  /// Its PodGroup as expand_job makes it from the spec now, once a sync needed it (null before,
  /// and again after a spec change): what the PodGroup on the apiserver is kept in step with.
  std::shared_ptr<const scheduler::pod_group> group_wanted;
  /// The controller's record of the job's status: what it last wrote, or what the apiserver
  /// showed when the controller first saw the job.
  scheduler::job_status status;
  /// `status` holds the apiserver's (read once, when the job first decoded).
  bool status_loaded = false;
  /// The status has a phase (Volcano's initJobStatus ran).
  bool initiated = false;
  bool deleting = false;  // metadata.deletionTimestamp: Volcano leaves such a job alone.
  /// Its ttlSecondsAfterFinished passed and this controller deleted it: its watch event comes.
  bool deleted_after_ttl = false;
  /// A step failed: its event is handled again after retry_after (Volcano requeues it).
  bool retry_armed = false;
  scheduler::job_event_info retry_event;
  std::vector<delayed_action> delays;
  /// Syncs sent by steps that changed the phase, one after the other (see execute).
  int follow_ups = 0;
};

struct pod_entry {
  k8s::job_pod_facts facts;
  /// This controller marked and deleted it: terminating and out of sync until it is gone,
  /// whatever a watch event from before the delete says.
  bool deleted_by_us = false;
  /// The pod watch told of it. A pod this controller made is kept from its create's answer
  /// until then, and the watch's first word of it is its addition (PodPending).
  bool watched = false;
};

struct group_entry {
  std::string uid;
  std::string namespace_name, name;
  std::string phase;  // status.phase; "" before the scheduler wrote one.
  /// The object as last watched, or as this controller's create or patch answered: its spec is
  /// compared with the job's (k8s::job_pod_group_update).
  json::value raw;
};

// The Events this controller wrote on each job, so that the same Event again (a failed step tried
// every 2 s, an action its policy fires on every pod) bumps the count and lastTimestamp of the
// one written before instead of adding one more, as client-go's EventCorrelator aggregates a
// storm: a job shows one line per reason and message, with how often and when last. The same is
// type, reason and message on the same job (its uid). Per job the latest few are kept (a message
// that carries an error's text differs each time); a job's are forgotten when it goes.
// Best effort: an Event not written is logged, and the step goes on.
class job_event_log {
 public:
  void record(k8s::client& c, const json::value& raw_job, const std::string& job_uid,
              std::string_view type, std::string_view reason, const std::string& message) {
    const auto now = wall_now();
    const auto ns = k8s::string_at(raw_job, {"metadata", "namespace"});
    auto& written = written_[job_uid];
    auto same = std::find_if(written.begin(), written.end(), [&](const written_event& w) {
      return w.type == type && w.reason == reason && w.message == message;
    });
    if (same != written.end()) {
      json::object bump{{"count", same->count + 1}, {"lastTimestamp", api::format_time(now)}};
      auto patched = k8s::patch_json(c, "/api/v1/namespaces/" + ns + "/events/" + same->name,
                                     bump, k8s::patch_type::merge);
      if (patched) {
        ++same->count;
        std::rotate(same, same + 1, written.end());  // The latest last.
        return;
      }
      written.erase(same);
      // Gone (the apiserver keeps Events an hour by default): a new one is written.
      if (patched.error().code() != errc::not_found) {
        warn_not_written(raw_job, reason, patched.error());
        return;
      }
    }
    auto posted =
        k8s::create_event(c, ns, k8s::job_event_manifest(raw_job, type, reason, message, now));
    if (!posted) {
      warn_not_written(raw_job, reason, posted.error());
      return;
    }
    written.push_back({std::string(type), std::string(reason), message,
                       k8s::string_at(*posted, {"metadata", "name"}), 1});
    if (written.size() > kept_per_job)
      written.pop_front();
  }

  void forget(const std::string& job_uid) { written_.erase(job_uid); }

 private:
  struct written_event {
    std::string type, reason, message;
    std::string name;  // The Event's, as the apiserver completed it.
    int64_t count = 1;
  };
  static constexpr std::size_t kept_per_job = 16;

  static void warn_not_written(const json::value& raw_job, std::string_view reason,
                               const status& error) {
    oplog::warn("job event not written")
        .kv("job", key_of(raw_job))
        .kv("reason", std::string(reason))
        .kv("error", error.to_string());
  }

  std::unordered_map<std::string, std::deque<written_event>> written_;
};

struct controller_state {
  static inline const char* name = "phalanx.kube_job_controller";
  std::shared_ptr<k8s::client> client;
  std::function<bool()> may_act;
  std::map<std::string, job_entry> jobs;                    // By "<namespace>/<name>".
  std::unordered_map<std::string, std::string> key_of_uid;  // Job uid -> key.
  /// The pods of each job, by the uid of the job that controls them, then by name.
  std::unordered_map<std::string, std::map<std::string, pod_entry>> pods;
  /// Each job's PodGroup, by the uid of the job that controls it.
  std::unordered_map<std::string, group_entry> groups;
  /// PodGroups this controller deleted: a late watch event of one does not bring it back.
  std::unordered_set<std::string> deleted_groups;
  /// Whether each collection (kube_job_input::collection) was listed.
  bool listed[4] = {false, false, false, false};
  /// Commands (bus.volcano.sh/v1alpha1) aimed at a Job, not executed yet, by
  /// "<namespace>/<name>"; each waits here until it is executed or dropped, and leaves when its
  /// object is deleted.
  std::map<std::string, json::value> commands;
  job_event_log events;
  /// Acting: Jobs, pods and PodGroups were listed and this process leads.
  bool active = false;
  /// A job's failing step is tried again this many times, then the job is terminated
  /// (kubernetes_config::job_max_requeue); -1: without end.
  int32_t max_requeue = 15;
  /// The plugin objects (Service, NetworkPolicy, ConfigMap, Secret) and the claims their
  /// volumes made (PersistentVolumeClaims) of deleted jobs, by the deleted job's uid: their
  /// paths, each left until it is deleted or gone.
  std::unordered_map<std::string, std::vector<std::string>> plugin_objects_to_delete;
  /// A deleted job's objects were not all deleted: tried again at the next tick.
  bool collect_again = false;
  uint64_t next_delay_id = 1;
};

using self_ptr = kube_job_controller_actor::stateful_pointer<controller_state>;

const char* collection_name(kube_job_input::collection c) {
  switch (c) {
    case kube_job_input::collection::jobs: return "jobs";
    case kube_job_input::collection::pods: return "pods";
    case kube_job_input::collection::pod_groups: return "podgroups";
    case kube_job_input::collection::commands: return "commands";
  }
  return "?";
}

std::vector<scheduler::job_pod_view> views_of(const controller_state& st, const std::string& uid) {
  std::vector<scheduler::job_pod_view> out;
  if (auto i = st.pods.find(uid); i != st.pods.end())
    for (const auto& [name, p] : i->second)
      out.push_back(p.facts.view);
  return out;
}

// Volcano's controller makes a job's pods once the scheduler moved its PodGroup past Pending;
// Phalanx's scheduling side admits (Inqueue) only gangs that have pods, so a PodGroup without
// them would wait for ever. The pods are made at once, as the standalone controller makes them
// (registry_jobs.cpp), and the enqueue gate holds them unbound until it admits the gang.
constexpr bool pod_group_admitted = true;

std::string pods_path(const std::string& ns) { return "/api/v1/namespaces/" + ns + "/pods"; }

std::string group_path(const std::string& ns, const std::string& name) {
  return "/apis/scheduling.volcano.sh/v1beta1/namespaces/" + ns + "/podgroups/" + name;
}

bool gone(const status& s) {
  return s.code() == errc::not_found || s.code() == errc::conflict;
}

// -- the apiserver's side of a step: each call ok when done (or moot: the object is gone).

// What went wrong in one step: the step is tried again later, and the job gets the Warning
// Events Volcano's controller writes for it (FailedCreate, FailedDelete, PodGroupError).
struct step_failures {
  std::vector<std::string> created, deleted;  // Each failed call's error.
  std::string pod_group;                      // The PodGroup's create or update.
  std::string plugins;                        // A plugin object's create or update.
  std::string volumes;                        // A volume's claim: missing, or not made.
  bool any() const {
    return !created.empty() || !deleted.empty() || !pod_group.empty() || !plugins.empty() ||
           !volumes.empty();
  }
};

// Go's "%+v" of a list of errors, as Volcano's events print them: "[first second]".
std::string error_list(const std::vector<std::string>& errors) {
  std::string out = "[";
  for (const auto& e : errors)
    out += (out.size() > 1 ? " " : "") + e;
  return out + "]";
}

void record_event(self_ptr self, const job_entry& e, std::string_view type,
                  std::string_view reason, const std::string& message) {
  auto& st = self->state;
  st.events.record(*st.client, e.raw, e.uid, type, reason, message);
}

// Volcano's recordPodGroupEvent, at a sync: the PodGroup's latest condition that is True, when
// it is not Scheduled, as a Warning on the job: "PodGroup <ns>:<job> unschedulable, reason:
// <why>". Volcano records it at every sync (its recorder's spam filter thins them); here once
// per change of what it says, so that a pending job of many pods does not write an Event patch
// per pod event.
void record_pod_group_pending(self_ptr self, job_entry& e) {
  auto& st = self->state;
  auto g = st.groups.find(e.uid);
  if (g == st.groups.end())
    return;
  const json::value* latest = nullptr;
  std::string latest_time;
  if (const auto* conditions = k8s::value_at(g->second.raw, {"status", "conditions"});
      conditions != nullptr && conditions->is_array())
    for (const auto& c : conditions->as_array()) {
      if (k8s::string_at(c, {"status"}) != "True")
        continue;
      // RFC 3339 times of one format: their text orders as they do. The first of equals wins.
      auto time = k8s::string_at(c, {"lastTransitionTime"});
      if (latest == nullptr || time > latest_time) {
        latest = &c;
        latest_time = std::move(time);
      }
    }
  std::string said;
  if (latest != nullptr && k8s::string_at(*latest, {"type"}) != "Scheduled") {
    auto type = k8s::string_at(*latest, {"type"});
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    said = "PodGroup " + e.job->meta.namespace_name.str() + ":" + e.job->meta.name.str() + " " +
           type + ", reason: " + k8s::string_at(*latest, {"message"});
  }
  if (said == e.pod_group_pending_said)
    return;
  e.pod_group_pending_said = said;
  if (!said.empty())
    record_event(self, e, "Warning", "PodGroupPending", said);
}

// Volcano's killPods for one pod: the out-of-sync mark first (its deletion then raises
// OutOfSync, also for a process that restarts meanwhile), then the delete, both with the pod's
// uid as precondition.
status kill_pod(self_ptr self, const std::string& job_uid, const std::string& ns, pod_entry& p) {
  auto& st = self->state;
  const auto& name = p.facts.view.name;
  json::object patch{
      {"metadata", json::object{{"uid", p.facts.uid},
                                {"annotations",
                                 json::object{{scheduler::out_of_sync_key, "true"}}}}}};
  auto marked = k8s::patch_json(*st.client, pods_path(ns) + "/" + name, patch,
                                k8s::patch_type::merge);
  if (!marked && !gone(marked.error())) {
    oplog::warn("job pod not marked out of sync")
        .kv("pod", std::string(ns) + "/" + std::string(name))
        .kv("error", marked.error().to_string());
    return marked.error();
  }
  if (marked) {
    auto deleted = k8s::delete_object(*st.client, pods_path(ns) + "/" + name, p.facts.uid);
    if (!deleted.ok() && !gone(deleted)) {
      oplog::warn("job pod not deleted")
          .kv("pod", std::string(ns) + "/" + std::string(name))
          .kv("error", deleted.to_string());
      return deleted;
    }
  }
  p.deleted_by_us = true;
  p.facts.view.terminating = true;
  p.facts.view.out_of_sync = true;
  oplog::info("job pod deleted")
      .kv("pod", std::string(ns) + "/" + std::string(name))
      .kv("job_uid", job_uid);
  return {};
}

status delete_group(self_ptr self, const std::string& job_uid) {
  auto& st = self->state;
  auto g = st.groups.find(job_uid);
  if (g == st.groups.end())
    return {};
  const auto& group = g->second;
  auto deleted = k8s::delete_object(*st.client, group_path(group.namespace_name, group.name),
                                    group.uid);
  if (!deleted.ok() && !gone(deleted)) {
    oplog::warn("PodGroup of a job not deleted")
        .kv("podgroup", std::string(g->second.namespace_name) + "/" + std::string(g->second.name))
        .kv("error", deleted.to_string());
    return deleted;
  }
  st.deleted_groups.insert(g->second.uid);
  st.groups.erase(g);
  return {};
}

// Volcano's createOrUpdatePodGroup: the job's PodGroup made when it has none, else its
// minMember, minTaskMember, minResources and priorityClassName brought in step with the job's
// spec (a scale up or down changes them). Errors: the expansion's, the create's, the patch's.
status create_or_update_group(self_ptr self, job_entry& e) {
  auto& st = self->state;
  if (!e.group_wanted) {
    auto expanded = scheduler::expand_job(*e.job);
    if (!expanded) {
      oplog::error("job not expanded")
          .kv("job", key_of(e.raw))
          .kv("error", expanded.error().to_string());
      return expanded.error();
    }
    e.group_wanted = std::make_shared<const scheduler::pod_group>(std::move(expanded->group));
  }
  const auto& g = *e.group_wanted;
  const auto group_key = g.meta.namespace_name.str() + "/" + g.meta.name.str();
  if (auto known = st.groups.find(e.uid); known != st.groups.end()) {
    auto patch = k8s::job_pod_group_update(g, known->second.raw);
    if (!patch)
      return {};
    auto patched = k8s::patch_json(
        *st.client, group_path(known->second.namespace_name, known->second.name), *patch,
        k8s::patch_type::merge);
    if (!patched) {
      // Gone or replaced: its watch event comes, and the job's next sync makes it again.
      if (gone(patched.error()))
        return {};
      oplog::warn("PodGroup of a job not updated")
          .kv("podgroup", group_key)
          .kv("error", patched.error().to_string());
      return patched.error();
    }
    known->second.raw = std::move(*patched);
    oplog::info("PodGroup of a job updated")
        .kv("podgroup", group_key)
        .kv("min_member", g.min_member);
    return {};
  }
  auto manifest = k8s::job_pod_group_manifest(
      g, k8s::job_owner_reference(e.job->meta.name.view(), e.uid));
  auto made = k8s::post_json(*st.client,
                             "/apis/scheduling.volcano.sh/v1beta1/namespaces/" +
                                 g.meta.namespace_name.str() + "/podgroups",
                             manifest);
  if (!made) {
    if (made.error().code() == errc::already_exists)
      return {};  // The watch brings it; the next sync updates it if it differs.
    oplog::warn("PodGroup of a job not created")
        .kv("job", key_of(e.raw))
        .kv("error", made.error().to_string());
    return made.error();
  }
  st.groups[e.uid] = {k8s::string_at(*made, {"metadata", "uid"}), g.meta.namespace_name.str(),
                      g.meta.name.str(), k8s::string_at(*made, {"status", "phase"}), *made};
  oplog::info("PodGroup of a job created").kv("podgroup", group_key);
  return {};
}

// -- the objects of a job's plugins (scheduler/job_plugins.hpp)

std::string services_path(const std::string& ns) {
  return "/api/v1/namespaces/" + ns + "/services";
}
std::string config_maps_path(const std::string& ns) {
  return "/api/v1/namespaces/" + ns + "/configmaps";
}
std::string secrets_path(const std::string& ns) {
  return "/api/v1/namespaces/" + ns + "/secrets";
}
std::string network_policies_path(const std::string& ns) {
  return "/apis/networking.k8s.io/v1/namespaces/" + ns + "/networkpolicies";
}

// The paths of job `j`'s plugin objects as `plugins` make them.
std::vector<std::string> plugin_object_paths(const scheduler::job& j,
                                             const scheduler::job_plugin_settings& plugins) {
  const auto ns = j.meta.namespace_name.str();
  const auto name = j.meta.name.str();
  std::vector<std::string> out;
  if (plugins.svc) {
    out.push_back(config_maps_path(ns) + "/" + scheduler::svc_config_map_name(name));
    out.push_back(services_path(ns) + "/" + name);
    if (!plugins.svc->disable_network_policy)
      out.push_back(network_policies_path(ns) + "/" + name);
  }
  if (plugins.ssh)
    out.push_back(secrets_path(ns) + "/" + scheduler::ssh_secret_name(name));
  if (plugins.ray)
    out.push_back(services_path(ns) + "/" + scheduler::ray_head_service_name(name));
  return out;
}

// Job `e`'s object `name` in `collection`, as the apiserver has it after this: kept as it is
// when it exists (Volcano's create-if-not-exist; a restarted process thus keeps the ssh Secret
// its pods already mount), made from `make()` when missing. One that another Volcano Job
// controls is left by an earlier job of the same name that nobody collected (deleted while
// no controller acted, on a cluster without a garbage collector): it is deleted and made anew,
// so that the job's objects are its own and go with it. Errors: the apiserver's, make()'s.
result<json::value> ensure_plugin_object(self_ptr self, const job_entry& e,
                                         const std::string& collection, const std::string& name,
                                         const std::function<result<json::value>()>& make) {
  auto& st = self->state;
  const auto path = collection + "/" + name;
  auto have = k8s::get_json(*st.client, path);
  if (have) {
    auto owner = k8s::controlling_job(*have);
    if (!owner || owner->uid == e.uid)
      return have;
    auto deleted =
        k8s::delete_object(*st.client, path, k8s::string_at(*have, {"metadata", "uid"}));
    if (!deleted.ok() && !gone(deleted))
      return deleted;
    oplog::info("plugin object of an earlier job of the same name deleted")
        .kv("object", path)
        .kv("job", key_of(e.raw))
        .kv("earlier_job_uid", owner->uid);
  } else if (have.error().code() != errc::not_found) {
    return have.error();
  }
  auto manifest = make();
  if (!manifest)
    return manifest.error();
  auto made = k8s::post_json(*st.client, collection, *manifest);
  if (!made)
    return made.error();  // An already_exists too: made meanwhile; the retry reads it.
  oplog::info("plugin object of a job created").kv("object", path).kv("job", key_of(e.raw));
  return made;
}

// The objects of job `e`'s plugins on the apiserver. The first time in this process, Volcano's
// OnJobAdd: the svc plugin's ConfigMap, Service and NetworkPolicy, the ssh plugin's Secret, the
// ray plugin's head Service, each made when missing; then, after each change of the spec,
// Volcano's OnJobUpdate: the svc ConfigMap's host lists brought in step (a scaled task). The ssh
// Secret is never updated, as Volcano's OnJobUpdate leaves it: a Secret mounted with subPath
// does not reach running pods.
// Errors: the first call that failed; what succeeded before it stays done.
status sync_plugin_objects(self_ptr self, job_entry& e) {
  auto& st = self->state;
  const auto& j = *e.job;
  const auto ns = j.meta.namespace_name.str();
  const auto name = j.meta.name.str();
  if (e.plugins.svc && (!e.plugin_objects_made || !e.hosts_in_step)) {
    const auto cm_name = scheduler::svc_config_map_name(name);
    auto cm = ensure_plugin_object(self, e, config_maps_path(ns), cm_name, [&] {
      return result<json::value>(k8s::job_hosts_config_map_manifest(j, e.uid));
    });
    if (!cm)
      return cm.error();
    if (auto patch = k8s::job_hosts_config_map_update(j, *cm)) {
      auto patched = k8s::patch_json(*st.client, config_maps_path(ns) + "/" + cm_name, *patch,
                                     k8s::patch_type::merge);
      if (!patched)
        return patched.error();
      oplog::info("job hosts updated").kv("configmap", ns + "/" + cm_name);
    }
    e.hosts_in_step = true;
  }
  if (e.plugin_objects_made)
    return {};
  if (e.plugins.svc) {
    auto service = ensure_plugin_object(self, e, services_path(ns), name, [&] {
      return result<json::value>(k8s::job_service_manifest(j, e.uid, *e.plugins.svc));
    });
    if (!service)
      return service.error();
    if (!e.plugins.svc->disable_network_policy) {
      auto policy = ensure_plugin_object(self, e, network_policies_path(ns), name, [&] {
        return result<json::value>(k8s::job_network_policy_manifest(j, e.uid));
      });
      if (!policy)
        return policy.error();
    }
  }
  if (e.plugins.ssh) {
    auto secret = ensure_plugin_object(
        self, e, secrets_path(ns), scheduler::ssh_secret_name(name), [&]() -> result<json::value> {
          auto keys = k8s::ssh_key_pair_for(*e.plugins.ssh);
          if (!keys)
            return keys.error();
          return k8s::job_ssh_secret_manifest(j, e.uid, *keys, e.plugins.ssh->port);
        });
    if (!secret)
      return secret.error();
  }
  if (e.plugins.ray) {
    auto head = ensure_plugin_object(
        self, e, services_path(ns), scheduler::ray_head_service_name(name), [&] {
          return result<json::value>(k8s::job_ray_head_service_manifest(j, e.uid, *e.plugins.ray));
        });
    if (!head)
      return head.error();
  }
  e.plugin_objects_made = true;
  return {};
}

// What a job's status records in status.controlledResources: its plugins, as Volcano's OnJobAdd
// does ("plugin-<name>": "<name>"), once their objects exist; its volumes' claims, as Volcano's
// createJobIOIfNotExist does ("volume-pvc-<claim>": "<claim>"), once they exist.
json::object controlled_resources_of(const job_entry& e) {
  json::object out;
  if (e.plugin_objects_made)
    for (auto name : scheduler::controlled_plugins(e.plugins))
      out["plugin-" + std::string(name)] = name;
  if (e.claims_ready)
    for (const auto& claim : scheduler::named_claims(*e.job))
      out[scheduler::claim_resource_key(claim)] = claim;
  return out;
}

std::string claims_path(const std::string& ns) {
  return "/api/v1/namespaces/" + ns + "/persistentvolumeclaims";
}

// The claims a job's volumes make (those with a volumeClaim), each under the name its spec
// gives or the one generated for it: what goes with the job.
std::vector<std::string> made_claim_paths(const scheduler::job& j) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < j.volumes.size(); ++i)
    if (j.volumes[i].has_volume_claim)
      out.push_back(claims_path(j.meta.namespace_name.str()) + "/" +
                    (j.volumes[i].volume_claim_name.empty()
                         ? scheduler::generated_claim_name(j.meta.name.view(), j.meta.uid.str(), i)
                         : j.volumes[i].volume_claim_name));
  return out;
}

// Volcano's createJobIOIfNotExist, until it goes through once in this process: each volume's
// claim, in the order of spec.volumes. A volume that describes its claim (volumeClaim) gets it
// made when missing (k8s::job_volume_claim_manifest), under its volumeClaimName or else its
// generated name, which is the same at every try (scheduler::generated_claim_name): a step
// that failed or a process that stopped half-way finds the claim it made. A volume that only
// names a claim needs that claim to exist: failed_precondition in Volcano's words ("pvc X is not
// found, the job will be in the Pending state until the PVC is created"), and the step is tried
// again (as every failed step, up to the requeue limit). Then the generated names are written
// into the Job's spec (k8s::job_volume_claim_names_patch), before any pod mounts them; `e` takes
// the named job and the Job as written. Errors: the first call that failed.
status sync_volume_claims(self_ptr self, job_entry& e) {
  auto& st = self->state;
  if (e.claims_ready)
    return {};
  auto named = std::make_shared<scheduler::job>(*e.job);
  scheduler::name_volume_claims(*named);
  const auto ns = named->meta.namespace_name.str();
  const auto* raw_volumes = k8s::value_at(e.raw, {"spec", "volumes"});
  for (std::size_t i = 0; i < named->volumes.size(); ++i) {
    const auto& v = named->volumes[i];
    const auto path = claims_path(ns) + "/" + v.volume_claim_name;
    auto have = k8s::get_json(*st.client, path);
    if (have)
      continue;
    if (have.error().code() != errc::not_found)
      return have.error();
    const json::value* claim_spec = nullptr;
    if (raw_volumes != nullptr && raw_volumes->is_array() && i < raw_volumes->as_array().size())
      claim_spec = k8s::value_at(raw_volumes->as_array()[i], {"volumeClaim"});
    if (!v.has_volume_claim || claim_spec == nullptr)
      return status{errc::failed_precondition,
                    scheduler::claim_not_found_message(v.volume_claim_name)};
    auto made = k8s::post_json(
        *st.client, claims_path(ns),
        k8s::job_volume_claim_manifest(*named, e.uid, v.volume_claim_name, *claim_spec));
    if (!made && made.error().code() != errc::already_exists)
      return made.error();
    oplog::info("claim of a job's volume created")
        .kv("claim", ns + "/" + v.volume_claim_name)
        .kv("job", key_of(e.raw));
  }
  if (auto patch = k8s::job_volume_claim_names_patch(e.raw, *named)) {
    auto written = k8s::patch_json(*st.client,
                                   "/apis/batch.volcano.sh/v1alpha1/namespaces/" + ns + "/jobs/" +
                                       named->meta.name.str(),
                                   *patch, k8s::patch_type::json_patch);
    if (!written)
      return written.error();
    oplog::info("claims' names written into the job").kv("job", key_of(e.raw));
    // The watch event of this write brings no change of the spec.
    e.raw = std::move(*written);
    const auto* spec = k8s::value_at(e.raw, {"spec"});
    e.spec_text = spec ? json::serialize(*spec) : std::string();
  }
  e.job = std::move(named);
  e.claims_ready = true;
  return {};
}

// Deletes plugin object `path` of deleted job `job_uid`, unless it is gone or another job's
// (one of the same name made since). Errors: the apiserver's.
status delete_plugin_object(self_ptr self, const std::string& job_uid, const std::string& path) {
  auto& st = self->state;
  auto have = k8s::get_json(*st.client, path);
  if (!have)
    return have.error().code() == errc::not_found ? status{} : have.error();
  auto owner = k8s::controlling_job(*have);
  if (!owner || owner->uid != job_uid)
    return {};
  auto deleted = k8s::delete_object(*st.client, path, k8s::string_at(*have, {"metadata", "uid"}));
  if (!deleted.ok() && !gone(deleted))
    return deleted;
  oplog::info("plugin object of a deleted job deleted").kv("object", path);
  return {};
}

// Volcano's syncJob, the pods' half: the missing pods made (when `create`), the surplus and
// marked ones deleted.
void sync_pods(self_ptr self, const job_entry& e, const scheduler::job_status& status,
               bool create, step_failures& failures) {
  auto& st = self->state;
  const auto ns = e.job->meta.namespace_name.str();
  auto plan = scheduler::plan_job_sync(*e.job, views_of(st, e.uid));
  auto& pods = st.pods[e.uid];
  for (const auto& name : plan.remove)
    if (auto p = pods.find(name); p != pods.end())
      if (auto killed = kill_pod(self, e.uid, ns, p->second); !killed.ok())
        failures.deleted.push_back(killed.to_string());
  if (!create || plan.create.empty())
    return;
  auto made = scheduler::make_job_pods(*e.job, plan.create);
  if (!made) {
    oplog::error("job pods not made")
        .kv("job", key_of(e.raw))
        .kv("error", made.error().to_string());
    failures.created.push_back(made.error().to_string());
    return;
  }
  for (auto& p : *made) {
    p.meta.annotations.set(scheduler::job_version_key, std::to_string(status.version));
    p.meta.annotations.set(scheduler::job_retry_count_key, std::to_string(status.retry_count));
    auto manifest = k8s::job_pod_manifest(e.raw, *e.job, p);
    if (!manifest) {
      oplog::error("job pod not made")
          .kv("pod", std::string(ns) + "/" + std::string(p.meta.name.str()))
          .kv("error", manifest.error().to_string());
      failures.created.push_back(manifest.error().to_string());
      continue;
    }
    auto created = k8s::post_json(*st.client, pods_path(ns), *manifest);
    if (!created) {
      // Taken: another pod of that name (the watch brings it; a sync deletes it if it is not
      // the job's to keep), as Volcano skips AlreadyExists.
      if (created.error().code() == errc::already_exists)
        continue;
      oplog::warn("job pod not created")
          .kv("pod", std::string(ns) + "/" + std::string(p.meta.name.str()))
          .kv("error", created.error().to_string());
      failures.created.push_back(created.error().to_string());
      continue;
    }
    auto facts = k8s::read_job_pod(*created);
    oplog::info("job pod created")
        .kv("pod", std::string(ns) + "/" + std::string(facts.view.name))
        .kv("uid", facts.uid);
    auto name = facts.view.name;  // Before the move: an assignment's right side goes first.
    pods[name] = {std::move(facts), false, false};
  }
}

bool write_status(self_ptr self, job_entry& e, const scheduler::job_status& status) {
  auto& st = self->state;
  auto value = k8s::job_status_json(status);
  // The status is written whole: the plugins' and claims' record goes with every write.
  auto controlled = controlled_resources_of(e);
  if (!controlled.empty() && value.is_object())
    value.as_object()["controlledResources"] = controlled;
  json::array patch{json::object{{"op", "add"}, {"path", "/status"}, {"value", std::move(value)}}};
  auto path = "/apis/batch.volcano.sh/v1alpha1/namespaces/" + e.job->meta.namespace_name.str() +
              "/jobs/" + e.job->meta.name.str() + "/status";
  auto written = k8s::patch_json(*st.client, path, patch, k8s::patch_type::json_patch);
  if (!written && written.error().code() != errc::not_found) {
    oplog::warn("job status not written")
        .kv("job", key_of(e.raw))
        .kv("error", written.error().to_string());
    return false;
  }
  e.status = status;
  e.controlled_resources_written = std::move(controlled);
  return true;
}

// A failed step's event is handled again later, as Volcano requeues the job's request: its
// policies are consulted anew then. Of several failed events the first that is not a plain sync
// is kept.
void retry_later(self_ptr self, job_entry& e, const scheduler::job_event_info& event) {
  if (!e.retry_armed || e.retry_event.event == scheduler::job_event::out_of_sync)
    e.retry_event = event;
  if (e.retry_armed)
    return;
  e.retry_armed = true;
  auto t = std::make_shared<kube_job_timer>();
  t->job_key = key_of(e.raw);
  t->job_uid = e.uid;
  self->delayed_send(self, retry_after, timeout_atom::value, kube_job_timer_ptr{std::move(t)});
}

void execute(self_ptr self, const std::string& key, const scheduler::resolved_action& action);

// A step of `action` failed: tried again later (retry_later), as Volcano requeues the job, until
// it failed max_requeue times more; then, as Volcano's handleJobError, the job is terminated
// (its pods deleted, Terminating, then Terminated) with a Normal ExecuteAction event "Job failed
// on action X for retry limit reached". A terminate that fails too is tried again as any step.
void step_failed(self_ptr self, const std::string& key, job_entry& e,
                 const scheduler::resolved_action& action) {
  auto& st = self->state;
  ++e.failed_steps;
  if (st.max_requeue < 0 || e.failed_steps <= st.max_requeue ||
      action.action == scheduler::job_action::terminate_job)
    return retry_later(self, e, action.cause);
  record_event(self, e, "Normal", "ExecuteAction",
               "Job failed on action " + std::string(scheduler::to_string(action.action)) +
                   " for retry limit reached");
  oplog::warn("job step failed too often: terminating the job")
      .kv("job", key)
      .kv("action", scheduler::to_string(action.action))
      .kv("failures", int64_t{e.failed_steps});
  e.failed_steps = 0;
  scheduler::resolved_action terminate;
  terminate.action = scheduler::job_action::terminate_job;
  terminate.cause = action.cause;
  execute(self, key, terminate);
}

// The job's Warning Events for a step that failed, in Volcano's words.
void record_failures(self_ptr self, const job_entry& e, const step_failures& failures) {
  // Volcano's words for OnJobAdd and OnJobUpdate alike.
  if (!failures.plugins.empty())
    record_event(self, e, "Warning", "PluginError",
                 "Execute plugin when job add failed, err: " + failures.plugins);
  if (!failures.volumes.empty())
    record_event(self, e, "Warning", "PVCError", "Failed to create PVC, err: " + failures.volumes);
  if (!failures.pod_group.empty())
    record_event(self, e, "Warning", "PodGroupError",
                 "Failed to create PodGroup, err: " + failures.pod_group);
  if (!failures.created.empty())
    record_event(self, e, "Warning", "FailedCreate",
                 "Error creating pods: " + error_list(failures.created));
  if (!failures.deleted.empty())
    record_event(self, e, "Warning", "FailedDelete",
                 "Error deleting pods: " + error_list(failures.deleted));
}

// One step of the lifecycle for `action` (Volcano's state handlers): what next_state decides, on
// the apiserver. The status is written only when every call of the step went through, as
// Volcano writes none after a failed kill or create; the step's event is handled again later.
void execute(self_ptr self, const std::string& key, const scheduler::resolved_action& action) {
  auto& st = self->state;
  auto& e = st.jobs.at(key);
  const auto ns = e.job->meta.namespace_name.str();
  const auto views = views_of(st, e.uid);
  auto t = scheduler::next_state(*e.job, e.status,
                                 scheduler::count_job_pods(views, pod_group_admitted), action,
                                 wall_now());
  step_failures failures;
  bool group_deleted = true;
  if (t.kill.scope != scheduler::kill_scope::none)
    for (auto& [name, p] : st.pods[e.uid])
      if (!p.facts.view.terminating && scheduler::kill_takes(t.kill, p.facts.view))
        if (auto killed = kill_pod(self, e.uid, ns, p); !killed.ok())
          failures.deleted.push_back(killed.to_string());
  if (t.delete_pod_group)
    group_deleted = delete_group(self, e.uid).ok();
  const bool goes_on = !scheduler::is_finished(t.status.phase) && !t.delete_pod_group;
  if (action.action == scheduler::job_action::sync_job)
    record_pod_group_pending(self, e);
  if (goes_on) {
    // Volcano's initiateJob and initOnJobUpdate: the plugins' objects before the PodGroup and
    // the pods, which mount them; nothing more while they fail.
    if (auto plugins = sync_plugin_objects(self, e); !plugins.ok()) {
      failures.plugins = plugins.to_string();
    } else if (auto claims = sync_volume_claims(self, e); !claims.ok()) {
      // A missing claim in Volcano's words; the apiserver's errors as they are.
      failures.volumes =
          claims.code() == errc::failed_precondition ? claims.message() : claims.to_string();
    } else {
      if (auto group = create_or_update_group(self, e); !group.ok())
        failures.pod_group = group.to_string();
      // Volcano's syncTask (see pod_group_admitted).
      if (t.kill.scope == scheduler::kill_scope::none)
        sync_pods(self, e, t.status, t.create_missing_pods, failures);
    }
  }
  if (failures.any() || !group_deleted) {
    record_failures(self, e, failures);
    return step_failed(self, key, e, action);
  }
  if (action.action != scheduler::job_action::sync_job) {
    std::erase_if(e.delays, [&](const delayed_action& d) {
      return scheduler::action_cancels_delay(action, d.action);
    });
  }
  const auto from = e.status.phase;
  const bool record_controlled = e.controlled_resources_written != controlled_resources_of(e);
  if ((!(t.status == e.status) || record_controlled) && !write_status(self, e, t.status))
    return step_failed(self, key, e, action);
  e.failed_steps = 0;
  if (t.phase_changed) {
    oplog::info("job phase")
        .kv("job", key)
        .kv("from", scheduler::to_string(from))
        .kv("to", scheduler::to_string(t.status.phase))
        .kv("action", scheduler::to_string(action.action))
        .kv("reason", t.status.reason)
        .kv("message", t.status.message)
        .kv("pending", t.status.pending)
        .kv("running", t.status.running)
        .kv("succeeded", t.status.succeeded)
        .kv("failed", t.status.failed)
        .kv("terminating", t.status.terminating)
        .kv("retry_count", t.status.retry_count);
    // What Volcano's controller does on the job's update event after a phase change: sync again
    // (a restart whose pods are gone already goes on to Pending so).
    if (e.follow_ups < max_follow_ups) {
      ++e.follow_ups;
      self->send(self, job_sync_atom::value, key);
    } else {
      oplog::warn("job phase changed too often in a row; no further sync until its next event")
          .kv("job", key)
          .kv("changes", int64_t{max_follow_ups} + 1);
    }
  }
}

// An event about job `key` (Volcano's processNextReq): the action its policies name, now or
// after the policy's timeout.
void handle_event(self_ptr self, const std::string& key, const scheduler::job_event_info& event,
                  const std::string& pod_uid = {}, bool follow_up = false) {
  auto& st = self->state;
  if (!st.active)
    return;
  auto i = st.jobs.find(key);
  if (i == st.jobs.end() || !i->second.job || i->second.deleting)
    return;
  auto& e = i->second;
  if (!follow_up)
    e.follow_ups = 0;
  // Volcano's CleanPodDelayActionsIfNeed: this event about a pod may cancel actions delayed for
  // it.
  if (!event.pod.empty())
    std::erase_if(e.delays, [&](const delayed_action& d) {
      return d.action.cause.pod == event.pod &&
             scheduler::pod_event_cancels_delay(d.action.cause.event, event.event,
                                                d.pod_uid == pod_uid);
    });
  if (!e.initiated) {
    // Volcano's initJobStatus: Pending since now, with its condition.
    auto init = scheduler::initial_transition(*e.job, wall_now());
    if (!write_status(self, e, init.status))
      return retry_later(self, e, event);
    e.initiated = true;
    oplog::info("job initiated").kv("job", key);
  }
  auto action = scheduler::resolve_action(*e.job, e.status, event);
  if (action.delay > scheduler::duration::zero()) {
    const auto delay = action.delay;
    action.delay = {};
    delayed_action d{st.next_delay_id++, std::move(action), pod_uid};
    auto t = std::make_shared<kube_job_timer>();
    t->job_key = key;
    t->job_uid = e.uid;
    t->delay_id = d.id;
    oplog::info("job action delayed")
        .kv("job", key)
        .kv("action", scheduler::to_string(d.action.action))
        .kv("after_ms", std::chrono::duration_cast<std::chrono::milliseconds>(delay).count());
    record_event(self, e, "Normal", "ExecuteAction",
                 "Execute action " + std::string(scheduler::to_string(d.action.action)) +
                     " after " +
                     scheduler::format_duration_ns(
                         std::chrono::duration_cast<std::chrono::nanoseconds>(delay).count()));
    e.delays.push_back(std::move(d));
    self->delayed_send(self, delay, timeout_atom::value, kube_job_timer_ptr{std::move(t)});
    return;
  }
  // Volcano announces every action but a sync before it runs it, and again when the step is
  // tried again (here the Event's count grows).
  if (action.action != scheduler::job_action::sync_job)
    record_event(self, e, "Normal", "ExecuteAction",
                 "Start to execute action " + std::string(scheduler::to_string(action.action)));
  execute(self, key, action);
}

void sync_job(self_ptr self, const std::string& key) {
  handle_event(self, key, scheduler::job_event_info{});
}

void on_timer(self_ptr self, const kube_job_timer& t) {
  auto& st = self->state;
  auto i = st.jobs.find(t.job_key);
  if (i == st.jobs.end() || i->second.uid != t.job_uid)
    return;
  auto& e = i->second;
  if (t.delay_id == 0) {
    e.retry_armed = false;
    auto event = std::exchange(e.retry_event, {});
    return handle_event(self, t.job_key, event);
  }
  auto d = std::find_if(e.delays.begin(), e.delays.end(),
                        [&](const delayed_action& x) { return x.id == t.delay_id; });
  if (d == e.delays.end() || !st.active || !e.job || e.deleting)
    return;  // Cancelled meanwhile.
  auto action = std::move(d->action);
  e.delays.erase(d);
  if (scheduler::is_finished(e.status.phase))
    return;
  oplog::info("job delayed action due")
      .kv("job", t.job_key)
      .kv("action", scheduler::to_string(action.action));
  execute(self, t.job_key, action);
}

// -- what the watches saw

// The pods and PodGroup of a job that is gone (deleted, or another job under its name), deleted
// as the garbage collector would delete them by their owner reference.
void collect(self_ptr self, const std::string& job_uid) {
  auto& st = self->state;
  if (!st.active)
    return;
  bool ok = delete_group(self, job_uid).ok();
  if (auto left = st.plugin_objects_to_delete.find(job_uid);
      left != st.plugin_objects_to_delete.end()) {
    std::erase_if(left->second, [&](const std::string& path) {
      auto deleted = delete_plugin_object(self, job_uid, path);
      if (!deleted.ok())
        oplog::warn("plugin object of a deleted job not deleted")
            .kv("object", path)
            .kv("error", deleted.to_string());
      return deleted.ok();
    });
    if (left->second.empty())
      st.plugin_objects_to_delete.erase(left);
    else
      ok = false;
  }
  if (auto i = st.pods.find(job_uid); i != st.pods.end())
    for (auto& [name, p] : i->second) {
      if (p.facts.view.terminating)
        continue;
      auto deleted = k8s::delete_object(*st.client, pods_path(p.facts.namespace_name) + "/" + name,
                                        p.facts.uid);
      if (!deleted.ok() && !gone(deleted)) {
        oplog::warn("pod of a deleted job not deleted")
            .kv("pod", std::string(p.facts.namespace_name) + "/" + std::string(name))
            .kv("error", deleted.to_string());
        ok = false;
        continue;
      }
      p.deleted_by_us = true;
      p.facts.view.terminating = true;
      p.facts.view.out_of_sync = true;
    }
  if (!ok)
    st.collect_again = true;
}

void job_gone(self_ptr self, const std::string& key) {
  auto& st = self->state;
  auto i = st.jobs.find(key);
  if (i == st.jobs.end())
    return;
  auto uid = i->second.uid;
  if (i->second.job) {
    // Its plugins' objects and the claims its volumes made, each deleted if the job controls it.
    auto paths = plugin_object_paths(*i->second.job, i->second.plugins);
    for (auto& path : made_claim_paths(*i->second.job))
      paths.push_back(std::move(path));
    if (!paths.empty())
      st.plugin_objects_to_delete[uid] = std::move(paths);
  }
  st.jobs.erase(i);
  st.key_of_uid.erase(uid);
  st.events.forget(uid);
  oplog::info("job deleted: its pods, PodGroup and plugin objects go")
      .kv("job", key)
      .kv("uid", uid);
  collect(self, uid);
}

void job_seen(self_ptr self, const json::value& raw) {
  auto& st = self->state;
  auto key = key_of(raw);
  auto uid = k8s::string_at(raw, {"metadata", "uid"});
  if (auto i = st.jobs.find(key); i != st.jobs.end() && i->second.uid != uid)
    job_gone(self, key);  // Deleted and made again under its name while the watch was away.
  auto [i, fresh] = st.jobs.try_emplace(key);
  auto& e = i->second;
  const auto* spec = k8s::value_at(raw, {"spec"});
  auto spec_text = spec ? json::serialize(*spec) : std::string();
  const bool spec_changed = fresh || spec_text != e.spec_text;
  e.raw = raw;
  e.uid = uid;
  e.deleting = !k8s::string_at(raw, {"metadata", "deletionTimestamp"}).empty();
  st.key_of_uid[uid] = key;
  if (spec_changed) {
    e.spec_text = std::move(spec_text);
    e.group_wanted.reset();
    e.hosts_in_step = false;
    api::decode_options o;
    o.expected_kind = api::resource_kind::job;
    o.read_status = true;
    o.validate = true;
    auto decoded = api::decode_object(raw, o);
    if (!decoded) {
      oplog::warn("job left alone: it does not decode")
          .kv("job", key)
          .kv("error", decoded.error().message);
      e.job.reset();
      // Where its user looks (kubectl describe vcjob), once per spec: Volcano's admission
      // webhook would have refused it, and this process runs none.
      if (st.active)
        record_event(self, e, "Warning", "InvalidSpec",
                     "the job is not acted on until its spec is mended: " +
                         decoded.error().message);
      return;
    }
    auto& obj = std::get<api::job_object>(*decoded);
    // Volcano's admission webhook makes maxRetry 0 (or unset) its default, 3.
    if (obj.job.max_retry == 0)
      obj.job.max_retry = 3;
    if (!e.status_loaded) {
      e.status_loaded = true;
      e.status = obj.status;
      e.initiated = !k8s::string_at(raw, {"status", "state", "phase"}).empty();
    }
    // Volumes changed (Volcano's webhook forbids it; without the webhook a user may): their
    // claims are seen to again before the next pod is made.
    if (e.job && e.job->volumes != obj.job.volumes)
      e.claims_ready = false;
    e.job = std::make_shared<const scheduler::job>(std::move(obj.job));
    e.plugins = scheduler::plugin_settings_of(*e.job);
    sync_job(self, key);
  }
}

// The event a pod's change raises for its job (Volcano's addPod, updatePod, deletePod).
// `restarted`: the change is an update in which the pod's restart count grew, so its task may
// have failed (TaskFailed).
void pod_changed(self_ptr self, const std::string& job_uid, const pod_entry& p,
                 scheduler::pod_change_info change, bool restarted = false) {
  auto& st = self->state;
  if (!st.active)
    return;
  auto k = st.key_of_uid.find(job_uid);
  if (k == st.key_of_uid.end())
    return;
  auto j = st.jobs.find(k->second);
  if (j == st.jobs.end() || !j->second.job)
    return;
  const auto& f = p.facts;
  change.new_phase = f.view.phase;
  change.out_of_sync = change.out_of_sync || f.view.out_of_sync || p.deleted_by_us;
  const auto views = views_of(st, job_uid);
  change.task_completed = scheduler::task_completed(
      *j->second.job, scheduler::count_job_pods(views, pod_group_admitted), f.view.task);
  // Volcano's cache sums the restarts of the task's live pods at the update of one of them and
  // raises TaskFailed once they reach the task's maxRetry (pod_event takes it only for a Running
  // or Pending pod that stays so). Only a grown count asks: any other update would raise it again
  // for restarts already acted on.
  if (restarted)
    if (const auto* task = scheduler::task_named(*j->second.job, f.view.task))
      change.task_failed =
          scheduler::task_failed(*task, scheduler::task_restarts(views, f.view.task));
  scheduler::job_event_info e;
  e.event = scheduler::pod_event(change);
  e.task = f.view.task;
  e.pod = f.view.name;
  if (change.change != scheduler::pod_change::deleted)
    e.pod_state = f.view.phase;
  if (e.event == scheduler::job_event::pod_failed)
    e.exit_code = f.exit_code;
  e.job_uid = scheduler::object_uid(job_uid);
  e.job_version = f.job_version.value_or(0);
  handle_event(self, k->second, e, f.uid);
}

void pod_seen(self_ptr self, const json::value& raw) {
  auto& st = self->state;
  auto facts = k8s::read_job_pod(raw);
  if (facts.job_uid.empty())
    return;
  auto& pods = st.pods[facts.job_uid];
  scheduler::pod_change_info change;
  change.change = scheduler::pod_change::added;
  auto [i, fresh] = pods.try_emplace(facts.view.name);
  auto& p = i->second;
  const bool same = !fresh && p.facts.uid == facts.uid;
  bool restarted = false;
  if (same && p.watched) {
    change.change = scheduler::pod_change::updated;
    change.old_phase = p.facts.view.phase;
    restarted = facts.view.restarts > p.facts.view.restarts;
  }
  if (same && p.deleted_by_us) {
    facts.view.terminating = true;
    facts.view.out_of_sync = true;
  }
  if (!same)
    p.deleted_by_us = false;
  p.watched = true;
  p.facts = std::move(facts);
  if (!st.key_of_uid.count(p.facts.job_uid)) {
    // Its job is gone: the pod goes too, once everything is listed (the job may come later in
    // the list order otherwise).
    if (st.active && !p.facts.view.terminating)
      collect(self, p.facts.job_uid);
    return;
  }
  pod_changed(self, p.facts.job_uid, p, change, restarted);
}

// Pod `name` (uid `uid`) of job `job_uid` is gone; `last` is its last state when the watch
// told it (a list that lacks it does not).
void pod_gone(self_ptr self, const std::string& job_uid, const std::string& name,
              const std::string& uid, const k8s::job_pod_facts* last) {
  auto& st = self->state;
  auto i = st.pods.find(job_uid);
  if (job_uid.empty() || i == st.pods.end())
    return;
  auto p = i->second.find(name);
  if (p == i->second.end() || p->second.facts.uid != uid)
    return;  // Not the incarnation known.
  pod_entry was = std::move(p->second);
  if (last != nullptr)
    was.facts.view = last->view;
  was.facts.view.out_of_sync = was.facts.view.out_of_sync || was.deleted_by_us;
  i->second.erase(p);
  if (i->second.empty())
    st.pods.erase(i);
  scheduler::pod_change_info change;
  change.change = scheduler::pod_change::deleted;
  pod_changed(self, job_uid, was, change);
}

void pod_deleted(self_ptr self, const json::value& raw) {
  auto facts = k8s::read_job_pod(raw);
  pod_gone(self, facts.job_uid, facts.view.name, facts.uid, &facts);
}

void group_seen(self_ptr self, const json::value& raw) {
  auto& st = self->state;
  auto owner = k8s::controlling_job(raw);
  auto uid = k8s::string_at(raw, {"metadata", "uid"});
  if (!owner || st.deleted_groups.count(uid))
    return;
  auto& g = st.groups[owner->uid];
  const auto before = g.uid == uid ? g.phase : std::string("?");
  g.uid = uid;
  g.namespace_name = k8s::string_at(raw, {"metadata", "namespace"});
  g.name = k8s::string_at(raw, {"metadata", "name"});
  g.phase = k8s::string_at(raw, {"status", "phase"});
  g.raw = raw;
  // Why it waits, as soon as the scheduler says so: its conditions change without its phase
  // (Inqueue, then Unschedulable), which would otherwise wait for the job's next sync.
  if (st.active)
    if (auto k = st.key_of_uid.find(owner->uid); k != st.key_of_uid.end())
      if (auto j = st.jobs.find(k->second); j != st.jobs.end() && j->second.job)
        record_pod_group_pending(self, j->second);
  if (before == g.phase || !st.active)
    return;
  auto k = st.key_of_uid.find(owner->uid);
  if (k == st.key_of_uid.end()) {
    // Its job is gone. A delete that failed is logged, and the next tick collects again.
    if (!delete_group(self, owner->uid).ok())
      st.collect_again = true;
    return;
  }
  // Volcano's updatePodGroup: a phase change syncs the job; Unknown raises the job's Unknown.
  scheduler::job_event_info e;
  if (g.phase == "Unknown")
    e.event = scheduler::job_event::unknown;
  handle_event(self, k->second, e);
}

// Job `job_uid`'s PodGroup `uid` is gone.
void group_gone(self_ptr self, const std::string& job_uid, const std::string& uid) {
  auto& st = self->state;
  st.deleted_groups.erase(uid);
  auto g = st.groups.find(job_uid);
  if (g == st.groups.end() || g->second.uid != uid)
    return;
  st.groups.erase(g);
  // Volcano's controller makes the PodGroup of a job that goes on again at its next sync.
  if (auto k = st.key_of_uid.find(job_uid); k != st.key_of_uid.end())
    sync_job(self, k->second);
}

void group_deleted(self_ptr self, const json::value& raw) {
  if (auto owner = k8s::controlling_job(raw))
    group_gone(self, owner->uid, k8s::string_at(raw, {"metadata", "uid"}));
}

// The objects of jobs that are gone (deleted while nobody acted, or a delete that failed).
void collect_orphans(self_ptr self) {
  auto& st = self->state;
  std::vector<std::string> orphans;
  for (const auto& [uid, pods] : st.pods)
    if (!st.key_of_uid.count(uid))
      orphans.push_back(uid);
  for (const auto& [uid, g] : st.groups)
    if (!st.key_of_uid.count(uid))
      orphans.push_back(uid);
  for (const auto& [uid, paths] : st.plugin_objects_to_delete)
    orphans.push_back(uid);
  std::sort(orphans.begin(), orphans.end());
  orphans.erase(std::unique(orphans.begin(), orphans.end()), orphans.end());
  for (const auto& uid : orphans)
    collect(self, uid);
}

// -- ttlSecondsAfterFinished (Volcano's garbage collector)

std::string job_path(const std::string& ns, const std::string& name) {
  return "/apis/batch.volcano.sh/v1alpha1/namespaces/" + ns + "/jobs/" + name;
}

// A finished job (Completed, Failed or Terminated: scheduler::is_finished, Volcano's rule; an
// Aborted job may be resumed) with ttlSecondsAfterFinished is deleted that long after its last
// transition, the time its status holds (scheduler::deletion_due), so a restarted process or a
// new leader keeps the deadline the job already had. As Volcano's collector, the job is read
// again first and left for now when its TTL changed meanwhile (its watch event comes and says
// when); the delete carries its uid as precondition. Volcano deletes in the foreground; this
// one in the background (the default), since a cluster without a garbage collector would keep
// a job with a foregroundDeletion finalizer for ever: the controller deletes its pods and
// PodGroup itself once the job is gone (collect).
void delete_expired_jobs(self_ptr self) {
  auto& st = self->state;
  const auto now = wall_now();
  std::vector<std::string> due;
  for (const auto& [key, e] : st.jobs)
    if (e.job && !e.deleting && !e.deleted_after_ttl &&
        scheduler::is_due_for_deletion(*e.job, e.status, now))
      due.push_back(key);
  for (const auto& key : due) {
    auto& e = st.jobs.at(key);
    const auto path = job_path(e.job->meta.namespace_name.str(), e.job->meta.name.str());
    auto fresh = k8s::get_json(*st.client, path);
    if (!fresh) {
      if (fresh.error().code() != errc::not_found)
        oplog::warn("finished job not read before its deletion")
            .kv("job", key)
            .kv("error", fresh.error().to_string());
      continue;
    }
    const auto* ttl = k8s::value_at(*fresh, {"spec", "ttlSecondsAfterFinished"});
    if (k8s::string_at(*fresh, {"metadata", "uid"}) != e.uid || ttl == nullptr ||
        !ttl->is_int64() || ttl->as_int64() != *e.job->ttl_seconds_after_finished)
      continue;
    auto deleted = k8s::delete_object(*st.client, path, e.uid);
    if (!deleted.ok() && !gone(deleted)) {
      oplog::warn("finished job not deleted")
          .kv("job", key)
          .kv("error", deleted.to_string());
      continue;
    }
    e.deleted_after_ttl = true;
    oplog::info("job deleted: its ttlSecondsAfterFinished passed")
        .kv("job", key)
        .kv("phase", scheduler::to_string(e.status.phase))
        .kv("finished", api::format_time(e.status.last_transition_time))
        .kv("ttl_seconds", int64_t{*e.job->ttl_seconds_after_finished});
  }
}

// -- Commands (bus.volcano.sh/v1alpha1): what vcctl writes to act on a job (`vcctl job
// suspend` an AbortJob, `resume` a ResumeJob), aimed at it by an ownerReference in `target`.

constexpr std::string_view commands_api_version = "bus.volcano.sh/v1alpha1";

std::string commands_path(const std::string& ns) {
  return "/apis/bus.volcano.sh/v1alpha1/namespaces/" + ns + "/commands";
}

// Volcano's job controller takes only the Commands whose target is a Volcano Job.
bool aimed_at_job(const json::value& command) {
  return k8s::string_at(command, {"target", "apiVersion"}) == k8s::volcano_job_api_version &&
         k8s::string_at(command, {"target", "kind"}) == k8s::volcano_job_kind &&
         !k8s::string_at(command, {"target", "name"}).empty();
}

enum class command_outcome {
  done,  // Executed, or dropped: it leaves the list.
  waits, // Tried again at the next tick.
};

// Volcano's processNextCommand for one Command: the Command is deleted first, with its uid as
// precondition, so that it runs at most once (one that another controller deleted first is that
// one's to run); then the job gets its CommandIssued Event and the action runs as the job's
// CommandIssued event, through resolve_action and next_state as every other step (AbortJob:
// Aborting, then Aborted once no pod is alive; ResumeJob: Restarting, then Pending and Running;
// a step that fails is tried again as any step). An action that is none of Volcano's syncs, as
// Volcano's state handlers treat one.
command_outcome run_command(self_ptr self, const json::value& command) {
  auto& st = self->state;
  const auto ns = k8s::string_at(command, {"metadata", "namespace"});
  const auto name = k8s::string_at(command, {"metadata", "name"});
  const auto target = k8s::string_at(command, {"target", "name"});
  const auto target_uid = k8s::string_at(command, {"target", "uid"});
  const auto action_text = k8s::string_at(command, {"action"});
  const auto job_key = ns + "/" + target;
  const auto path = commands_path(ns) + "/" + name;
  auto j = st.jobs.find(job_key);
  if (j == st.jobs.end() || (!target_uid.empty() && j->second.uid != target_uid)) {
    if (j == st.jobs.end()) {
      // The job's watch event may trail the Command's: the apiserver says whether it exists.
      auto now = k8s::get_json(*st.client, job_path(ns, target));
      if (now ? target_uid.empty() || k8s::string_at(*now, {"metadata", "uid"}) == target_uid
              : now.error().code() != errc::not_found)
        return command_outcome::waits;
    }
    auto deleted = k8s::delete_object(*st.client, path,
                                      k8s::string_at(command, {"metadata", "uid"}));
    if (!deleted.ok() && !gone(deleted))
      return command_outcome::waits;
    oplog::info("job command dropped: its job is gone")
        .kv("command", ns + "/" + name)
        .kv("job", job_key)
        .kv("action", action_text);
    return command_outcome::done;
  }
  auto deleted =
      k8s::delete_object(*st.client, path, k8s::string_at(command, {"metadata", "uid"}));
  if (!deleted.ok()) {
    if (gone(deleted))
      return command_outcome::done;
    oplog::warn("job command not deleted; not run yet")
        .kv("command", ns + "/" + name)
        .kv("error", deleted.to_string());
    return command_outcome::waits;
  }
  auto& e = j->second;
  if (!e.job || e.deleting) {
    oplog::info("job command dropped: its job is left alone")
        .kv("command", ns + "/" + name)
        .kv("job", job_key)
        .kv("action", action_text);
    return command_outcome::done;
  }
  auto action = scheduler::job_action_from_string(action_text);
  if (!action)
    oplog::warn("job command names no action of Volcano's; the job is synced")
        .kv("command", ns + "/" + name)
        .kv("action", action_text);
  oplog::info("job command")
      .kv("command", ns + "/" + name)
      .kv("job", job_key)
      .kv("action", action_text);
  record_event(self, e, "Normal", "CommandIssued",
               "Start to execute command " + action_text +
                   ", and clean it up to make sure executed not more than once.");
  scheduler::job_event_info event;
  event.event = scheduler::job_event::command_issued;
  event.command = action.value_or(scheduler::job_action::sync_job);
  handle_event(self, job_key, event);
  return command_outcome::done;
}

// The Commands waiting, once they and the jobs are listed and this process acts.
void run_commands(self_ptr self) {
  auto& st = self->state;
  if (!st.active || !st.listed[static_cast<int>(kube_job_input::collection::commands)])
    return;
  std::vector<std::pair<std::string, json::value>> waiting(st.commands.begin(),
                                                           st.commands.end());
  for (const auto& [key, command] : waiting)
    if (run_command(self, command) == command_outcome::done)
      st.commands.erase(key);
}

void becomes_active(self_ptr self) {
  auto& st = self->state;
  oplog::info("job controller acting").kv("jobs", st.jobs.size());
  collect_orphans(self);
  // As Volcano's controller syncs every job it lists when it starts.
  std::vector<std::string> keys;
  for (const auto& [key, e] : st.jobs)
    keys.push_back(key);
  for (const auto& key : keys)
    sync_job(self, key);
  run_commands(self);
}

void check_active(self_ptr self) {
  auto& st = self->state;
  // Commands are not waited for: without their CRD (a cluster that did not apply it) the jobs
  // are still run, and only Commands are not (the watch's error says why).
  using c = kube_job_input::collection;
  const bool now = st.listed[static_cast<int>(c::jobs)] && st.listed[static_cast<int>(c::pods)] &&
                   st.listed[static_cast<int>(c::pod_groups)] && st.may_act();
  if (now == st.active)
    return;
  st.active = now;
  if (now)
    becomes_active(self);
  else
    oplog::info("job controller standing by: not leading");
}

std::unordered_set<std::string> uids_of(const std::vector<json::value>& items) {
  std::unordered_set<std::string> out;
  for (const auto& item : items)
    out.insert(k8s::string_at(item, {"metadata", "uid"}));
  return out;
}

void on_input(self_ptr self, const kube_job_input& in) {
  auto& st = self->state;
  using c = kube_job_input::collection;
  switch (in.from) {
    case c::jobs:
      if (in.listed) {
        std::vector<std::string> gone_keys;
        std::unordered_set<std::string> listed;
        for (const auto& item : in.objects)
          listed.insert(key_of(item) + "\n" + k8s::string_at(item, {"metadata", "uid"}));
        for (const auto& [key, e] : st.jobs)
          if (!listed.count(key + "\n" + e.uid))
            gone_keys.push_back(key);
        for (const auto& key : gone_keys)
          job_gone(self, key);
        for (const auto& item : in.objects)
          job_seen(self, item);
      } else if (in.change == k8s::event_type::deleted) {
        const auto& gone_job = in.objects[0];
        if (auto i = st.jobs.find(key_of(gone_job));
            i != st.jobs.end() && i->second.uid == k8s::string_at(gone_job, {"metadata", "uid"}))
          job_gone(self, i->first);
      } else {
        job_seen(self, in.objects[0]);
      }
      break;
    case c::pods:
      if (in.listed) {
        // What the list lacks is gone; the rest is seen (each a change only if it changed). A
        // pod this controller made that no watch event told of yet may be missing only because
        // the list was read before its create: the apiserver is asked.
        auto listed = uids_of(in.objects);
        std::vector<std::array<std::string, 3>> vanished;  // Job uid, name, uid.
        for (const auto& [job_uid, pods] : st.pods)
          for (const auto& [name, p] : pods) {
            if (listed.count(p.facts.uid))
              continue;
            if (!p.watched) {
              auto now = k8s::get_json(*st.client, pods_path(p.facts.namespace_name) + "/" + name);
              if (now ? k8s::string_at(*now, {"metadata", "uid"}) == p.facts.uid
                      : now.error().code() != errc::not_found)
                continue;
            }
            vanished.push_back({job_uid, name, p.facts.uid});
          }
        for (const auto& [job_uid, name, uid] : vanished)
          pod_gone(self, job_uid, name, uid, nullptr);
        for (const auto& item : in.objects)
          pod_seen(self, item);
      } else if (in.change == k8s::event_type::deleted) {
        pod_deleted(self, in.objects[0]);
      } else {
        pod_seen(self, in.objects[0]);
      }
      break;
    case c::pod_groups:
      if (in.listed) {
        auto listed = uids_of(in.objects);
        std::vector<std::pair<std::string, std::string>> vanished;  // Job uid, uid.
        for (const auto& [job_uid, g] : st.groups)
          if (!listed.count(g.uid))
            vanished.emplace_back(job_uid, g.uid);
        for (const auto& [job_uid, uid] : vanished)
          group_gone(self, job_uid, uid);
        for (const auto& item : in.objects)
          group_seen(self, item);
      } else if (in.change == k8s::event_type::deleted) {
        group_deleted(self, in.objects[0]);
      } else {
        group_seen(self, in.objects[0]);
      }
      break;
    case c::commands:
      // Volcano's controller acts on a Command's addition; one changed before it ran runs as it
      // is now.
      if (in.listed) {
        st.commands.clear();
        for (const auto& item : in.objects)
          if (aimed_at_job(item))
            st.commands[key_of(item)] = item;
      } else if (in.change == k8s::event_type::deleted) {
        st.commands.erase(key_of(in.objects[0]));
      } else if (aimed_at_job(in.objects[0])) {
        st.commands[key_of(in.objects[0])] = in.objects[0];
        run_commands(self);
      }
      break;
  }
  if (in.listed) {
    st.listed[static_cast<int>(in.from)] = true;
    oplog::info("job controller listed")
        .kv("collection", collection_name(in.from))
        .kv("objects", in.objects.size());
    check_active(self);
    if (in.from == c::commands)
      run_commands(self);
  }
}

kube_job_controller_actor::behavior_type
controller_impl(kube_job_controller_actor::stateful_pointer<controller_state> self,
                std::shared_ptr<k8s::client> client, int32_t max_requeue,
                std::function<bool()> may_act) {
  self->state.client = std::move(client);
  self->state.max_requeue = max_requeue;
  self->state.may_act = std::move(may_act);
  self->delayed_send(self, tick_period, tick_atom::value);
  return {
      [self](watched_atom, const kube_job_input_ptr& in) { on_input(self, *in); },
      [self](timeout_atom, const kube_job_timer_ptr& t) { on_timer(self, *t); },
      [self](job_sync_atom, const std::string& key) {
        handle_event(self, key, scheduler::job_event_info{}, {}, true);
      },
      [self](tick_atom) {
        check_active(self);
        if (self->state.active && self->state.collect_again) {
          self->state.collect_again = false;
          collect_orphans(self);
        }
        if (self->state.active) {
          delete_expired_jobs(self);
          run_commands(self);
        }
        self->delayed_send(self, tick_period, tick_atom::value);
      },
  };
}

// Hands what a reflector lists and watches to the actor.
class input_sink final : public k8s::reflector_sink {
 public:
  input_sink(kube_job_controller_actor actor, kube_job_input::collection from)
      : actor_(std::move(actor)), from_(from) {}

  void on_list(std::vector<json::value> items, const std::string&) override {
    auto in = std::make_shared<kube_job_input>();
    in->from = from_;
    in->listed = true;
    in->objects = std::move(items);
    caf::anon_send(actor_, watched_atom::value, kube_job_input_ptr{std::move(in)});
  }

  void on_event(k8s::event_type type, json::value object, const std::string&) override {
    auto in = std::make_shared<kube_job_input>();
    in->from = from_;
    in->change = type;
    in->objects.push_back(std::move(object));
    caf::anon_send(actor_, watched_atom::value, kube_job_input_ptr{std::move(in)});
  }

  void on_bookmark(const std::string&) override {}

  void on_error(const status& error) override {
    oplog::warn("job controller watch error")
        .kv("collection", collection_name(from_))
        .kv("error", error.to_string());
  }

 private:
  kube_job_controller_actor actor_;
  kube_job_input::collection from_;
};

} // namespace

struct kube_job_controller::impl {
  std::shared_ptr<k8s::client> client;
  int32_t max_requeue = 15;
  std::vector<std::unique_ptr<input_sink>> sinks;
  std::vector<std::unique_ptr<k8s::reflector>> reflectors;
  kube_job_controller_actor actor;
  bool stopped = false;
};

kube_job_controller::kube_job_controller(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

kube_job_controller::~kube_job_controller() { stop(); }

result<std::unique_ptr<kube_job_controller>>
kube_job_controller::create(const kubernetes_config& config) {
  auto c = k8s::client::create(config.connection);
  if (!c)
    return c.error();
  auto p = std::make_unique<impl>();
  p->client = std::shared_ptr<k8s::client>(std::move(*c));
  p->max_requeue = config.job_max_requeue;
  return std::unique_ptr<kube_job_controller>(new kube_job_controller(std::move(p)));
}

caf::actor kube_job_controller::start(caf::actor_system& sys, std::function<bool()> may_act) {
  auto& w = *impl_;
  w.actor =
      sys.spawn<caf::detached>(controller_impl, w.client, w.max_requeue, std::move(may_act));
  struct watched {
    kube_job_input::collection from;
    const char* path;
    const char* kind;
    const char* api_version;
    const char* label_selector;
  };
  const watched collections[] = {
      {kube_job_input::collection::jobs, "/apis/batch.volcano.sh/v1alpha1/jobs", "Job",
       "batch.volcano.sh/v1alpha1", ""},
      // The pods Volcano's controller makes carry the job's name as a label.
      {kube_job_input::collection::pods, "/api/v1/pods", "Pod", "v1", "volcano.sh/job-name"},
      {kube_job_input::collection::pod_groups, "/apis/scheduling.volcano.sh/v1beta1/podgroups",
       "PodGroup", "scheduling.volcano.sh/v1beta1", ""},
      {kube_job_input::collection::commands, "/apis/bus.volcano.sh/v1alpha1/commands", "Command",
       commands_api_version.data(), ""},
  };
  for (const auto& c : collections) {
    k8s::reflector_options o;
    o.path = c.path;
    o.kind = c.kind;
    o.api_version = c.api_version;
    o.label_selector = c.label_selector;
    w.sinks.push_back(std::make_unique<input_sink>(w.actor, c.from));
    auto r = k8s::reflector::create(*w.client, std::move(o), *w.sinks.back());
    if (!r) {
      oplog::line(spdlog::level::critical, "job controller cannot watch")
          .kv("path", c.path)
          .kv("error", r.error().to_string());
      continue;
    }
    w.reflectors.push_back(std::move(*r));
  }
  for (auto& r : w.reflectors)
    r->start();
  return caf::actor_cast<caf::actor>(w.actor);
}

void kube_job_controller::stop() {
  auto& w = *impl_;
  if (w.stopped)
    return;
  w.stopped = true;
  for (auto& r : w.reflectors)
    r->stop();
  if (w.actor)
    caf::anon_send_exit(w.actor, caf::exit_reason::user_shutdown);
}

} // namespace phalanx::actors
