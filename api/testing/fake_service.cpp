#include "api/testing/fake_service.hpp"

#include "api/list_page.hpp"

#include "scheduler/job.hpp"

#include <algorithm>
#include <future>

namespace phalanx::api::testing {

namespace {

std::string plural(resource_kind k) {
  return std::string(to_string(k));
}

scheduler::object_meta& mutable_meta(object& o) {
  return const_cast<scheduler::object_meta&>(meta_of(o));
}

status not_found(resource_kind k, const std::string& name) {
  return {errc::not_found, plural(k) + " \"" + name + "\" not found"};
}

} // namespace

fake_service::fake_service() : fake_service(options{}) {}

fake_service::fake_service(options opts) : opts_(std::move(opts)) {
  event_journal_.start();
  if (opts_.default_queue) {
    queue_object q;
    q.queue.meta.name = std::string(scheduler::default_queue_name);
    q.queue.meta.uid = "fake-default-queue";
    q.queue.meta.creation_time = now();
    q.queue.meta.resource_version = ++rv_;
    objects_[{int(resource_kind::queue), "", q.queue.meta.name.str()}] = q;
  }
  worker_ = std::thread([this] { run_worker(); });
}

fake_service::~fake_service() {
  close_watches(status{});
  {
    std::lock_guard lock{queue_mu_};
    stop_ = true;
  }
  queue_cv_.notify_all();
  if (worker_.joinable())
    worker_.join();
}

scheduler::timestamp fake_service::now() const {
  if (opts_.clock)
    return opts_.clock();
  return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
}

void fake_service::enqueue(std::function<void()> task) {
  {
    std::lock_guard lock{queue_mu_};
    queue_.push_back(std::move(task));
  }
  queue_cv_.notify_one();
}

void fake_service::run_worker() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock{queue_mu_};
      queue_cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty())
        return;  // stop_ and nothing left.
      task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    std::chrono::milliseconds delay;
    {
      std::lock_guard lock{mu_};
      delay = delay_;
    }
    if (delay.count() > 0)
      std::this_thread::sleep_for(delay);
    task();
    {
      std::lock_guard lock{queue_mu_};
      --running_;
      if (queue_.empty() && running_ == 0)
        idle_cv_.notify_all();
    }
  }
}

void fake_service::drain() {
  // A marker task: when it runs, everything queued before it has run.
  std::promise<void> done;
  auto f = done.get_future();
  enqueue([&done] { done.set_value(); });
  f.wait();
}

bool fake_service::take_failure(const std::string& operation, status& out) {
  std::lock_guard lock{mu_};
  auto it = failures_.find(operation);
  if (it == failures_.end() || it->second.empty())
    return false;
  out = std::move(it->second.front());
  it->second.pop_front();
  return true;
}

bool fake_service::matches(const watcher& w, const object& o) {
  if (kind_of(o) != w.kind)
    return false;
  const auto& m = meta_of(o);
  if (!w.options.namespace_name.empty() && m.namespace_name != w.options.namespace_name)
    return false;
  return w.options.selector.matches(m.labels);
}

void fake_service::record_change(watch_event::type type, const object& o,
                                 std::vector<delivery>& out) {
  watch_event e{type, o};
  history_.push_back({meta_of(o).resource_version, e});
  while (history_.size() > opts_.history)
    history_.pop_front();
  for (const auto& w : watchers_) {
    if (matches(w, o))
      out.emplace_back(w.sink, e);
  }
}

void fake_service::deliver(std::vector<delivery> deliveries) {
  for (auto& [sink, e] : deliveries) {
    if (!sink->on_event(e)) {
      std::lock_guard lock{mu_};
      std::erase_if(watchers_, [&](const watcher& w) { return w.sink == sink; });
    }
  }
}

object fake_service::stamp(object o, bool keep_time) {
  auto& m = mutable_meta(o);
  if (m.uid.empty())
    m.uid = "fake-" + std::to_string(next_uid_++);
  if (!keep_time || m.creation_time == scheduler::timestamp{})
    m.creation_time = now();
  m.resource_version = ++rv_;
  return o;
}

void fake_service::create(object obj, const write_options& options, object_callback done) {
  enqueue([this, obj = std::move(obj), dry_run = options.dry_run,
           done = std::move(done)]() mutable {
    status failure;
    if (take_failure("create", failure))
      return done(failure);
    std::vector<delivery> deliveries;
    result<object> answer = status{errc::internal, "unset"};
    {
      std::lock_guard lock{mu_};
      auto kind = kind_of(obj);
      const auto& m = meta_of(obj);
      key k{int(kind), m.namespace_name, m.name};
      std::string queue_name;
      if (auto* g = std::get_if<pod_group_object>(&obj))
        queue_name = g->group.queue;
      if (auto* j = std::get_if<job_object>(&obj))
        queue_name = j->job.queue;
      if (objects_.count(k) != 0) {
        answer = status{errc::already_exists, plural(kind) + " \"" + m.name + "\" already exists"};
      } else if (!queue_name.empty() &&
                 objects_.count({int(resource_kind::queue), "", queue_name}) == 0) {
        answer = status{errc::not_found, "queue \"" + queue_name + "\" does not exist"};
      } else if (!queue_name.empty() &&
                 std::get<queue_object>(objects_.at({int(resource_kind::queue), "", queue_name}))
                     .queue.state != scheduler::queue_state::open) {
        const auto& q =
          std::get<queue_object>(objects_.at({int(resource_kind::queue), "", queue_name}));
        answer = status{errc::failed_precondition,
                        "queue \"" + queue_name + "\" is " +
                          std::string(scheduler::to_string(q.queue.state)) +
                          ": it accepts no new PodGroups or jobs"};
      } else if (dry_run) {
        answer = obj;  // Checked, not stored.
      } else {
        object stored = stamp(std::move(obj), false);
        std::vector<object> extra;
        if (auto* j = std::get_if<job_object>(&stored)) {
          auto& st = j->status;
          st.phase = scheduler::job_phase::pending;
          st.min_available = scheduler::job_min_available(j->job);
          st.pending = 0;
          for (const auto& t : j->job.tasks)
            st.pending += t.replicas;
          auto expanded = scheduler::expand_job(j->job);
          if (expanded) {
            pod_group_object pg;
            pg.group = expanded->group;
            extra.push_back(std::move(pg));
            for (auto& p : expanded->pods) {
              pod_object po;
              po.pod = std::move(p);
              extra.push_back(std::move(po));
            }
          }
        }
        objects_[k] = stored;
        record_change(watch_event::type::added, stored, deliveries);
        for (auto& x : extra) {
          object s = stamp(std::move(x), true);
          const auto& xm = meta_of(s);
          key xk{int(kind_of(s)), xm.namespace_name, xm.name};
          if (objects_.count(xk) != 0)
            continue;
          objects_[xk] = s;
          record_change(watch_event::type::added, s, deliveries);
        }
        answer = std::move(stored);
      }
    }
    deliver(std::move(deliveries));
    done(std::move(answer));
  });
}

void fake_service::get(resource_kind kind, std::string namespace_name, std::string name,
                       object_callback done) {
  enqueue([this, kind, ns = std::move(namespace_name), name = std::move(name),
           done = std::move(done)] {
    status failure;
    if (take_failure("get", failure))
      return done(failure);
    std::optional<object> found = find(kind, ns, name);
    if (!found)
      return done(not_found(kind, name));
    done(std::move(*found));
  });
}

void fake_service::list(resource_kind kind, list_options options, list_callback done) {
  enqueue([this, kind, options = std::move(options), done = std::move(done)] {
    status failure;
    if (take_failure("list", failure))
      return done(failure);
    object_list out;
    {
      std::lock_guard lock{mu_};
      watcher filter{0, kind, options, nullptr};
      // The page as the real service finds it (api/list_page.hpp). The fake keeps no history:
      // a continued list is never too old for it.
      page_finder finder(options.page);
      for (const auto& [k, o] : objects_) {
        if (std::get<0>(k) == int(kind) && matches(filter, o))
          finder.offer({std::get<1>(k), std::get<2>(k)});
      }
      const auto end = finder.end();
      for (const auto& [k, o] : objects_) {
        if (std::get<0>(k) == int(kind) && matches(filter, o) &&
            in_page({std::get<1>(k), std::get<2>(k)}, options.page, end))
          out.items.push_back(o);
      }
      out.remaining = end.remaining;
      out.resource_version = rv_;
    }
    done(std::move(out));
  });
}

void fake_service::remove(resource_kind kind, std::string namespace_name, std::string name,
                          const write_options& options, object_callback done) {
  {
    std::lock_guard lock{mu_};
    delete_grace_periods_.push_back(options.grace_period_seconds);
  }
  enqueue([this, kind, ns = std::move(namespace_name), name = std::move(name),
           dry_run = options.dry_run, done = std::move(done)] {
    status failure;
    if (take_failure("remove", failure))
      return done(failure);
    std::vector<delivery> deliveries;
    result<object> answer = not_found(kind, name);
    {
      std::lock_guard lock{mu_};
      auto it = objects_.find({int(kind), ns, name});
      if (it != objects_.end() && dry_run) {
        answer = it->second;
      } else if (it != objects_.end()) {
        object gone = it->second;
        objects_.erase(it);
        mutable_meta(gone).resource_version = ++rv_;
        record_change(watch_event::type::deleted, gone, deliveries);
        if (auto* j = std::get_if<job_object>(&gone)) {
          // A job takes its PodGroup and pods along.
          std::string group = scheduler::pod_group_name(j->job);
          std::vector<key> doomed;
          for (const auto& [k, o] : objects_) {
            if (std::get<1>(k) != ns)
              continue;
            if (const auto* pg = std::get_if<pod_group_object>(&o); pg && pg->group.meta.name == group)
              doomed.push_back(k);
            if (const auto* p = std::get_if<pod_object>(&o); p && p->pod.group == group)
              doomed.push_back(k);
          }
          for (const auto& k : doomed) {
            object o = objects_.at(k);
            objects_.erase(k);
            mutable_meta(o).resource_version = ++rv_;
            record_change(watch_event::type::deleted, o, deliveries);
          }
        }
        answer = std::move(gone);
      }
    }
    deliver(std::move(deliveries));
    done(std::move(answer));
  });
}

void fake_service::act(resource_kind kind, std::string namespace_name, std::string name,
                       object_action action, object_callback done) {
  enqueue([this, kind, ns = std::move(namespace_name), name = std::move(name), action,
           done = std::move(done)] {
    status failure;
    if (take_failure("act", failure))
      return done(failure);
    std::vector<delivery> deliveries;
    result<object> answer = not_found(kind, name);
    {
      std::lock_guard lock{mu_};
      auto it = objects_.find({int(kind), ns, name});
      if (it != objects_.end()) {
        object changed = it->second;
        bool ok = true;
        using t = object_action::type;
        switch (action.kind) {
          case t::cordon:
          case t::uncordon:
            if (auto* n = std::get_if<node_object>(&changed))
              n->node.unschedulable = action.kind == t::cordon;
            else
              ok = false;
            break;
          case t::suspend:
          case t::resume:
            if (auto* j = std::get_if<job_object>(&changed)) {
              j->job.suspended = action.kind == t::suspend;
              j->status.phase = action.kind == t::suspend ? scheduler::job_phase::aborted
                                                          : scheduler::job_phase::pending;
            } else {
              ok = false;
            }
            break;
          case t::open:
          case t::close:
            if (auto* q = std::get_if<queue_object>(&changed))
              q->queue.state =
                action.kind == t::open ? scheduler::queue_state::open : scheduler::queue_state::closed;
            else
              ok = false;
            break;
          case t::fail_pod:
            if (auto* p = std::get_if<pod_object>(&changed))
              p->pod.phase = scheduler::pod_phase::failed;
            else
              ok = false;
            break;
        }
        if (!ok) {
          answer = status{errc::invalid_argument, "the action " +
                                                    std::string(to_string(action.kind)) +
                                                    " does not apply to " + plural(kind)};
        } else {
          answer = store_change(it->second, std::move(changed), deliveries);
        }
      }
    }
    deliver(std::move(deliveries));
    done(std::move(answer));
  });
}

object fake_service::store_change(object& stored, object changed,
                                 std::vector<delivery>& deliveries) {
  mutable_meta(changed).resource_version = ++rv_;
  stored = changed;
  record_change(watch_event::type::modified, changed, deliveries);
  return changed;
}

void fake_service::update(object obj, const write_options& options, object_callback done) {
  enqueue([this, obj = std::move(obj), dry_run = options.dry_run,
           done = std::move(done)]() mutable {
    status failure;
    if (take_failure("update", failure))
      return done(failure);
    std::vector<delivery> deliveries;
    auto kind = kind_of(obj);
    const auto& meta = meta_of(obj);
    result<object> answer = not_found(kind, meta.name.str());
    {
      std::lock_guard lock{mu_};
      auto it = objects_.find({int(kind), meta.namespace_name.str(), meta.name.str()});
      if (it != objects_.end()) {
        auto& stored = mutable_meta(it->second);
        if (meta.resource_version != 0 && meta.resource_version != stored.resource_version) {
          answer = status{errc::conflict, "the object has been modified; please apply your "
                                          "changes to the latest version and try again"};
        } else {
          // What each kind lets an update change (the registry's rules, without their checks
          // of state): the rest, status included, stays as stored.
          object changed = it->second;
          if (auto* p = std::get_if<pod_object>(&changed)) {
            p->pod.constraints = std::get<pod_object>(obj).pod.constraints;
          } else if (auto* n = std::get_if<node_object>(&changed)) {
            const auto& want = std::get<node_object>(obj).node;
            n->node.taints = want.taints;
            n->node.unschedulable = want.unschedulable;
          } else if (auto* q = std::get_if<queue_object>(&changed)) {
            auto want = std::get<queue_object>(obj).queue;
            want.meta = q->queue.meta;
            want.state = q->queue.state;
            q->queue = std::move(want);
          } else if (auto* g = std::get_if<pod_group_object>(&changed)) {
            auto want = std::get<pod_group_object>(obj).group;
            want.meta = g->group.meta;
            g->group = std::move(want);
          }
          mutable_meta(changed).labels = meta.labels;
          mutable_meta(changed).annotations = meta.annotations;
          if (dry_run)
            answer = std::move(changed);  // Checked, not stored.
          else
            answer = store_change(it->second, std::move(changed), deliveries);
        }
      }
    }
    deliver(std::move(deliveries));
    done(std::move(answer));
  });
}

void fake_service::events(resource_kind kind, std::string namespace_name, std::string name,
                          events_callback done) {
  enqueue([this, kind, ns = std::move(namespace_name), name = std::move(name),
           done = std::move(done)] {
    status failure;
    if (take_failure("events", failure))
      return done(failure);
    std::vector<scheduler::event> out;
    {
      std::lock_guard lock{mu_};
      key k{int(kind), ns, name};
      if (objects_.count(k) == 0 && events_.count(k) == 0)
        return done(not_found(kind, name));
      if (auto it = events_.find(k); it != events_.end())
        out = it->second;
    }
    done(std::move(out));
  });
}

void fake_service::all_events(all_events_callback done) {
  enqueue([this, done = std::move(done)] {
    status failure;
    if (take_failure("all_events", failure))
      return done(failure);
    event_list out;
    {
      std::lock_guard lock{mu_};
      out.resource_version = event_journal_.version();
      for (const auto& [k, events] : events_)
        for (const auto& e : events)
          out.items.push_back(object_event_of(k, e));
    }
    done(std::move(out));
  });
}

void fake_service::event_changes(uint64_t from, event_changes_callback done) {
  enqueue([this, from, done = std::move(done)] {
    status failure;
    if (take_failure("event_changes", failure))
      return done(failure);
    auto answer = [&]() -> result<event_change_list> {
      std::lock_guard lock{mu_};
      if (from != 0)
        return event_journal_.since(from);
      event_change_list all;
      all.resource_version = event_journal_.version();
      for (const auto& [k, events] : events_)
        for (const auto& e : events)
          all.items.push_back(
              {watch_event::type::added, object_event_of(k, e), all.resource_version});
      return all;
    }();
    done(std::move(answer));
  });
}

object_event fake_service::object_event_of(const key& k, scheduler::event e) const {
  const auto& [kind, ns, name] = k;
  std::string uid;
  if (auto o = objects_.find(k); o != objects_.end())
    uid = meta_of(o->second).uid.str();
  return {resource_kind(kind), ns, name, std::move(uid), std::move(e)};
}

watch_handle fake_service::watch(resource_kind kind, list_options options,
                                 uint64_t resource_version, std::shared_ptr<watch_sink> sink) {
  uint64_t id;
  {
    std::lock_guard lock{mu_};
    id = next_watch_++;
  }
  enqueue([this, id, kind, options = std::move(options), resource_version, sink] {
    std::vector<delivery> initial;
    bool too_old = false;
    uint64_t oldest = 0;
    {
      std::lock_guard lock{mu_};
      watcher w{id, kind, options, sink};
      if (resource_version == 0) {
        for (const auto& [k, o] : objects_) {
          if (matches(w, o))
            initial.emplace_back(sink, watch_event{watch_event::type::added, o});
        }
      } else {
        oldest = history_.empty() ? rv_ + 1 : history_.front().resource_version;
        if (resource_version + 1 < oldest && resource_version < rv_) {
          too_old = true;
        } else {
          for (const auto& c : history_) {
            if (c.resource_version > resource_version && matches(w, c.event.obj))
              initial.emplace_back(sink, c.event);
          }
        }
      }
      if (!too_old)
        watchers_.push_back(std::move(w));
    }
    if (too_old) {
      sink->on_close(status{errc::failed_precondition,
                            "too old resource version: " + std::to_string(resource_version) +
                              " (" + std::to_string(oldest) + ")"});
      return;
    }
    deliver(std::move(initial));
  });
  return watch_handle{[this, id] {
    std::lock_guard lock{mu_};
    std::erase_if(watchers_, [id](const watcher& w) { return w.id == id; });
  }};
}

bool fake_service::ready() const {
  std::lock_guard lock{mu_};
  return ready_;
}

std::string fake_service::metrics_text() const {
  std::lock_guard lock{mu_};
  return metrics_ + "phalanx_fake_objects " + std::to_string(objects_.size()) + "\n";
}

void fake_service::set_ready(bool ready) {
  std::lock_guard lock{mu_};
  ready_ = ready;
}

std::string fake_service::failure() const {
  std::lock_guard lock{mu_};
  return failure_;
}

void fake_service::set_failure(std::string why) {
  std::lock_guard lock{mu_};
  failure_ = std::move(why);
}

void fake_service::set_metrics_text(std::string text) {
  std::lock_guard lock{mu_};
  metrics_ = std::move(text);
}

object fake_service::put(object obj) {
  std::promise<object> stored;
  auto f = stored.get_future();
  enqueue([this, obj = std::move(obj), &stored]() mutable {
    std::vector<delivery> deliveries;
    object s;
    {
      std::lock_guard lock{mu_};
      s = stamp(std::move(obj), true);
      const auto& m = meta_of(s);
      key k{int(kind_of(s)), m.namespace_name, m.name};
      bool existed = objects_.count(k) != 0;
      objects_[k] = s;
      record_change(existed ? watch_event::type::modified : watch_event::type::added, s,
                    deliveries);
    }
    deliver(std::move(deliveries));
    stored.set_value(std::move(s));
  });
  return f.get();
}

void fake_service::add_event(resource_kind kind, std::string namespace_name, std::string name,
                             scheduler::event e) {
  std::lock_guard lock{mu_};
  key k{int(kind), std::move(namespace_name), std::move(name)};
  auto& list = events_[k];
  for (auto& kept : list)
    if (kept.type == e.type && kept.reason == e.reason && kept.first_time == e.first_time) {
      kept = e;
      event_journal_.add(watch_event::type::modified, object_event_of(k, std::move(e)));
      return;
    }
  list.push_back(e);
  event_journal_.add(watch_event::type::added, object_event_of(k, std::move(e)));
}

void fake_service::remove_events(resource_kind kind, const std::string& namespace_name,
                                 const std::string& name) {
  std::lock_guard lock{mu_};
  key k{int(kind), namespace_name, name};
  auto i = events_.find(k);
  if (i == events_.end())
    return;
  for (auto& e : i->second)
    event_journal_.add(watch_event::type::deleted, object_event_of(k, e));
  events_.erase(i);
}

void fake_service::fail_next(std::string operation, status error) {
  std::lock_guard lock{mu_};
  failures_[std::move(operation)].push_back(std::move(error));
}

void fake_service::set_delay(std::chrono::milliseconds delay) {
  std::lock_guard lock{mu_};
  delay_ = delay;
}

void fake_service::close_watches(status reason) {
  std::vector<watcher> all;
  {
    std::lock_guard lock{mu_};
    all.swap(watchers_);
  }
  for (auto& w : all)
    w.sink->on_close(reason);
}

std::optional<object> fake_service::find(resource_kind kind, const std::string& namespace_name,
                                         const std::string& name) const {
  std::lock_guard lock{mu_};
  auto it = objects_.find({int(kind), namespace_name, name});
  if (it == objects_.end())
    return std::nullopt;
  return it->second;
}

std::size_t fake_service::count(resource_kind kind) const {
  std::lock_guard lock{mu_};
  std::size_t n = 0;
  for (const auto& [k, o] : objects_)
    n += std::get<0>(k) == int(kind) ? 1 : 0;
  return n;
}

std::size_t fake_service::open_watches() const {
  std::lock_guard lock{mu_};
  return watchers_.size();
}

std::vector<std::optional<int64_t>> fake_service::delete_grace_periods() const {
  std::lock_guard lock{mu_};
  return delete_grace_periods_;
}

uint64_t fake_service::resource_version() const {
  std::lock_guard lock{mu_};
  return rv_;
}

} // namespace phalanx::api::testing
