// The Kubernetes world's cache against the orders in which the apiserver's answers can arrive.
// The binder's answer to a Binding and the pod watch travel on different connections, so the
// binder may hear "bound" before the watch delivers an older version of the same pod (one written
// before the binding: a condition, a label). These tests drive the registry with the Kubernetes
// world directly, on CAF's test coordinator: the test is the apiserver's watch (world_delta
// messages decoded from the JSON an apiserver sends) and a recording binder whose answers it
// sends when it chooses. phalanxd's own tests against a real apiserver (tests/k8s) cannot choose
// this order; a loaded CI machine once did (ScalingAJobUpdatesItsPodGroupAndItsPods).

#include "actors/cluster_actor.hpp"
#include "actors/registry.hpp"
#include "actors/store_writer.hpp"

#include "api/codec.hpp"
#include "storage/store.hpp"

#include <boost/json.hpp>
#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace phalanx::actors {
namespace {

namespace json = boost::json;

// What the binder was asked to bind, by pod name, with the registry's ids to answer with.
struct binder_log {
  std::map<std::string, uint64_t> asked;  // Pod name -> registry id.
  std::map<std::string, std::string> node_of;
  std::map<std::string, int> times_asked;  // A pod asked twice was bound twice.
};

struct recording_binder_state {
  std::shared_ptr<binder_log> log;
};

binder_actor::behavior_type recording_binder(
    binder_actor::stateful_pointer<recording_binder_state> self, std::shared_ptr<binder_log> log) {
  self->state.log = std::move(log);
  return {
    [self](bind_pods_atom, uint32_t, scheduler::shared_string node, pod_refs& pods) {
      for (const auto& ref : pods) {
        self->state.log->asked[ref.pod->meta.name.str()] = ref.id;
        self->state.log->node_of[ref.pod->meta.name.str()] = node.str();
        ++self->state.log->times_asked[ref.pod->meta.name.str()];
      }
    },
    [](forget_atom, std::vector<uint64_t>&) {},
    [](fail_atom, uint64_t) {},
    [](adopt_atom, pod_refs&) {},
    [](evict_atom, eviction_batch&) {},
    [](finished_atom, std::vector<pod_outcome>&) {},
    [](terminate_atom, std::vector<termination_order>&) {},
    [](tick_atom) {},
    [](stalled_atom) {},
    [](spec_atom, status_sink_actor) {},
  };
}

// One pod of group "tf" in namespace "t", of role `role`, as the apiserver shows it: pending
// without a node, or bound to `node` and running.
json::value pod_json(const std::string& name, const std::string& uid, const std::string& role,
                     const std::string& resource_version, const std::string& node = "") {
  json::object requests{{"requests", json::object{{"cpu", "500m"}}}};
  json::object spec{
      {"schedulerName", "volcano"},
      {"containers", json::array{json::object{
                         {"name", "main"}, {"image", "busybox"}, {"resources", requests}}}}};
  json::object status{{"phase", "Pending"}};
  if (!node.empty()) {
    spec["nodeName"] = node;
    status = json::object{{"phase", "Running"}};
  } else {
    // What phalanxd writes of a pod its gang cannot place yet: the version the watch may deliver
    // after the binder heard the binding succeed.
    status["conditions"] = json::array{json::object{{"type", "PodScheduled"},
                                                    {"status", "False"},
                                                    {"reason", "Unschedulable"}}};
  }
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       json::object{{"name", name},
                    {"namespace", "t"},
                    {"uid", uid},
                    {"resourceVersion", resource_version},
                    {"annotations", json::object{{"scheduling.k8s.io/group-name", "tf"},
                                                 {"volcano.sh/task-spec", role}}}}},
      {"spec", spec},
      {"status", status}};
}

class KubeWatchOrder : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("phalanx-kube-order-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    storage::store_options options;
    options.path = dir_.string();
    auto opened = storage::store::open(options);
    ASSERT_TRUE(opened) << opened.error().to_string();
    store_ = std::move(*opened);
    auto loaded = store_->load();
    ASSERT_TRUE(loaded) << loaded.error().to_string();

    cfg_.set("scheduler.policy", caf::atom("testing"));
    cfg_.set("logger.verbosity", caf::atom("quiet"));
    system_ = std::make_unique<caf::actor_system>(cfg_);
    auto ctx = std::make_shared<runtime_context>();
    ctx->config.deterministic = true;
    ctx->config.seed = 7;
    ctx->config.kubernetes.enabled = true;
    ctx->clock = &system_->clock();
    ctx->clock_base = system_->clock().now();
    ctx_ = ctx;

    auto& sys = *system_;
    cluster_ = sys.spawn(cluster_actor_impl, context_ptr{ctx});
    writer_ = sys.spawn(store_writer_impl, context_ptr{ctx}, store_);
    binder_ = sys.spawn(recording_binder, log_);
    registry_ = sys.spawn(registry_impl, context_ptr{ctx}, ready_,
                          std::make_shared<storage::loaded_state>(std::move(*loaded)), writer_,
                          binder_, cluster_);
    run();
  }

  void TearDown() override {
    caf::anon_send_exit(registry_, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(binder_, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(writer_, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(cluster_, caf::exit_reason::user_shutdown);
    run();
    registry_ = nullptr;
    binder_ = nullptr;
    writer_ = nullptr;
    cluster_ = nullptr;
    system_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  caf::scheduler::test_coordinator& sched() {
    return dynamic_cast<caf::scheduler::test_coordinator&>(system_->scheduler());
  }

  // Every message and every timer due within a simulated second.
  void run() {
    for (int i = 0; i < 100; ++i) {
      sched().run();
      sched().advance_time(std::chrono::milliseconds(10));
    }
    sched().run();
  }

  // The watch delivers `objects` of `kind` as one event each.
  void watch(api::resource_kind kind, const std::vector<json::value>& objects) {
    for (const auto& v : objects) {
      api::decode_options o;
      o.expected_kind = kind;
      auto obj = api::decode_object(v, o);
      ASSERT_TRUE(obj) << obj.error().message << "\n" << json::serialize(v);
      world_delta d;
      d.what = world_delta::type::upsert;
      d.kind = kind;
      d.objects.push_back(std::move(*obj));
      caf::anon_send(registry_, delta_atom::value, std::move(d));
      run();
    }
  }

  // Node n0 (4 cpu), the default queue, and PodGroup tf wanting 2 pods: ps 1 and worker 1.
  void cluster_with_gang() {
    watch(api::resource_kind::node,
          {json::object{{"apiVersion", "v1"},
                        {"kind", "Node"},
                        {"metadata", json::object{{"name", "n0"}, {"uid", "node-uid"},
                                                  {"resourceVersion", "1"}}},
                        {"status", json::object{{"allocatable",
                                                 json::object{{"cpu", "4"}, {"memory", "8Gi"},
                                                              {"pods", "110"}}}}}}});
    watch(api::resource_kind::queue,
          {json::object{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                        {"kind", "Queue"},
                        {"metadata", json::object{{"name", "default"}, {"uid", "queue-uid"},
                                                  {"resourceVersion", "2"}}},
                        {"spec", json::object{{"weight", 1}}}}});
    watch(api::resource_kind::pod_group,
          {json::object{
              {"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "PodGroup"},
              {"metadata", json::object{{"name", "tf"}, {"namespace", "t"}, {"uid", "group-uid"},
                                        {"resourceVersion", "3"}}},
              {"spec", json::object{{"minMember", 2},
                                    {"queue", "default"},
                                    {"minTaskMember", json::object{{"ps", 1}, {"worker", 1}}}}}}});
    world_delta synced;
    synced.what = world_delta::type::synced;
    caf::anon_send(registry_, delta_atom::value, std::move(synced));
    caf::anon_send(registry_, lead_atom::value);
    run();
  }

  // The binder's answer: these pods are bound.
  void binder_says_done(const std::vector<std::string>& names) {
    std::vector<binding_outcome> outcomes;
    for (const auto& name : names)
      outcomes.push_back({binding_outcome::type::done, log_->asked.at(name), ""});
    caf::anon_send(registry_, outcome_atom::value, std::move(outcomes));
    run();
  }

  std::filesystem::path dir_;
  std::shared_ptr<storage::store> store_;
  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> system_;
  std::shared_ptr<runtime_context> ctx_;
  std::shared_ptr<std::atomic<bool>> ready_ = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<binder_log> log_ = std::make_shared<binder_log>();
  cluster_actor cluster_;
  store_writer_actor writer_;
  binder_actor binder_;
  registry_actor registry_;
};

// The binder hears both bindings succeed; only then does the watch deliver each pod's version
// from before its binding (its PodScheduled=False condition), then the bound one. The pods were
// bound by us, not by someone else: the gang still counts them, so a pod of the job that comes
// later is placed beside them (a gang that thought its ps gone would ask for a ps among its
// pending pods, and wait forever).
TEST_F(KubeWatchOrder, AnOlderVersionAfterTheBindersAnswerIsNotABindingBySomeoneElse) {
  cluster_with_gang();
  watch(api::resource_kind::pod, {pod_json("tf-ps-0", "uid-ps-0", "ps", "10"),
                                  pod_json("tf-worker-0", "uid-worker-0", "worker", "11")});
  ASSERT_EQ(log_->asked.size(), 2u);
  EXPECT_EQ(log_->node_of["tf-ps-0"], "n0");

  binder_says_done({"tf-ps-0", "tf-worker-0"});
  watch(api::resource_kind::pod, {pod_json("tf-ps-0", "uid-ps-0", "ps", "12"),
                                  pod_json("tf-worker-0", "uid-worker-0", "worker", "13"),
                                  pod_json("tf-ps-0", "uid-ps-0", "ps", "14", "n0"),
                                  pod_json("tf-worker-0", "uid-worker-0", "worker", "15", "n0")});

  watch(api::resource_kind::pod, {pod_json("tf-worker-1", "uid-worker-1", "worker", "16")});
  EXPECT_EQ(log_->asked.count("tf-worker-1"), 1u)
      << "the gang no longer counts a pod it bound itself";
  const std::map<std::string, int> once{{"tf-ps-0", 1}, {"tf-worker-0", 1}, {"tf-worker-1", 1}};
  EXPECT_EQ(log_->times_asked, once) << "a pod bound twice";
}

// The same older versions before the binder answers: the binding is on its way, the cache keeps
// the pods where it put them.
TEST_F(KubeWatchOrder, AnOlderVersionBeforeTheBindersAnswerKeepsTheBinding) {
  cluster_with_gang();
  watch(api::resource_kind::pod, {pod_json("tf-ps-0", "uid-ps-0", "ps", "10"),
                                  pod_json("tf-worker-0", "uid-worker-0", "worker", "11")});
  ASSERT_EQ(log_->asked.size(), 2u);

  watch(api::resource_kind::pod, {pod_json("tf-ps-0", "uid-ps-0", "ps", "12"),
                                  pod_json("tf-worker-0", "uid-worker-0", "worker", "13")});
  binder_says_done({"tf-ps-0", "tf-worker-0"});
  watch(api::resource_kind::pod, {pod_json("tf-ps-0", "uid-ps-0", "ps", "14", "n0"),
                                  pod_json("tf-worker-0", "uid-worker-0", "worker", "15", "n0")});

  watch(api::resource_kind::pod, {pod_json("tf-worker-1", "uid-worker-1", "worker", "16")});
  EXPECT_EQ(log_->asked.count("tf-worker-1"), 1u);
  const std::map<std::string, int> once{{"tf-ps-0", 1}, {"tf-worker-0", 1}, {"tf-worker-1", 1}};
  EXPECT_EQ(log_->times_asked, once) << "a pod bound twice";
}

// A pod another scheduler bound while ours to place is still taken from its gang: the gang
// places another in its stead and never binds that one.
TEST_F(KubeWatchOrder, APodBoundBySomeoneElseLeavesItsGang) {
  cluster_with_gang();
  watch(api::resource_kind::pod, {pod_json("tf-ps-0", "uid-ps-0", "ps", "10")});
  EXPECT_EQ(log_->asked.count("tf-ps-0"), 0u) << "a gang of 2 placed one pod";
  watch(api::resource_kind::pod, {pod_json("tf-ps-0", "uid-ps-0", "ps", "11", "n0"),
                                  pod_json("tf-ps-1", "uid-ps-1", "ps", "12"),
                                  pod_json("tf-worker-0", "uid-worker-0", "worker", "13")});
  EXPECT_EQ(log_->asked.count("tf-ps-0"), 0u);
  EXPECT_EQ(log_->asked.count("tf-ps-1"), 1u);
  EXPECT_EQ(log_->asked.count("tf-worker-0"), 1u);
}

} // namespace
} // namespace phalanx::actors
