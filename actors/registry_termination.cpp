// Graceful deletion of pods in standalone mode, as kube-apiserver and a kubelet make it
// (docs/NOTES.md "Graceful deletion"): a bound pod that has not finished is first marked
// terminating and keeps its node's room; it is removed once the simulated kubelet has stopped
// it, by the end of its grace period at the latest.
//
// The mark is durable before the delete is answered: a world-meta record per terminating pod
// ("terminating/<ns>/<name>" = uid, deadline, grace period, version), erased in the batch that
// deletes the pod (delete_pods). It is not a state update of the pod's record: a state update
// carries the whole runtime state, and written behind a phase change still on its way to the
// store it would undo that change at the next start.

#include "actors/operator_log.hpp"
#include "actors/registry_internal.hpp"

#include "api/codec.hpp"


#include <charconv>

namespace phalanx::actors::registry_detail {

using api::resource_kind;

namespace {

using terminating_pod = registry_state::terminating_pod;

std::string encode_mark(const scheduler::pod& p, const terminating_pod& t) {
  return p.meta.uid.str() + " " +
         std::to_string(t.latest.deadline.time_since_epoch().count()) + " " +
         std::to_string(t.latest.grace_seconds) + " " + std::to_string(t.latest_version);
}

// "uid deadline_ns grace_seconds version"; false when it does not read so.
bool decode_mark(std::string_view text, std::string& uid, terminating_pod& out) {
  auto next_word = [&text]() {
    auto space = text.find(' ');
    auto word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
    return word;
  };
  auto number = [](std::string_view word, auto& value) {
    auto r = std::from_chars(word.data(), word.data() + word.size(), value);
    return r.ec == std::errc{} && r.ptr == word.data() + word.size();
  };
  uid = std::string(next_word());
  int64_t deadline_ns = 0;
  if (uid.empty() || !number(next_word(), deadline_ns) ||
      !number(next_word(), out.latest.grace_seconds) || !number(next_word(), out.latest_version))
    return false;
  out.latest.deadline = scheduler::timestamp{scheduler::duration{deadline_ns}};
  out.shown = out.latest;
  return true;
}

void tell_kubelet(self_ptr self, std::vector<termination_order> orders) {
  if (!orders.empty())
    self->send(self->state.binder, terminate_atom::value, std::move(orders));
}

// The pod as its graceful delete answers it: marked with `t`.
api::object terminating_view(const registry_state& st, uint64_t id, const pod_entry& e,
                             const scheduler::pod_termination& t, uint64_t version) {
  auto view = pod_view(st, id, e);
  view.termination = t;
  view.pod.meta.resource_version = std::max(view.pod.meta.resource_version, version);
  return api::object{std::move(view)};
}

// The immediate delete: the pod is removed once its deletion is durable.
void delete_pod_now(self_ptr self, uint64_t id, bool dry_run, object_reply reply) {
  auto& st = self->state;
  auto view = pod_view(st, id, st.pods.at(id));
  if (dry_run)
    return respond(reply, result<api::object>{api::object{std::move(view)}});
  // A job's pod deleted by someone else than its controller: PodEvicted for the job.
  delete_evicted_pods(self, {id}, [self, view, reply](const status& s) mutable {
    if (!s.ok())
      return respond(reply, result<api::object>{s});
    view.pod.meta.resource_version = self->state.resource_version;
    respond(reply, result<api::object>{api::object{std::move(view)}});
  });
}

} // namespace

std::string termination_key(const scheduler::pod& p) {
  return "terminating/" + object_key(p.meta.namespace_name, p.meta.name);
}

void delete_pod(self_ptr self, uint64_t id, const api::write_options& options,
                object_reply reply) {
  auto& st = self->state;
  auto& e = st.pods.at(id);
  // kube-apiserver's pod strategy: the delete's grace period, else the pod's own; none for a
  // pod no kubelet runs (not bound, or its binding not durable yet) or that has finished.
  int64_t grace = options.grace_period_seconds.value_or(api::termination_grace_seconds(*e.pod));
  if (!e.is_bound() || scheduler::is_terminal(e.phase()) || e.delete_requested)
    grace = 0;
  auto marked = st.terminating.find(id);
  if (grace == 0)
    return delete_pod_now(self, id, options.dry_run, std::move(reply));
  // Only a shorter grace period changes a deletion under way: this one is answered with the
  // pod as marked, once the mark is durable (a mark still on its way is written again, and the
  // answer waits for that write, behind the first).
  const bool keeps_mark =
      marked != st.terminating.end() && grace >= marked->second.latest.grace_seconds;
  if (keeps_mark && marked->second.shown_version == marked->second.latest_version) {
    const auto& t = marked->second;
    return respond(reply, result<api::object>{terminating_view(st, id, e, t.latest,
                                                               t.latest_version)});
  }
  // The deadline counts from the first delete: a shorter grace period moves it earlier.
  const auto requested_at = marked == st.terminating.end()
                                ? st.ctx->now()
                                : marked->second.latest.deadline -
                                      std::chrono::seconds(marked->second.latest.grace_seconds);
  scheduler::pod_termination next =
      keeps_mark ? marked->second.latest
                 : scheduler::pod_termination{std::chrono::time_point_cast<scheduler::duration>(
                                                  requested_at + std::chrono::seconds(grace)),
                                              grace};
  if (options.dry_run)
    return respond(reply, result<api::object>{terminating_view(st, id, e, next,
                                                               e.state().resource_version)});
  auto& t = st.terminating[id];
  t.latest = next;
  t.latest_version = next_version(self);
  storage::write_batch batch;
  batch.put_world_meta(termination_key(*e.pod), encode_mark(*e.pod, t));
  const auto uid = e.pod->meta.uid;
  auto answer = terminating_view(st, id, e, next, t.latest_version);
  persist(self, std::move(batch), [self, id, uid, next, version = t.latest_version,
                                   answer = std::move(answer), reply](const status& s) {
    auto& st = self->state;
    auto p = st.pods.find(id);
    auto t = st.terminating.find(id);
    if (!s.ok()) {
      // Not marked: back to the mark it had, if any.
      if (t != st.terminating.end() && t->second.latest_version == version) {
        if (t->second.shown) {
          t->second.latest = *t->second.shown;
          t->second.latest_version = t->second.shown_version;
        } else {
          st.terminating.erase(t);
        }
      }
      return respond(reply, result<api::object>{s});
    }
    if (p == st.pods.end() || p->second.pod->meta.uid != uid || t == st.terminating.end())
      // Removed meanwhile (a forced delete, its job's deletion): marked first, as asked.
      return respond(reply, result<api::object>{answer});
    if (t->second.shown_version < version) {
      t->second.shown = next;
      t->second.shown_version = version;
    }
    auto view = terminating_view(st, id, p->second, next, version);
    if (is_watched(self, resource_kind::pod))
      announce(self, api::watch_event::type::modified, view);
    record_event(self, resource_kind::pod, p->second.pod->meta.namespace_name,
                 p->second.pod->meta.name, "Normal", "Killing",
                 "Stopping container(s) within the grace period of " +
                     std::to_string(next.grace_seconds) + "s");
    respond(reply, result<api::object>{std::move(view)});
    tell_kubelet(self, {termination_order{id, next.deadline}});
  });
}

void do_terminated(self_ptr self, const std::vector<uint64_t>& pods) {
  auto& st = self->state;
  std::vector<uint64_t> gone;
  for (auto id : pods) {
    auto p = st.pods.find(id);
    if (p == st.pods.end() || p->second.delete_requested || !st.terminating.count(id))
      continue;  // Removed another way meanwhile.
    gone.push_back(id);
  }
  if (gone.empty())
    return;
  // Its job hears of it as of any delete by someone other than its controller.
  delete_evicted_pods(self, std::move(gone), [](const status& s) {
    // The marks stay: the next start tells the kubelet again (resume_terminations).
    if (!s.ok())
      oplog::error("terminated pods not removed").kv("error", s.to_string());
  });
}

void restore_terminations(self_ptr self, const std::map<std::string, std::string>& world_meta) {
  auto& st = self->state;
  storage::write_batch stale;
  constexpr std::string_view prefix = "terminating/";
  for (auto i = world_meta.lower_bound(std::string(prefix));
       i != world_meta.end() && i->first.starts_with(prefix); ++i) {
    std::string uid;
    terminating_pod t;
    auto id = pod_id_of(st, i->first.substr(prefix.size()));
    if (!decode_mark(i->second, uid, t) || id == 0 || st.pods.at(id).pod->meta.uid != uid) {
      stale.erase_world_meta(i->first);  // Its pod went (and a new one may have its name).
      continue;
    }
    t.shown_version = t.latest_version;
    st.terminating.emplace(id, t);
  }
  if (!stale.empty())
    persist(self, std::move(stale), [](const status& s) {
      if (!s.ok())
        oplog::warn("stale terminating marks not erased").kv("error", s.to_string());
    });
}

void resume_terminations(self_ptr self) {
  std::vector<termination_order> orders;
  for (const auto& [id, t] : self->state.terminating)
    orders.push_back({id, t.latest.deadline});
  tell_kubelet(self, std::move(orders));
}

} // namespace phalanx::actors::registry_detail
