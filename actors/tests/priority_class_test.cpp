// PriorityClasses (scheduling.k8s.io/v1) served in standalone mode, on the whole runtime: the
// system classes and the configuration's are there from the start, objects take a class's value
// when they are created (the global default's when they name none), kube-apiserver's rules hold
// (one default, value and preemptionPolicy fixed, system classes kept), and what was written
// survives restarts, names used again included.

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <string>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;

api::priority_class_object make_class(const std::string& name, int32_t value,
                                      bool global_default = false) {
  api::priority_class_object c;
  c.priority_class.meta.name = name;
  c.priority_class.value = value;
  c.priority_class.global_default = global_default;
  return c;
}

std::optional<api::priority_class_object> find_class(runtime_harness& h, const std::string& name) {
  auto r = h.get(api::resource_kind::priority_class, "", name);
  if (!r.ok())
    return std::nullopt;
  return std::get<api::priority_class_object>(*r);
}

api::pod_group_object group_with_class(const std::string& name, const std::string& class_name) {
  auto g = group_of(name, 1);
  g.group.priority_class_name = class_name;
  return g;
}

int32_t created_priority(result<api::object> r) {
  runtime_harness::must_ok(r, "create");
  return std::visit(
      [](const auto& o) -> int32_t {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, api::pod_group_object>)
          return o.group.priority;
        else if constexpr (std::is_same_v<T, api::pod_object>)
          return o.pod.priority;
        else
          return -1;
      },
      *r);
}

TEST(PriorityClasses, SystemAndConfiguredClassesAreServedFromTheStart) {
  auto config = deterministic_config(41);
  config.scheduling.priority_classes["high-priority"] = 1000;
  runtime_harness h{config, {make_node("n-0").cpu("4").memory("8Gi")}};
  auto list = h.list(api::resource_kind::priority_class);
  runtime_harness::must_ok(list, "list");
  std::vector<std::pair<std::string, int32_t>> seen;
  for (const auto& o : list->items) {
    const auto& c = std::get<api::priority_class_object>(o).priority_class;
    seen.emplace_back(c.meta.name.str(), c.value);
    EXPECT_FALSE(c.meta.uid.empty());
    EXPECT_GT(c.meta.resource_version, 0u);
  }
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, int32_t>>{
                      {"high-priority", 1000},
                      {"system-cluster-critical", 2000000000},
                      {"system-node-critical", 2000001000}}));

  // The README's PodGroup names high-priority: it takes the class's value.
  EXPECT_EQ(created_priority(h.create(group_with_class("resnet", "high-priority"))), 1000);
  auto missing = h.create(group_with_class("typo", "hihg-priority"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), errc::invalid_argument);
  EXPECT_NE(missing.error().message().find("spec.priorityClassName: Not found: \"hihg-priority\": "
                                           "no PriorityClass with name hihg-priority was found"),
            std::string::npos)
      << missing.error().message();

  // A class deleted from the store is made again at the next start: it is a default.
  runtime_harness::must_ok(h.remove(api::resource_kind::priority_class, "", "high-priority"),
                           "delete high-priority");
  EXPECT_FALSE(find_class(h, "high-priority"));
  h.restart();
  auto again = find_class(h, "high-priority");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->priority_class.value, 1000);
  EXPECT_EQ(h.group("resnet").group.priority, 1000);
  EXPECT_INVARIANTS(h);
}

TEST(PriorityClasses, OneDefaultFixedValuesAndKeptSystemClassesAsTheApiserverRules) {
  runtime_harness h{deterministic_config(42), {make_node("n-0").cpu("4").memory("8Gi")}};
  runtime_harness::must_ok(h.create(make_class("batch-low", 10)), "batch-low");
  runtime_harness::must_ok(h.create(make_class("everyday", 50, true)), "everyday");
  auto second = h.create(make_class("another", 60, true));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code(), errc::forbidden);
  EXPECT_NE(second.error().message().find(
                "PriorityClass everyday is already marked as default. Only one default can exist"),
            std::string::npos)
      << second.error().message();
  EXPECT_FALSE(find_class(h, "another"));
  auto taken = h.create(make_class("batch-low", 11));
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().code(), errc::already_exists);

  // Objects naming no class take the default's value; a class named wins; a priority written
  // in the spec is kept.
  EXPECT_EQ(created_priority(h.create(api::pod_object{make_pod("plain").cpu("1"), {}})), 50);
  EXPECT_EQ(created_priority(h.create(group_with_class("low", "batch-low"))), 10);
  scheduler::pod given = make_pod("given").cpu("1");
  given.priority = 7;
  EXPECT_EQ(created_priority(h.create(api::pod_object{given, {}})), 7);

  // An update may change the description and the default flag, never the value or the policy.
  auto everyday = *find_class(h, "everyday");
  auto revalued = everyday;
  revalued.priority_class.value = 51;
  auto refused = h.update(api::object{revalued});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), errc::invalid_argument);
  EXPECT_NE(refused.error().message().find("value: Forbidden: may not be changed in an update."),
            std::string::npos)
      << refused.error().message();
  auto never = everyday;
  never.priority_class.preemption = scheduler::preemption_policy::never;
  auto refused_policy = h.update(api::object{never});
  ASSERT_FALSE(refused_policy.ok());
  EXPECT_NE(refused_policy.error().message().find("preemptionPolicy"), std::string::npos);
  auto described = everyday;
  described.priority_class.description = "most work";
  runtime_harness::must_ok(h.update(api::object{described}), "describe everyday");
  auto low = *find_class(h, "batch-low");
  low.priority_class.global_default = true;
  auto stolen = h.update(api::object{low});
  ASSERT_FALSE(stolen.ok());
  EXPECT_EQ(stolen.error().code(), errc::forbidden);

  // The system classes stay; a user class goes, and what took its value keeps it.
  auto system = h.remove(api::resource_kind::priority_class, "", "system-node-critical");
  ASSERT_FALSE(system.ok());
  EXPECT_EQ(system.error().code(), errc::forbidden);
  EXPECT_NE(system.error().message().find("this is a system priority class and cannot be deleted"),
            std::string::npos);
  runtime_harness::must_ok(h.remove(api::resource_kind::priority_class, "", "batch-low"),
                           "delete batch-low");
  EXPECT_EQ(h.group("low").group.priority, 10);

  // The name used again, with another value, after a restart: new objects take the new one,
  // and the default moved to it is the one objects without a class take.
  h.restart();
  EXPECT_FALSE(find_class(h, "batch-low"));
  ASSERT_TRUE(find_class(h, "everyday"));
  EXPECT_EQ(find_class(h, "everyday")->priority_class.description, "most work");
  EXPECT_TRUE(find_class(h, "system-node-critical"));
  auto undefault = *find_class(h, "everyday");
  undefault.priority_class.global_default = false;
  runtime_harness::must_ok(h.update(api::object{undefault}), "everyday not the default");
  runtime_harness::must_ok(h.create(make_class("batch-low", 20, true)), "batch-low again");
  EXPECT_EQ(created_priority(h.create(group_with_class("low-2", "batch-low"))), 20);
  EXPECT_EQ(created_priority(h.create(api::pod_object{make_pod("plain-2").cpu("1"), {}})), 20);
  EXPECT_EQ(h.group("low").group.priority, 10);
  h.restart();
  EXPECT_EQ(find_class(h, "batch-low")->priority_class.value, 20);
  EXPECT_TRUE(find_class(h, "batch-low")->priority_class.global_default);
  EXPECT_FALSE(find_class(h, "everyday")->priority_class.global_default);
  EXPECT_INVARIANTS(h);
}

TEST(PriorityClasses, ADryRunStoresNothing) {
  runtime_harness h{deterministic_config(43), {make_node("n-0").cpu("4").memory("8Gi")}};
  api::write_options dry;
  dry.dry_run = true;
  auto answer = h.call<result<api::object>>(
      [&](auto done) { h.svc().create(api::object{make_class("trial", 5)}, dry, done); });
  runtime_harness::must_ok(answer, "dry run");
  EXPECT_EQ(std::get<api::priority_class_object>(*answer).priority_class.value, 5);
  EXPECT_FALSE(find_class(h, "trial"));
  runtime_harness::must_ok(h.create(make_class("trial", 5)), "create trial");
  auto stored = find_class(h, "trial");
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->priority_class.preemption, scheduler::preemption_policy::preempt_lower_priority);
}

} // namespace
} // namespace phalanx::actors::testing
