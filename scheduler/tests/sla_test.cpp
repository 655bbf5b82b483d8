// Volcano's sla plugin (scheduler/sla.hpp): the annotation's Go durations, the gate's permit and
// the order it gives gangs.

#include "scheduler/sla.hpp"

#include "scheduler/enqueue_gate.hpp"
#include "scheduler/order.hpp"
#include "scheduler/tests/builders.hpp"
#include "scheduler/validation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace phalanx::scheduler {
namespace {

using testing::make_gang;
using testing::res;
using namespace std::chrono_literals;

TEST(GoDuration, ParsesAsTimeParseDuration) {
  struct row {
    const char* text;
    duration value;
  };
  // Go's own examples and odd cases (time/time_test.go's table, in spirit).
  const row rows[] = {
      {"0", 0ns},          {"+0", 0ns},           {"-0", 0ns},
      {"5s", 5s},          {"30s", 30s},          {"1478s", 1478s},
      {"-5s", -5s},        {"+5s", 5s},           {"5.0s", 5s},
      {"5.6s", 5600ms},    {"5.s", 5s},           {".5s", 500ms},
      {"1.0s", 1s},        {"1.00s", 1s},         {"1.004s", 1004ms},
      {"100.00100s", 100001ms},                   {"10ns", 10ns},
      {"11us", 11us},      {"12\u00b5s", 12us},   {"12\u03bcs", 12us},
      {"13ms", 13ms},      {"14s", 14s},          {"15m", 15min},
      {"16h", 16h},        {"3h30m", 3h + 30min}, {"10.5s4m", 4min + 10500ms},
      {"-2m3.4s", -(2min + 3400ms)},
      {"1h2m3s4ms5us6ns", 1h + 2min + 3s + 4ms + 5us + 6ns},
      {"39h9m14.425s", 39h + 9min + 14425ms},     {"52763797000ns", 52763797000ns},
      {"0.3333333333333333333h", 20min},          {"9007199254740993ns", 9007199254740993ns},
      {"9223372036854775807ns", duration{INT64_MAX}},
      {"-9223372036854775808ns", duration{INT64_MIN}},
      {"0.100000000000000000000h", 6min},
  };
  for (const auto& r : rows) {
    auto parsed = parse_go_duration(r.text);
    ASSERT_TRUE(parsed.ok()) << r.text << ": " << parsed.error().to_string();
    EXPECT_EQ(parsed->count(), r.value.count()) << r.text;
  }
}

TEST(GoDuration, RefusesAsTimeParseDuration) {
  struct row {
    const char* text;
    const char* message;
  };
  const row rows[] = {
      {"", "invalid duration \"\""},
      {"3", "missing unit in duration \"3\""},
      {"-", "invalid duration \"-\""},
      {"s", "invalid duration \"s\""},
      {".", "invalid duration \".\""},
      {"-.", "invalid duration \"-.\""},
      {".s", "invalid duration \".s\""},
      {"+.s", "invalid duration \"+.s\""},
      {"1d", "unknown unit \"d\" in duration \"1d\""},
      {"3000000h", "invalid duration \"3000000h\""},
      {"9223372036854775808ns", "invalid duration \"9223372036854775808ns\""},
      {"9223372036854775.808us", "invalid duration \"9223372036854775.808us\""},
      {"1h 2m", "unknown unit \"h \" in duration \"1h 2m\""},
      {" 1h", "invalid duration \" 1h\""},
  };
  for (const auto& r : rows) {
    auto parsed = parse_go_duration(r.text);
    ASSERT_FALSE(parsed.ok()) << r.text;
    EXPECT_EQ(parsed.error().code(), errc::invalid_argument);
    EXPECT_EQ(parsed.error().message(), r.message) << r.text;
  }
}

pod_group waiting(std::string name, std::chrono::seconds created, const char* sla = nullptr) {
  auto g = make_gang(std::move(name), 1).created(timestamp{} + created).obj().group;
  if (sla) {
    g.meta.annotations.set(sla_waiting_time_key, sla);
    g.sla_waiting_time = **read_sla_waiting_time(g.meta);
  }
  return g;
}

TEST(SlaWaitingTime, ReadFromTheAnnotation) {
  object_meta meta;
  auto none = read_sla_waiting_time(meta);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  meta.annotations.set(sla_waiting_time_key, "1h2m");
  EXPECT_EQ(**read_sla_waiting_time(meta), 1h + 2min);
  for (const char* bad : {"0s", "-1m", "soon", "10"}) {
    meta.annotations.set(sla_waiting_time_key, bad);
    EXPECT_FALSE(read_sla_waiting_time(meta).ok()) << bad;
  }
  auto g = waiting("g", 100s, "30s");
  EXPECT_EQ(sla_deadline(g), timestamp{} + 130s);
  EXPECT_FALSE(sla_due(g, timestamp{} + 129s));
  EXPECT_TRUE(sla_due(g, timestamp{} + 130s));
  EXPECT_FALSE(sla_deadline(waiting("plain", 1s)));
  EXPECT_FALSE(sla_due(waiting("plain", 1s), timestamp{} + 1000h));
}

TEST(SlaWaitingTime, ABadValueIsRefusedNamingTheAnnotation) {
  auto g = waiting("g", 1s);
  g.meta.annotations.set(sla_waiting_time_key, "1 hour");
  auto errors = validate(g);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "metadata.annotations[sla-waiting-time]");
  EXPECT_EQ(errors[0].detail, "unknown unit \" hour\" in duration \"1 hour\"");
  g.meta.annotations.set(sla_waiting_time_key, "0s");
  errors = validate(g);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].detail.find("above zero"), std::string::npos) << errors[0].detail;
  g.meta.annotations.set(sla_waiting_time_key, "45m");
  EXPECT_TRUE(validate(g).empty());
}

TEST(SlaWaitingTime, OrdersAfterPriorityEarliestDeadlineFirst) {
  // Created at 0, 10, 20 and 30 s; deadlines 10 + 60 = 70 s and 20 + 5 = 25 s.
  auto old_plain = waiting("old-plain", 0s);
  auto slow = waiting("slow", 10s, "1m");
  auto urgent = waiting("urgent", 20s, "5s");
  auto young_plain = waiting("young-plain", 30s);
  auto important = waiting("important", 40s);
  important.priority = 10;
  EXPECT_TRUE(gang_before(urgent, slow)) << "the earlier deadline, though younger";
  EXPECT_TRUE(gang_before(slow, old_plain)) << "a deadline goes before none";
  EXPECT_TRUE(gang_before(old_plain, young_plain)) << "without deadlines, age";
  EXPECT_TRUE(gang_before(important, urgent)) << "priority first";
  std::vector<const pod_group*> gangs = {&old_plain, &slow, &urgent, &young_plain, &important};
  std::sort(gangs.begin(), gangs.end(),
            [](const pod_group* a, const pod_group* b) { return gang_before(*a, *b); });
  std::vector<std::string> names;
  for (const auto* g : gangs)
    names.push_back(g->meta.name.str());
  EXPECT_EQ(names, (std::vector<std::string>{"important", "urgent", "slow", "old-plain",
                                             "young-plain"}));
}

TEST(SlaWaitingTime, TheGateAdmitsAGangThatWaitedPastIt) {
  // A full cluster (10 cpu used of 10, overcommit room 2) and a queue at its capability: a gang
  // asking 4 cpu is refused on both counts until its sla-waiting-time has passed.
  auto g = waiting("late", 100s, "1m");
  g.min_resources = res("cpu", "4");
  queue_usage capped{"q1", queue_state::open, {}, res("cpu", "6"), {}};
  capped.capability.set("cpu", 6000);
  for (auto [now, admitted] : {std::pair{timestamp{} + 159s, false},
                               std::pair{timestamp{} + 160s, true}}) {
    enqueue_gate gate({}, res("cpu", "10"), res("cpu", "10"), {}, now);
    auto decision = gate.check(g, capped);
    EXPECT_EQ(decision.admitted(), admitted) << decision.reason;
    EXPECT_EQ(decision.waited_past_sla, admitted);
    auto uncapped = capped;
    uncapped.capability = {};
    EXPECT_EQ(gate.check(g, uncapped).admitted(), admitted) << "the overcommit too";
  }
  // A closed queue admits nothing, deadline or not.
  enqueue_gate gate({}, res("cpu", "10"), {}, {}, timestamp{} + 1000s);
  auto closed = capped;
  closed.state = queue_state::closed;
  EXPECT_EQ(gate.check(g, closed).code, admission_code::queue_not_open);
  // What it was admitted with counts against later decisions, as any admission does.
  auto open = capped;
  open.capability = {};
  ASSERT_TRUE(gate.admit(g, open).admitted());
  EXPECT_EQ(open.inqueue, res("cpu", "4"));
}

} // namespace
} // namespace phalanx::scheduler
