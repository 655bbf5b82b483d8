#pragma once

// The whole runtime (registry, queues, PodGroup and node actors, store writer, simulated cluster)
// on a real RocksDB store in a temporary directory, for tests of the whole system. Works in both
// modes: deterministic (CAF's test coordinator, virtual time: the harness drives it) and real
// threads (the harness waits on futures).
//
// Calls block until the service answered. Not thread-safe: one test thread drives it.

#include "actors/runtime.hpp"

#include "scheduler/tests/builders.hpp"
#include "storage/store.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>
#include <string>
#include <vector>

namespace phalanx::actors::testing {

/// How long a test lets virtual time run for what it waits on (runtime_harness::run_until), and
/// in what steps.
inline constexpr auto settle_limit = std::chrono::milliseconds(5000);
inline constexpr auto settle_step = std::chrono::milliseconds(10);

/// A runtime under CAF's test coordinator (virtual time), seeded.
inline runtime_config deterministic_config(uint64_t seed) {
  runtime_config c;
  c.deterministic = true;
  c.seed = seed;
  return c;
}

/// Two nodes of 8 cpu and 32Gi, "n-0" and "n-1": room for the job controller's tests' jobs.
inline std::vector<scheduler::node> two_job_nodes() {
  return {scheduler::testing::make_node("n-0").cpu("8").memory("32Gi"),
          scheduler::testing::make_node("n-1").cpu("8").memory("32Gi")};
}

/// A job of one task, "worker", with `replicas` 1-CPU pods named "<name>-worker-<i>", in
/// namespace "default".
inline api::job_object one_task_job(const std::string& name, int32_t replicas) {
  api::job_object o;
  o.job.meta.name = name;
  o.job.meta.namespace_name = "default";
  scheduler::job_task t;
  t.name = "worker";
  t.replicas = replicas;
  t.pod_template = scheduler::testing::make_pod("template").cpu("1");
  o.job.tasks.push_back(std::move(t));
  return o;
}

/// A PodGroup "<name>" in namespace "default", queue "default", wanting `min_member` pods.
inline api::pod_group_object group_of(const std::string& name, int32_t min_member) {
  api::pod_group_object g;
  g.group.meta.name = name;
  g.group.meta.namespace_name = "default";
  g.group.min_member = min_member;
  g.group.queue = "default";
  return g;
}

/// A job's pods now ("<job>-..." in namespace "default"): name -> (uid, phase).
using pod_facts = std::map<std::string, std::pair<std::string, scheduler::pod_phase>>;
class runtime_harness;
inline pod_facts pods_of(runtime_harness& h, const std::string& job);
/// True when the job has exactly `count` pods and every one runs.
inline bool all_running(runtime_harness& h, const std::string& job, std::size_t count);

/// Checks I1-I4 and the at-rest rules of the whole runtime `h` (a runtime_harness) and reports
/// every violation.
#define EXPECT_INVARIANTS(h)                                                                       \
  do {                                                                                             \
    auto report = (h).invariants(/*at_rest=*/true);                                                \
    EXPECT_TRUE(report.ok()) << report.to_string();                                                \
  } while (false)

class runtime_harness {
 public:
  /// Starts a runtime on a fresh store and creates `nodes`.
  runtime_harness(runtime_config config, const std::vector<scheduler::node>& nodes)
    : config_(std::move(config)) {
    auto base = std::filesystem::temp_directory_path() / "phalanx-runtime-XXXXXX";
    std::string tmpl = base.string();
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    start();
    for (const auto& n : nodes)
      must(create(api::node_object{n, {}, 0}), "create node " + n.meta.name);
  }

  ~runtime_harness() {
    rt_.reset();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  runtime_harness(const runtime_harness&) = delete;
  runtime_harness& operator=(const runtime_harness&) = delete;

  runtime& rt() { return *rt_; }
  storage::store& store() { return *store_; }
  api::service& svc() { return rt_->service(); }
  bool deterministic() const { return config_.deterministic; }

  result<api::object> create(api::object obj) {
    return call<result<api::object>>([&](auto done) { svc().create(std::move(obj), done); });
  }
  /// Creates every object with all calls in flight at once (as many clients submitting
  /// together), then waits for every answer. Throws on the first error.
  void create_all(std::vector<api::object> objects) {
    std::vector<std::future<result<api::object>>> answers;
    for (auto& obj : objects) {
      auto promise = std::make_shared<std::promise<result<api::object>>>();
      answers.push_back(promise->get_future());
      svc().create(std::move(obj), [promise](result<api::object> r) { promise->set_value(std::move(r)); });
    }
    for (auto& a : answers) {
      auto r = wait(a);
      must_ok(r, "create");
    }
  }

  result<api::object> get(api::resource_kind kind, const std::string& ns, const std::string& name) {
    return call<result<api::object>>([&](auto done) { svc().get(kind, ns, name, done); });
  }
  result<api::object_list> list(api::resource_kind kind, const std::string& ns = "") {
    api::list_options o;
    o.namespace_name = ns;
    return call<result<api::object_list>>([&](auto done) { svc().list(kind, o, done); });
  }
  result<api::object> remove(api::resource_kind kind, const std::string& ns,
                             const std::string& name) {
    return call<result<api::object>>([&](auto done) { svc().remove(kind, ns, name, done); });
  }
  /// A PUT's or PATCH's result, as api::service::update takes it.
  result<api::object> update(api::object obj) {
    return call<result<api::object>>([&](auto done) { svc().update(std::move(obj), done); });
  }
  /// Issues a call on svc() with a callback and waits for its answer.
  template <class R, class Call>
  R call(Call&& issue) {
    auto promise = std::make_shared<std::promise<R>>();
    auto future = promise->get_future();
    issue([promise](R r) { promise->set_value(std::move(r)); });
    return wait(future);
  }
  /// The answer of a call issued directly on svc(), letting virtual time pass for it.
  template <class R>
  R wait(std::future<R>& future) {
    auto ready = [&] { return future.wait_for(std::chrono::seconds(0)) == std::future_status::ready; };
    if (deterministic()) {
      // A write is acknowledged when the store writer's group-commit window closes: let virtual
      // time pass in small steps until the answer is there.
      rt_->run_until_idle();
      for (int i = 0; i < 1000 && !ready(); ++i)
        rt_->advance(std::chrono::milliseconds(1));
      if (!ready())
        throw std::runtime_error("the service did not answer within 1 s of virtual time");
    } else if (future.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
      throw std::runtime_error("the service did not answer within 60 s");
    }
    return future.get();
  }

  result<api::object> act(api::resource_kind kind, const std::string& ns, const std::string& name,
                          api::object_action::type action) {
    return call<result<api::object>>(
        [&](auto done) { svc().act(kind, ns, name, api::object_action{action}, done); });
  }

  /// Creates a pod (a PodGroup's member, or alone); throws on an error.
  void create_pod(scheduler::pod p) {
    auto name = p.meta.name.str();
    must_ok(create(api::pod_object{std::move(p), {}}), name);
  }
  /// True when the pod is bound; throws when it does not exist.
  bool bound(const std::string& name, const std::string& ns = "default") {
    return pod(name, ns).pod.is_bound();
  }

  /// The events recorded about an object, oldest first; throws on an error.
  std::vector<scheduler::event> events(api::resource_kind kind, const std::string& name,
                                       const std::string& ns = "default") {
    using answer = result<std::vector<scheduler::event>>;
    auto r = call<answer>([&](auto done) { svc().events(kind, ns, name, done); });
    must_ok(r, "events of " + name);
    return std::move(*r);
  }

  /// The PodGroup's status as the API shows it; throws when it does not exist.
  api::pod_group_object group(const std::string& name, const std::string& ns = "default") {
    auto r = get(api::resource_kind::pod_group, ns, name);
    must_ok(r, "get podgroup " + name);
    return std::get<api::pod_group_object>(*r);
  }

  api::pod_object pod(const std::string& name, const std::string& ns = "default") {
    auto r = get(api::resource_kind::pod, ns, name);
    must_ok(r, "get pod " + name);
    return std::get<api::pod_object>(*r);
  }

  std::vector<api::pod_object> pods(const std::string& ns = "") {
    auto r = list(api::resource_kind::pod, ns);
    must_ok(r, "list pods");
    std::vector<api::pod_object> out;
    for (auto& o : r->items)
      out.push_back(std::get<api::pod_object>(o));
    return out;
  }

  /// Deterministic mode: every message runs first, so the facts are one consistent cut and every
  /// check applies. Real threads: `at_rest` promises that nothing moves (the load drained);
  /// otherwise only the checks a race cannot fake (check_live_invariants).
  invariant_report invariants(bool at_rest) {
    if (deterministic()) {
      rt_->run_until_idle();
      return check_invariants(rt_->facts(), at_rest);
    }
    auto facts = rt_->facts();
    return at_rest ? check_invariants(facts, true) : check_live_invariants(facts);
  }

  /// Lets time pass until `done()` or `limit`: deterministic mode advances virtual time in
  /// `step`s (running every message in between); real mode polls. True when done() held.
  bool run_until(const std::function<bool()>& done, std::chrono::milliseconds limit,
                 std::chrono::milliseconds step = std::chrono::milliseconds(100)) {
    if (deterministic()) {
      rt_->run_until_idle();
      for (std::chrono::milliseconds t{0}; t <= limit; t += step) {
        if (done())
          return true;
        rt_->advance(step);
      }
      return done();
    }
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done())
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return done();
  }

  /// Advances virtual time (deterministic mode) or sleeps (real mode).
  void pass(std::chrono::milliseconds by) {
    if (deterministic())
      rt_->advance(by);
    else
      std::this_thread::sleep_for(by);
  }

  /// Stops the runtime, closes and reopens the store, and starts again: a clean restart.
  void restart() { restart_after([](storage::store&) {}); }

  /// The same, with `edit` writing to the reopened store before the runtime starts on it (what
  /// an older build, or a damaged disk, left there).
  void restart_after(const std::function<void(storage::store&)>& edit) {
    rt_.reset();
    store_.reset();
    open_store();
    edit(*store_);
    start_runtime();
  }

  template <class T>
  static void must_ok(const result<T>& r, const std::string& what) {
    if (!r.ok())
      throw std::runtime_error(what + ": " + r.error().to_string());
  }

 private:
  void start() {
    open_store();
    start_runtime();
  }
  void open_store() {
    storage::store_options so;
    so.path = dir_ + "/data";
    auto s = storage::store::open(so);
    must_ok(s, "open store");
    store_ = std::move(*s);
  }
  void start_runtime() {
    auto r = runtime::start(config_, store_);
    must_ok(r, "start runtime");
    rt_ = std::move(*r);
  }

  static void must(const result<api::object>& r, const std::string& what) { must_ok(r, what); }


  runtime_config config_;
  std::string dir_;
  std::shared_ptr<storage::store> store_;
  std::unique_ptr<runtime> rt_;
};

inline pod_facts pods_of(runtime_harness& h, const std::string& job) {
  pod_facts out;
  for (const auto& p : h.pods("default"))
    if (p.pod.meta.name.view().starts_with(job + "-"))
      out[p.pod.meta.name.str()] = {p.pod.meta.uid.str(), p.pod.phase};
  return out;
}

inline bool all_running(runtime_harness& h, const std::string& job, std::size_t count) {
  auto pods = pods_of(h, job);
  if (pods.size() != count)
    return false;
  for (const auto& [name, p] : pods)
    if (p.second != scheduler::pod_phase::running)
      return false;
  return true;
}

} // namespace phalanx::actors::testing
