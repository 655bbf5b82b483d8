// Pod names on the whole runtime (deterministic): a name is taken from the moment a creation is
// accepted until it is durable, whether a bare pod or a job's pod takes it, and a creation that
// fails gives back every name it took.

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <optional>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;

// Sends every creation before any is answered (all in flight at once), then lets the runtime run
// until each has its answer.
std::vector<result<api::object>> create_together(runtime_harness& h,
                                                 std::vector<api::object> objects) {
  auto answers = std::make_shared<std::vector<std::optional<result<api::object>>>>(objects.size());
  for (std::size_t i = 0; i < objects.size(); ++i)
    h.svc().create(std::move(objects[i]),
                   [answers, i](result<api::object> r) { (*answers)[i] = std::move(r); });
  h.run_until(
      [&] {
        for (const auto& a : *answers)
          if (!a)
            return false;
        return true;
      },
      std::chrono::milliseconds(1000), std::chrono::milliseconds(1));
  std::vector<result<api::object>> out;
  for (auto& a : *answers) {
    if (!a)
      throw std::runtime_error("a creation was never answered");
    out.push_back(std::move(*a));
  }
  return out;
}

TEST(RegistryNames, ABarePodAndAJobInFlightCannotBothTakeAName) {
  runtime_harness h{deterministic_config(5), {make_node("n-0").cpu("8").memory("8Gi")}};
  auto answers = create_together(
      h, {one_task_job("train", 3), api::pod_object{make_pod("train-worker-1").cpu("1"), {}}});
  ASSERT_TRUE(answers[0].ok()) << answers[0].error().to_string();
  ASSERT_FALSE(answers[1].ok());
  EXPECT_EQ(answers[1].error().code(), errc::already_exists);
  EXPECT_NE(answers[1].error().message().find("train-worker-1"), std::string::npos);
  auto pods = h.pods();
  ASSERT_EQ(pods.size(), 3u);
  auto pod = h.get(api::resource_kind::pod, "default", "train-worker-1");
  ASSERT_TRUE(pod.ok()) << pod.error().to_string();
  EXPECT_EQ(std::get<api::pod_object>(*pod).pod.group.view().rfind("train-", 0), 0u);
}

TEST(RegistryNames, PodsCreatedOneByOneShareTheirNamespaceGroupRoleAndSchedulerNames) {
  // Each pod arrives with its own copy of the names (an API call each); the registry makes them
  // share one block per name, as a job's pods and a restored store's do (shared_string.hpp).
  runtime_harness h{deterministic_config(5), {make_node("n-0").cpu("8").memory("8Gi")}};
  for (const char* name : {"etl-0", "etl-1"}) {
    auto p = make_pod(name).cpu("1").group("nightly-etl-with-a-long-name").role("executor").obj();
    p.scheduler_name = "volcano";
    runtime_harness::must_ok(h.create(api::pod_object{std::move(p), {}}), name);
  }
  auto a = h.get(api::resource_kind::pod, "default", "etl-0");
  auto b = h.get(api::resource_kind::pod, "default", "etl-1");
  ASSERT_TRUE(a.ok() && b.ok());
  const auto& pa = std::get<api::pod_object>(*a).pod;
  const auto& pb = std::get<api::pod_object>(*b).pod;
  EXPECT_EQ(pa.group, "nightly-etl-with-a-long-name");
  EXPECT_TRUE(pa.group.shares_with(pb.group));
  EXPECT_TRUE(pa.role.shares_with(pb.role));
  EXPECT_TRUE(pa.scheduler_name.shares_with(pb.scheduler_name));
  EXPECT_TRUE(pa.meta.namespace_name.shares_with(pb.meta.namespace_name));
}

TEST(RegistryNames, PodsBoundToOneNodeShareItsName) {
  // A binding names the node through the registry's node entry, not a new block per pod.
  runtime_harness h{deterministic_config(5), {make_node("worker-node-0").cpu("8").memory("8Gi")}};
  for (const char* name : {"solo-0", "solo-1", "solo-2"})
    runtime_harness::must_ok(h.create(api::pod_object{make_pod(name).cpu("1"), {}}), name);
  auto pod_named = [&](const char* name) {
    auto o = h.get(api::resource_kind::pod, "default", name);
    return o.ok() ? std::get<api::pod_object>(*o).pod : scheduler::pod{};
  };
  ASSERT_TRUE(h.run_until(
      [&] {
        for (const char* name : {"solo-0", "solo-1", "solo-2"})
          if (!pod_named(name).is_bound())
            return false;
        return true;
      },
      std::chrono::milliseconds(5000), std::chrono::milliseconds(5)));
  auto first = pod_named("solo-0");
  EXPECT_EQ(first.node_name, "worker-node-0");
  for (const char* name : {"solo-1", "solo-2"})
    EXPECT_TRUE(pod_named(name).node_name.shares_with(first.node_name)) << name;
}

TEST(RegistryNames, AJobThatFindsANameTakenGivesBackTheOthers) {
  runtime_harness h{deterministic_config(5), {make_node("n-0").cpu("8").memory("8Gi")}};
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("etl-worker-2").cpu("1"), {}}),
                           "create the bare pod");
  auto refused = h.create(one_task_job("etl", 3));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), errc::already_exists);
  // The names the refused job took before it met the taken one are free again.
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("etl-worker-0").cpu("1"), {}}),
                           "create etl-worker-0");
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("etl-worker-1").cpu("1"), {}}),
                           "create etl-worker-1");
  EXPECT_EQ(h.pods().size(), 3u);
  EXPECT_FALSE(h.get(api::resource_kind::job, "default", "etl").ok());
}

TEST(RegistryNames, TwoCreationsOfOnePodInFlightAndTheNameFreedByItsDeletion) {
  runtime_harness h{deterministic_config(5), {make_node("n-0").cpu("8").memory("8Gi")}};
  auto answers = create_together(h, {api::pod_object{make_pod("solo").cpu("1"), {}},
                                     api::pod_object{make_pod("solo").cpu("1"), {}}});
  EXPECT_TRUE(answers[0].ok());
  ASSERT_FALSE(answers[1].ok());
  EXPECT_EQ(answers[1].error().code(), errc::already_exists);
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "solo"), "delete solo");
  // A pod whose binding is being made durable goes right after it (the delete is accepted now).
  ASSERT_TRUE(h.run_until(
      [&] { return !h.get(api::resource_kind::pod, "default", "solo").ok(); },
      std::chrono::milliseconds(1000), std::chrono::milliseconds(1)));
  EXPECT_EQ(h.get(api::resource_kind::pod, "default", "solo").error().code(), errc::not_found);
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("solo").cpu("1"), {}}),
                           "create solo again");
}

// The registry finds a pod by "<ns>/<name>" through a set of ids whose hash and equality read
// the pods' names (registry.hpp, pod_ids): the same name in several namespaces is several pods,
// each found as itself while the set grows past several rehashes and shrinks again.
TEST(RegistryNames, PodsAreFoundByNamespaceAndNameThroughGrowthAndDeletion) {
  runtime_harness h{deterministic_config(5), {make_node("n-0").cpu("8").memory("8Gi")}};
  const std::vector<std::string> namespaces{"a", "ab", "team-b"};
  constexpr int per_namespace = 120;
  // Each pod's cpu request tells which one it is: 1m + its position in its namespace.
  auto name_of = [](int i) { return "p-" + std::to_string(i); };
  for (const auto& ns : namespaces)
    for (int i = 0; i < per_namespace; ++i) {
      auto p = make_pod(name_of(i)).ns(ns).cpu(std::to_string(1 + i) + "m").obj();
      p.group = "absent"; // Waits for its group: nothing binds it meanwhile.
      runtime_harness::must_ok(h.create(api::pod_object{std::move(p), {}}), ns + "/" + name_of(i));
    }
  // "a/b-1" and "ab/-1" would be one text without the slash; neither exists.
  EXPECT_EQ(h.get(api::resource_kind::pod, "a", "b-1").error().code(), errc::not_found);
  EXPECT_EQ(h.get(api::resource_kind::pod, "ab", "-1").error().code(), errc::not_found);
  auto cpu_of = [&](const std::string& ns, int i) -> int64_t {
    auto o = h.get(api::resource_kind::pod, ns, name_of(i));
    if (!o.ok())
      return -1;
    const auto& p = std::get<api::pod_object>(*o).pod;
    EXPECT_EQ(p.meta.namespace_name, ns);
    EXPECT_EQ(p.meta.name, name_of(i));
    return p.requests.cpu_milli;
  };
  for (const auto& ns : namespaces)
    for (int i = 0; i < per_namespace; ++i)
      ASSERT_EQ(cpu_of(ns, i), 1 + i) << ns << "/" << name_of(i);
  // Delete the even pods of "ab": the others, and "a"'s and "team-b"'s of the same names, stay.
  for (int i = 0; i < per_namespace; i += 2)
    runtime_harness::must_ok(h.remove(api::resource_kind::pod, "ab", name_of(i)), name_of(i));
  for (const auto& ns : namespaces)
    for (int i = 0; i < per_namespace; ++i)
      EXPECT_EQ(cpu_of(ns, i), ns == "ab" && i % 2 == 0 ? -1 : 1 + i) << ns << "/" << name_of(i);
  // Their names are free again; a second creation of a name that exists is refused.
  runtime_harness::must_ok(
      h.create(api::pod_object{make_pod(name_of(0)).ns("ab").cpu("7m").group("absent"), {}}),
      "create ab/p-0 again");
  EXPECT_EQ(cpu_of("ab", 0), 7);
  auto again = h.create(api::pod_object{make_pod(name_of(1)).ns("ab").cpu("1m"), {}});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code(), errc::already_exists);
  EXPECT_EQ(h.pods().size(), namespaces.size() * per_namespace - per_namespace / 2 + 1);
}

// A resumed job creates its pods again under their old names: those names are reserved until the
// resume is durable, so a bare pod sent at the same time cannot take one of them (before, the
// resume only checked the names, and both could end up with one).
TEST(RegistryNames, AResumedJobReservesItsPodsNames) {
  runtime_harness h{deterministic_config(5), {make_node("n-0").cpu("8").memory("8Gi")}};
  runtime_harness::must_ok(h.create(one_task_job("batch", 2)), "create the job");
  runtime_harness::must_ok(
      h.act(api::resource_kind::job, "default", "batch", api::object_action::type::suspend),
      "suspend");
  ASSERT_TRUE(h.run_until([&] { return h.pods().empty(); }, std::chrono::milliseconds(2000),
                          std::chrono::milliseconds(1)));
  auto resumed = std::make_shared<std::optional<result<api::object>>>();
  h.svc().act(api::resource_kind::job, "default", "batch",
              api::object_action{api::object_action::type::resume},
              [resumed](result<api::object> r) { *resumed = std::move(r); });
  auto bare = create_together(h, {api::pod_object{make_pod("batch-worker-0").cpu("1"), {}}});
  ASSERT_TRUE(h.run_until([&] { return resumed->has_value(); }, std::chrono::milliseconds(1000),
                          std::chrono::milliseconds(1)));
  ASSERT_TRUE((*resumed)->ok()) << (*resumed)->error().to_string();
  ASSERT_FALSE(bare[0].ok());
  EXPECT_EQ(bare[0].error().code(), errc::already_exists);
  auto pods = h.pods();
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& p : pods)
    EXPECT_FALSE(p.pod.group.empty()) << p.pod.meta.name << " is not the job's";
}

// Bindings name nodes by their slot in the cluster view. A node deleted and created again under
// its name takes a new slot: pods bound afterwards count on the new node, and its old slot names
// nothing.
TEST(RegistryNames, ANodeCreatedAgainCountsThePodsBoundToIt) {
  runtime_harness h{deterministic_config(5), {make_node("n-0").cpu("4").memory("8Gi")}};
  runtime_harness::must_ok(h.remove(api::resource_kind::node, "", "n-0"), "delete n-0");
  runtime_harness::must_ok(h.create(api::node_object{make_node("n-0").cpu("4").memory("8Gi"), {}, 0}),
                           "create n-0 again");
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("a").cpu("1"), {}}), "create a");
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("b").cpu("2"), {}}), "create b");
  ASSERT_TRUE(h.run_until(
      [&] {
        auto pods = h.pods();
        return pods.size() == 2 && pods[0].pod.is_bound() && pods[1].pod.is_bound();
      },
      std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
  auto node = h.get(api::resource_kind::node, "", "n-0");
  ASSERT_TRUE(node.ok()) << node.error().to_string();
  const auto& n = std::get<api::node_object>(*node);
  EXPECT_EQ(n.pod_count, 2);
  EXPECT_EQ(n.allocated.cpu_milli, 3000);
}

// Uids are never handed out twice, also across restarts: the registry's generator was seeded the
// same at every start (the --seed flag, deterministic mode), and the first object created after a
// restart got the uid of the first object created before it (found by the SIGKILL test once it
// tracked pods by uid).
TEST(RegistryNames, UidsAreNotHandedOutAgainAfterARestart) {
  runtime_harness h{deterministic_config(21), {make_node("n-0").cpu("4").memory("8Gi")}};
  std::set<std::string> uids;
  auto remember = [&](const result<api::object>& r) {
    runtime_harness::must_ok(r, "create");
    auto uid = api::meta_of(*r).uid.str();
    EXPECT_TRUE(uids.insert(uid).second) << "uid " << uid << " handed out twice";
  };
  auto list_uids = [&](api::resource_kind kind) {
    auto list = h.list(kind);
    runtime_harness::must_ok(list, "list");
    for (const auto& o : list->items)
      uids.insert(api::meta_of(o).uid.str());
  };
  list_uids(api::resource_kind::queue); // The default queue, made at the first start.
  list_uids(api::resource_kind::node);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 3; ++i)
      remember(h.create(api::pod_object{
          make_pod("p" + std::to_string(round) + "-" + std::to_string(i)).cpu("100m"), {}}));
    h.restart();
  }
  EXPECT_EQ(uids.size(), 11u);
}

// A delete sent again while the first is on its way (a client whose connection dropped) is
// answered only once the pod is gone: it answered at once before, and a client that read the pod
// right after its acknowledged delete still found it (found by SigkillChurn's checks). Forced
// deletes (grace period 0): a graceful one is answered once the pod is terminating
// (GracefulDeletion.*).
TEST(RegistryNames, ASecondDeleteOfAPodIsAnsweredOnceThePodIsGone) {
  runtime_harness h{deterministic_config(22), {make_node("n-0").cpu("4").memory("8Gi")}};
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("p").cpu("100m"), {}}), "create");
  // Each answer reads the pod at once: a read sent then is served after the answer's turn.
  auto reads = std::make_shared<std::vector<errc>>();
  auto remove = [&] {
    api::write_options force;
    force.grace_period_seconds = 0;
    h.svc().remove(api::resource_kind::pod, "default", "p", force,
                   [&h, reads](result<api::object> r) {
      ASSERT_TRUE(r.ok()) << r.error().to_string();
      h.svc().get(api::resource_kind::pod, "default", "p", [reads](result<api::object> g) {
        reads->push_back(g.ok() ? errc::ok : g.error().code());
      });
    });
  };
  remove();
  remove();
  ASSERT_TRUE(h.run_until([&] { return reads->size() == 2; }, std::chrono::milliseconds(1000),
                          std::chrono::milliseconds(1)));
  EXPECT_EQ(*reads, (std::vector<errc>{errc::not_found, errc::not_found}))
      << "a delete was acknowledged while the pod could still be read";
}


// A PodGroup whose pods were all deleted completes; pods made for it again (a controller's, or
// a user's under the same names) start it over: they are placed once room appears, and say why
// they wait meanwhile. Before, the completed gang's actor took them in and never placed them.
TEST(RegistryNames, APodGroupWhosePodsWereAllDeletedPlacesItsNewPods) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    runtime_harness h{deterministic_config(seed), {make_node("n-0").cpu("4").memory("8Gi")}};
    auto pods_of = [&](const std::string& group, int count, const char* cpu) {
      for (int i = 0; i < count; ++i)
        runtime_harness::must_ok(
            h.create(api::pod_object{
                make_pod(group + "-" + std::to_string(i)).cpu(cpu).group(group), {}}),
            group + " pod");
    };
    auto bound = [&](const std::string& pod) { return h.pod(pod).pod.is_bound(); };
    runtime_harness::must_ok(h.create(group_of("low", 2)), "low");
    pods_of("low", 2, "2");
    ASSERT_TRUE(h.run_until([&] { return bound("low-0") && bound("low-1"); },
                            std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
    for (const char* pod : {"low-0", "low-1"})
      runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", pod), pod);
    runtime_harness::must_ok(h.create(group_of("big", 1)), "big");
    pods_of("big", 1, "4");
    ASSERT_TRUE(h.run_until([&] { return bound("big-0"); }, std::chrono::milliseconds(5000),
                            std::chrono::milliseconds(10)));
    pods_of("low", 2, "2");
    ASSERT_TRUE(h.run_until(
        [&] {
          for (const auto& c : h.group("low").status.conditions)
            if (c.type == "Unschedulable" && c.status == "True")
              return true;
          return false;
        },
        std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
    runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "big-0"), "big-0");
    EXPECT_TRUE(h.run_until([&] { return bound("low-0") && bound("low-1"); },
                            std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
    EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
  }
}

} // namespace
} // namespace phalanx::actors::testing
