// Tests of the model's values: label sets, enum names, effective requests (scheduler/model.hpp).

#include "scheduler/model.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace phalanx::scheduler {
namespace {

using testing::res;

// ---------------------------------------------------------------------------------------------
// label_set

TEST(label_set, sorted_unique_and_searchable) {
  label_set l{{"zone", "a"}, {"app", "web"}, {"tier", "x"}, {"app", "api"}};
  std::vector<label_set::entry> want = {{"app", "api"}, {"tier", "x"}, {"zone", "a"}};
  // Sorted, and the later "app" replaced the earlier.
  EXPECT_EQ(std::vector<label_set::entry>(l.entries().begin(), l.entries().end()), want);
  EXPECT_EQ(l.size(), 3u);
  ASSERT_TRUE(l.find("tier").has_value());
  EXPECT_EQ(*l.find("tier"), "x");
  EXPECT_FALSE(l.find("nope").has_value());
  EXPECT_FALSE(l.find("").has_value());
  EXPECT_TRUE(l.contains("zone"));
  EXPECT_FALSE(l.contains("zon"));
  EXPECT_FALSE(l.contains("zonee"));

  l.set("tier", "y");
  EXPECT_EQ(*l.find("tier"), "y");
  l.set("b", "");
  EXPECT_TRUE(l.contains("b"));
  EXPECT_EQ(*l.find("b"), "");
  EXPECT_EQ(l.entries()[1].first, "b");

  EXPECT_TRUE(l.erase("app"));
  EXPECT_FALSE(l.erase("app"));
  EXPECT_FALSE(l.erase("missing"));
  EXPECT_EQ(l.size(), 3u);

  label_set empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_FALSE(empty.find("x").has_value());
  EXPECT_EQ(empty.entries().begin(), empty.entries().end());
  EXPECT_FALSE(empty.erase("x"));

  label_set a{{"k", "v"}, {"j", "w"}};
  label_set b;
  b.set("k", "v");
  b.set("j", "w");
  EXPECT_EQ(a, b); // Insertion order does not matter.
}

TEST(label_set, many_keys_stay_sorted) {
  label_set l;
  for (int i = 99; i >= 0; --i)
    l.set("key-" + std::to_string(i * 7919 % 100), std::to_string(i));
  ASSERT_EQ(l.size(), 100u);
  for (std::size_t i = 1; i < l.entries().size(); ++i)
    EXPECT_LT(l.entries()[i - 1].first, l.entries()[i].first);
  for (int i = 0; i < 100; ++i)
    EXPECT_TRUE(l.contains("key-" + std::to_string(i)));
}

TEST(label_set, key_prefix) {
  label_set l{{"app", "x"}, {"sim.phalanx.io/duration", "30s"}, {"zone", "a"}};
  EXPECT_TRUE(l.has_key_with_prefix("sim.phalanx.io/"));
  EXPECT_TRUE(l.has_key_with_prefix("ap"));
  EXPECT_TRUE(l.has_key_with_prefix(""));
  EXPECT_FALSE(l.has_key_with_prefix("sim.phalanx.io/x"));
  EXPECT_FALSE(l.has_key_with_prefix("zz"));
  EXPECT_FALSE(label_set().has_key_with_prefix(""));
}

// Copies share one block until one of them changes; a change never shows through another copy.
TEST(label_set, copies_share_until_changed) {
  label_set a{{"app", "spark"}, {"role", "driver"}};
  label_set b = a;
  EXPECT_TRUE(a.shares_with(b));
  b.set("app", "spark"); // The same value: nothing changes, still shared.
  EXPECT_TRUE(a.shares_with(b));
  b.set("role", "executor");
  EXPECT_FALSE(a.shares_with(b));
  EXPECT_EQ(*a.find("role"), "driver");
  EXPECT_EQ(*b.find("role"), "executor");
  label_set c = a;
  EXPECT_FALSE(c.erase("missing"));
  EXPECT_TRUE(c.shares_with(a));
  EXPECT_TRUE(c.erase("app"));
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(c.size(), 1u);
  EXPECT_NE(a, c);
  label_set d = b;
  EXPECT_EQ(d, b);
  label_set equal_but_separate{{"app", "spark"}, {"role", "executor"}};
  EXPECT_FALSE(equal_but_separate.shares_with(b));
  EXPECT_EQ(equal_but_separate, b);
  // A moved-from set is empty and usable; the default one shares nothing.
  label_set moved = std::move(d);
  EXPECT_EQ(moved, b);
  EXPECT_TRUE(label_set().empty());
  EXPECT_FALSE(label_set().shares_with(label_set()));
  EXPECT_EQ(label_set(), label_set{});
}

// One block holds the pairs: a 16-byte header, 16 bytes per pair and the characters of the
// values, whatever their lengths (a vector of string pairs took 64 bytes per pair before any
// character); keys point into the process's key table.
TEST(label_set, one_block_per_set) {
  label_set l{{"volcano.sh/job-name", "spark-wordcount-0017"}, {"volcano.sh/task-index", "3"}};
  EXPECT_EQ(l.block_bytes(), 16u + 2 * 16u + 20 + 1);
  EXPECT_EQ(label_set().block_bytes(), 0u);
  label_set copy = l;
  EXPECT_EQ(copy.block_bytes(), l.block_bytes());
  EXPECT_TRUE(l.erase("volcano.sh/task-index"));
  EXPECT_TRUE(l.erase("volcano.sh/job-name"));
  EXPECT_TRUE(l.empty());
  EXPECT_EQ(l.block_bytes(), 0u); // The last erase leaves no block.
  EXPECT_EQ(copy.size(), 2u);
}

// A key longer than the key table takes (128 bytes) stays in the block, right before its value;
// reads, order, changes and equality do not tell the two apart.
TEST(label_set, long_keys_stay_in_the_block) {
  const std::string long_key = "example.com/" + std::string(130, 'k');
  label_set l{{long_key, "v1"}, {"app", "spark"}, {"zz", ""}};
  EXPECT_EQ(l.block_bytes(), 16u + 3 * 16u + long_key.size() + 2 + 5);
  EXPECT_EQ(*l.find(long_key), "v1");
  EXPECT_EQ(*l.find("app"), "spark");
  EXPECT_EQ(*l.find("zz"), "");
  std::vector<label_set::entry> want = {{"app", "spark"}, {long_key, "v1"}, {"zz", ""}};
  EXPECT_EQ(std::vector<label_set::entry>(l.entries().begin(), l.entries().end()), want);
  label_set changed = l;
  changed.set(long_key, "v2");
  EXPECT_EQ(*changed.find(long_key), "v2");
  EXPECT_EQ(*l.find(long_key), "v1");
  EXPECT_NE(changed, l);
  changed.set(long_key, "v1");
  EXPECT_EQ(changed, l);
  EXPECT_TRUE(changed.erase("app"));
  EXPECT_EQ(*changed.find(long_key), "v1");
  EXPECT_EQ(changed.size(), 2u);
  // Far beyond any Kubernetes key (a decoder may be handed one in a damaged record): still kept.
  const std::string huge_key(70000, 'h');
  label_set huge{{huge_key, "v"}, {"app", "x"}};
  EXPECT_EQ(*huge.find(huge_key), "v");
  EXPECT_EQ(huge.entries()[1].first.size(), 70000u);
}

// A change of one pair in a shared block makes a delta (that pair over the shared block), read
// exactly as a whole set would be: a job task's pods share the task's sets and add their index.
TEST(label_set, one_pair_over_a_shared_block) {
  const label_set task{{"b", "1"}, {"d", "2"}, {"f", "3"}};
  auto entries = [](const label_set& l) {
    return std::vector<label_set::entry>(l.entries().begin(), l.entries().end());
  };
  using pairs = std::vector<label_set::entry>;
  // Inserted before, between and after the pairs, and replacing each of them.
  const std::vector<std::pair<label_set::entry, pairs>> cases = {
    {{"a", "x"}, {{"a", "x"}, {"b", "1"}, {"d", "2"}, {"f", "3"}}},
    {{"c", "x"}, {{"b", "1"}, {"c", "x"}, {"d", "2"}, {"f", "3"}}},
    {{"g", "x"}, {{"b", "1"}, {"d", "2"}, {"f", "3"}, {"g", "x"}}},
    {{"b", "x"}, {{"b", "x"}, {"d", "2"}, {"f", "3"}}},
    {{"d", "x"}, {{"b", "1"}, {"d", "x"}, {"f", "3"}}},
    {{"f", "x"}, {{"b", "1"}, {"d", "2"}, {"f", "x"}}},
  };
  for (const auto& [pair, want] : cases) {
    label_set pod = task;
    pod.set(pair.first, pair.second);
    EXPECT_TRUE(pod.is_delta()) << pair.first;
    EXPECT_EQ(entries(pod), want) << pair.first;
    EXPECT_EQ(pod.size(), want.size());
    label_set::builder whole;
    for (auto [k, v] : want)
      whole.add(k, v);
    EXPECT_EQ(pod, whole.build());
    for (auto [k, v] : want)
      EXPECT_EQ(pod.find(k), v);
    EXPECT_FALSE(pod.find("e"));
    EXPECT_TRUE(pod.has_key_with_prefix(pair.first));
    // Header (with the pair's position), base, the key's code only when the pair is added (a
    // replacing delta's key is the base's) and the value's character: 25 bytes replacing, within
    // jemalloc's 32-byte class with values of up to 8 characters; 33 adding.
    const bool replaces = task.contains(pair.first);
    EXPECT_EQ(pod.block_bytes(), 16u + 8u + (replaces ? 0u : 8u) + 1u);
    // Changing the delta's own pair again keeps one level; any other change makes a whole set.
    pod.set(pair.first, "yy");
    EXPECT_TRUE(pod.is_delta());
    EXPECT_EQ(*pod.find(pair.first), "yy");
    label_set other = pod;
    other.set("e", "5");
    EXPECT_FALSE(other.is_delta());
    EXPECT_EQ(other.size(), want.size() + 1);
    EXPECT_EQ(*other.find(pair.first), "yy");
    EXPECT_EQ(*other.find("e"), "5");
    EXPECT_TRUE(other.erase(pair.first));
    EXPECT_TRUE(pod.erase("e") == false && pod.erase(pair.first));
    EXPECT_FALSE(pod.is_delta());
    EXPECT_FALSE(pod.contains(pair.first));
  }
  // The task's set is untouched, and a block only this set holds is rebuilt, not deltaed (a
  // delta would keep the old block alive beside it).
  EXPECT_EQ(entries(task), (pairs{{"b", "1"}, {"d", "2"}, {"f", "3"}}));
  label_set alone{{"b", "1"}};
  alone.set("c", "2");
  EXPECT_FALSE(alone.is_delta());
  // A delta outlives every other holder of its base.
  label_set survivor;
  {
    label_set base{{"k", "v"}, {"long-value", std::string(100, 'z')}};
    survivor = base;
    survivor.set("k", "w");
  }
  EXPECT_TRUE(survivor.is_delta());
  EXPECT_EQ(*survivor.find("long-value"), std::string(100, 'z'));
  EXPECT_EQ(*survivor.find("k"), "w");
  // A key too long for the key table goes in the delta's characters.
  const std::string long_key(200, 'q');
  label_set with_long = task;
  with_long.set(long_key, "v");
  EXPECT_TRUE(with_long.is_delta());
  EXPECT_EQ(*with_long.find(long_key), "v");
  EXPECT_EQ(with_long.block_bytes(), 16u + 16u + long_key.size() + 1u);
  // Replacing its value keeps the key in the base: the delta holds the value alone.
  label_set::builder rebuilt;
  for (auto [k, v] : entries(with_long))
    rebuilt.add(k, v);
  const label_set long_base = rebuilt.build();
  EXPECT_FALSE(long_base.is_delta());
  label_set replaced = long_base;
  replaced.set(long_key, "w2");
  EXPECT_TRUE(replaced.is_delta());
  EXPECT_EQ(*replaced.find(long_key), "w2");
  EXPECT_EQ(entries(replaced).size(), 4u);
  EXPECT_EQ(replaced.block_bytes(), 16u + 8u + 2u);
}

// The delta's position is packed into the block header (1 | replaces << 1 | at << 2): positions
// far past a byte's range read back exactly, inserting and replacing.
TEST(label_set, a_delta_deep_in_a_large_set) {
  std::vector<std::pair<std::string, std::string>> texts; // The builder takes views.
  for (int i = 0; i < 1000; ++i)
    texts.emplace_back("key-" + std::to_string(10000 + 2 * i), std::to_string(i));
  label_set::builder b;
  for (const auto& [k, v] : texts)
    b.add(k, v);
  const label_set shared = b.build();
  for (auto [key, replaced] : {std::pair{std::string("key-11401"), false},   // before 701
                               std::pair{std::string("key-11400"), true},    // pair 700
                               std::pair{std::string("key-11998"), true}}) { // the last
    label_set one = shared;
    one.set(key, "changed");
    ASSERT_TRUE(one.is_delta()) << key;
    EXPECT_EQ(one.size(), replaced ? 1000u : 1001u) << key;
    label_set::builder whole;
    for (auto [k, v] : shared.entries())
      if (k != key)
        whole.add(k, v);
    whole.add(key, "changed");
    EXPECT_EQ(one, whole.build()) << key;
    EXPECT_EQ(*one.find(key), "changed");
    EXPECT_EQ(*one.find("key-10000"), "0");
    EXPECT_EQ(*one.find("key-11996"), "998");
  }
}

// A decoder's builder shares the block of the last set it built when the pairs are equal, and
// makes a delta over it when they are one pair apart; otherwise a whole new set.
TEST(label_set, builder_shares_with_the_last_set_built) {
  label_set::builder b;
  auto build = [&b](std::initializer_list<label_set::entry> pairs) {
    for (auto [k, v] : pairs)
      b.add(k, v);
    return b.build_sharing();
  };
  label_set first = build({{"job", "j"}, {"task", "w"}, {"index", "0"}});
  EXPECT_FALSE(first.is_delta());
  label_set same = build({{"task", "w"}, {"index", "0"}, {"job", "j"}});
  EXPECT_TRUE(same.shares_with(first));
  label_set next = build({{"job", "j"}, {"task", "w"}, {"index", "1"}});
  EXPECT_TRUE(next.is_delta());
  EXPECT_EQ(next, (label_set{{"job", "j"}, {"task", "w"}, {"index", "1"}}));
  label_set more = build({{"job", "j"}, {"task", "w"}, {"index", "0"}, {"zone", "a"}});
  EXPECT_TRUE(more.is_delta());
  EXPECT_EQ(more, (label_set{{"job", "j"}, {"task", "w"}, {"index", "0"}, {"zone", "a"}}));
  // Two pairs apart, one fewer, a different key in place: whole sets, each the next base.
  label_set two = build({{"job", "j"}, {"task", "ps"}, {"index", "1"}});
  EXPECT_FALSE(two.is_delta());
  label_set fewer = build({{"job", "j"}, {"task", "ps"}});
  EXPECT_FALSE(fewer.is_delta());
  label_set renamed = build({{"job", "j"}, {"tusk", "ps"}});
  EXPECT_FALSE(renamed.is_delta());
  EXPECT_EQ(renamed, (label_set{{"job", "j"}, {"tusk", "ps"}}));
  label_set after = build({{"job", "j"}, {"tusk", "ps"}, {"x", "1"}});
  EXPECT_TRUE(after.is_delta());
  EXPECT_TRUE(build({}).empty());
  EXPECT_EQ(first, (label_set{{"job", "j"}, {"task", "w"}, {"index", "0"}}));
}

// Keys are interned by every thread at once (the store's decoders, the registry, HTTP threads):
// each set reads back exactly what it was built from, and a key's view outlives every set.
TEST(label_set, keys_interned_from_many_threads) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &wrong] {
      for (int i = 0; i < 3000; ++i) {
        // Keys shared by the threads, and keys only this one uses. The builder holds views.
        std::vector<std::string> keys;
        for (int k = 0; k < 6; ++k)
          keys.push_back("shared.example/k" + std::to_string((i + k) % 50));
        keys.push_back("own.example/t" + std::to_string(t) + "-" + std::to_string(i % 700));
        const std::string value = "t" + std::to_string(t) + "-" + std::to_string(i);
        label_set::builder b;
        for (const auto& k : keys)
          b.add(k, value);
        label_set l = b.build();
        if (l.size() != 7 || *l.find("shared.example/k" + std::to_string(i % 50)) !=
                                 "t" + std::to_string(t) + "-" + std::to_string(i))
          ++wrong;
      }
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(wrong.load(), 0);
  std::string_view key;
  {
    label_set gone{{"outlives.example/key", "1"}};
    key = gone.entries()[0].first;
  }
  EXPECT_EQ(key, "outlives.example/key"); // Interned: valid after its set is gone.
}

// The builder sorts, keeps the last of repeated keys and can be reused; set() may be passed
// views into the set's own block (the old block lives until the new one is built).
TEST(label_set, builder_and_self_views) {
  label_set::builder b;
  b.add("b", "1").add("a", "2").add("b", "3").add("c", "").add("a", "4");
  label_set l = b.build();
  std::vector<label_set::entry> want = {{"a", "4"}, {"b", "3"}, {"c", ""}};
  EXPECT_EQ(std::vector<label_set::entry>(l.entries().begin(), l.entries().end()), want);
  EXPECT_TRUE(b.build().empty()); // Emptied by build().
  b.add("x", "y");
  EXPECT_EQ(b.build(), (label_set{{"x", "y"}}));

  auto [key, value] = l.entries()[0];
  l.set(value, key); // Key "4", value "a": both views into the block being replaced.
  EXPECT_EQ(*l.find("4"), "a");
  l.set(l.entries().back().first, l.entries().front().first); // "c" = "4".
  EXPECT_EQ(*l.find("c"), "4");
  EXPECT_EQ(l.size(), 4u);

  // An iterator holds the block, not the view it came from.
  auto first = l.entries().begin();
  auto last = l.entries().end();
  EXPECT_EQ(last - first, 4);
  EXPECT_EQ((*first).first, "4");
  EXPECT_EQ(first[3].first, "c");
  EXPECT_TRUE(std::is_sorted(first, last, [](const auto& x, const auto& y) {
    return x.first < y.first;
  }));

  label_set::builder from(l);
  from.add("b", "changed");
  auto changed = from.build();
  EXPECT_EQ(*changed.find("b"), "changed");
  EXPECT_EQ(*l.find("b"), "3");
  EXPECT_EQ(changed.size(), l.size());
}

// Copies made and dropped from several threads at once share one block safely (run under
// ThreadSanitizer or ASan, this is the check of the reference count).
TEST(label_set, copies_across_threads) {
  label_set shared{{"app", "spark"}, {"role", "executor"}};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&shared] {
      for (int i = 0; i < 20000; ++i) {
        label_set copy = shared;
        label_set moved = std::move(copy);
        if (moved.find("app") != "spark")
          std::abort();
      }
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(*shared.find("role"), "executor");
  label_set last = shared;
  EXPECT_TRUE(last.shares_with(shared));
}

// ---------------------------------------------------------------------------------------------
// Enum names: every value has its Kubernetes/Volcano spelling, and from_string inverts it.

template <class Enum, class Parse>
void expect_names(Enum last, Parse parse, const std::vector<std::string_view>& spellings) {
  ASSERT_EQ(std::size_t(last) + 1, spellings.size()) << "a value without an expected spelling";
  std::set<std::string_view> seen;
  for (int i = 0; i <= int(last); ++i) {
    auto e = static_cast<Enum>(i);
    std::string_view name = to_string(e);
    EXPECT_EQ(name, spellings[std::size_t(i)]);
    EXPECT_NE(name, "unknown");
    EXPECT_TRUE(seen.insert(name).second) << name << " twice";
    auto back = parse(name);
    ASSERT_TRUE(back.has_value()) << name;
    EXPECT_EQ(*back, e);
    // Parsing is exact: no case folding, no trimming.
    std::string lower(name);
    for (auto& c : lower)
      c = char(std::tolower(static_cast<unsigned char>(c)));
    if (lower != name) {
      EXPECT_FALSE(parse(lower).has_value()) << lower;
    }
    EXPECT_FALSE(parse(" " + std::string(name)).has_value());
    EXPECT_FALSE(parse(std::string(name) + " ").has_value());
  }
  EXPECT_FALSE(parse("").has_value());
  EXPECT_FALSE(parse("unknown").has_value());
}

// A value past the last one prints "unknown" (only where it is a valid value of the type).
TEST(enum_names, out_of_range_values_print_unknown) {
  EXPECT_EQ(to_string(static_cast<taint_effect>(3)), "unknown");
  EXPECT_EQ(to_string(static_cast<selector_operator>(6)), "unknown");
  EXPECT_EQ(to_string(static_cast<pod_phase>(5)), "unknown");
  EXPECT_EQ(to_string(static_cast<pod_group_phase>(5)), "unknown");
  EXPECT_EQ(to_string(static_cast<queue_state>(3)), "unknown");
}

TEST(enum_names, taint_effect) {
  expect_names(taint_effect_last, taint_effect_from_string,
               {"NoSchedule", "PreferNoSchedule", "NoExecute"});
}

TEST(enum_names, toleration_operator) {
  expect_names(toleration_operator_last, toleration_operator_from_string, {"Equal", "Exists"});
}

TEST(enum_names, selector_operator) {
  expect_names(selector_operator_last, selector_operator_from_string,
               {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"});
}

TEST(enum_names, pod_phase) {
  expect_names(pod_phase_last, pod_phase_from_string,
               {"Pending", "Running", "Succeeded", "Failed", "Unknown"});
}

TEST(enum_names, pod_group_phase) {
  expect_names(pod_group_phase_last, pod_group_phase_from_string,
               {"Pending", "Inqueue", "Running", "Unknown", "Completed"});
}

TEST(enum_names, queue_state) {
  expect_names(queue_state_last, queue_state_from_string, {"Open", "Closed", "Closing"});
}

TEST(pod_phase, terminal_phases) {
  EXPECT_FALSE(is_terminal(pod_phase::pending));
  EXPECT_FALSE(is_terminal(pod_phase::running));
  EXPECT_TRUE(is_terminal(pod_phase::succeeded));
  EXPECT_TRUE(is_terminal(pod_phase::failed));
  EXPECT_FALSE(is_terminal(pod_phase::unknown));
}

// ---------------------------------------------------------------------------------------------
// effective_requests

container_resources container(std::string name, resources requests) {
  return {std::move(name), std::move(requests), {}};
}

TEST(effective_requests, table) {
  struct row {
    const char* what;
    std::vector<container_resources> containers;
    std::vector<container_resources> init;
    resources overhead;
    resources expected;
  };
  const row rows[] = {
      {"no containers: just the pod slot", {}, {}, {}, res("pods", "1")},
      {"containers add up",
       {container("a", res("cpu", "500m", "memory", "1Gi")),
        container("b", res("cpu", "250m", "memory", "512Mi"))},
       {},
       {},
       res("cpu", "750m", "memory", "1536Mi", "pods", "1")},
      {"the largest init container wins per dimension",
       {container("main", res("cpu", "1", "memory", "1Gi"))},
       {container("init-cpu", res("cpu", "2", "memory", "100Mi")),
        container("init-mem", res("cpu", "100m", "memory", "4Gi"))},
       {},
       res("cpu", "2", "memory", "4Gi", "pods", "1")},
      {"init containers smaller than the sum do not count",
       {container("a", res("cpu", "1")), container("b", res("cpu", "1"))},
       {container("init", res("cpu", "1500m"))},
       {},
       res("cpu", "2", "pods", "1")},
      {"overhead is added after the max",
       {container("main", res("cpu", "1"))},
       {container("init", res("cpu", "3"))},
       res("cpu", "250m", "memory", "100Mi"),
       res("cpu", "3250m", "memory", "100Mi", "pods", "1")},
      {"extended resources follow the same rule",
       {container("a", resources{}.with("nvidia.com/gpu", 1)),
        container("b", resources{}.with("nvidia.com/gpu", 1))},
       {container("init", resources{}.with("nvidia.com/gpu", 3).with("example.com/x", 1))},
       resources{}.with("example.com/x", 1),
       res("pods", "1").with("nvidia.com/gpu", 3).with("example.com/x", 2)},
      {"a container's pods dimension is ignored",
       {container("a", res("cpu", "1", "pods", "5"))},
       {},
       res("pods", "2"),
       res("cpu", "1", "pods", "1")},
  };
  for (const auto& r : rows)
    EXPECT_EQ(effective_requests(r.containers, r.init, r.overhead), r.expected) << r.what;
}

// ---------------------------------------------------------------------------------------------
// pod::placement

TEST(pod, placement_is_a_shared_empty_instance_without_constraints) {
  pod a;
  pod b;
  EXPECT_TRUE(a.placement().empty());
  EXPECT_EQ(&a.placement(), &b.placement());
  pod c = testing::make_pod("c").selector("zone", "a");
  ASSERT_NE(c.constraints, nullptr);
  EXPECT_EQ(&c.placement(), c.constraints.get());
  EXPECT_FALSE(c.placement().empty());
  EXPECT_EQ(*c.placement().node_selector.find("zone"), "a");
}

// ---------------------------------------------------------------------------------------------
// pod layout

// What the allocator below was asked for, in bytes.
std::size_t counted_bytes = 0;

// An allocator that counts the bytes it hands out. Stateless, as std::allocator is, so the
// control block allocate_shared builds with it has make_shared's size (an allocator with state
// would be stored in the block).
template <class T>
struct counting_allocator {
  using value_type = T;
  counting_allocator() = default;
  template <class U>
  counting_allocator(const counting_allocator<U>&) {}
  T* allocate(std::size_t n) {
    counted_bytes += n * sizeof(T);
    return std::allocator<T>{}.allocate(n);
  }
  void deallocate(T* p, std::size_t n) { std::allocator<T>{}.deallocate(p, n); }
  template <class U>
  friend bool operator==(const counting_allocator&, const counting_allocator<U>&) {
    return true;
  }
};

// Every runtime holds each pod once, behind a shared pointer: the pod and the pointer's counts
// are one allocation, and jemalloc rounds it up to its next size class (..., 192, 224, 256).
// 225 bytes would cost 32 more per pod; a field added to the pod must find its bytes elsewhere.
TEST(pod_layout, a_pod_and_its_shared_count_fit_in_224_bytes) {
  static_assert(std::is_empty_v<counting_allocator<pod>>);
  counted_bytes = 0;
  auto p = std::allocate_shared<const pod>(counting_allocator<pod>());
  EXPECT_LE(counted_bytes, 224u) << "sizeof(pod) " << sizeof(pod);
  EXPECT_GT(counted_bytes, sizeof(pod));
}

} // namespace
} // namespace phalanx::scheduler
