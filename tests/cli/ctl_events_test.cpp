// phalanxctl get events, without a server (issue 30): the resource words of Events in both
// versions, --field-selector, the usage errors, the paths and kubectl's event columns.

#include "api/ctl/command_line.hpp"
#include "api/ctl/paths.hpp"
#include "api/ctl/printers.hpp"

#include "api/events.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace phalanx::api::ctl {
namespace {

namespace json = boost::json;

result<invocation> parse(std::vector<std::string> args) {
  return parse_command_line(
      args, [](const std::string&) -> std::optional<std::string> { return std::nullopt; });
}

TEST(CtlEvents, ResolvesTheWordsOfEventsInBothVersions) {
  struct row {
    const char* word;
    std::optional<event_version> version;
  };
  for (auto r : {row{"events", event_version::core_v1}, row{"event", event_version::core_v1},
                 row{"ev", event_version::core_v1}, row{"Event", event_version::core_v1},
                 row{"EV", event_version::core_v1},
                 row{"events.events.k8s.io", event_version::events_v1},
                 row{"event.events.k8s.io", event_version::events_v1},
                 row{"pods", std::nullopt}, row{"events.k8s.io", std::nullopt},
                 row{"eventss", std::nullopt}})
    EXPECT_EQ(resolve_events(r.word), r.version) << r.word;
  // Events are no kind: the kinds' words do not name them.
  EXPECT_FALSE(resolve_resource("events"));
}

TEST(CtlEvents, ParsesGetEventsWithItsFlags) {
  auto inv = parse({"get", "ev", "-A", "--field-selector", "type=Warning", "-o", "wide", "-w"});
  ASSERT_TRUE(inv.ok()) << inv.error().message();
  EXPECT_EQ(inv->events, event_version::core_v1);
  EXPECT_FALSE(inv->kind);
  EXPECT_TRUE(inv->kinds.empty());
  EXPECT_TRUE(inv->all_namespaces);
  EXPECT_EQ(inv->field_selector, "type=Warning");
  EXPECT_EQ(inv->output, output_format::wide);
  EXPECT_TRUE(inv->watch);

  auto named = parse({"get", "events.events.k8s.io", "a.1", "b.2", "-n", "team"});
  ASSERT_TRUE(named.ok()) << named.error().message();
  EXPECT_EQ(named->events, event_version::events_v1);
  EXPECT_EQ(named->names, (std::vector<std::string>{"a.1", "b.2"}));
  EXPECT_EQ(named->namespace_name, "team");

  auto slashed = parse({"get", "ev/a.1", "event/b.2"});
  ASSERT_TRUE(slashed.ok()) << slashed.error().message();
  EXPECT_EQ(slashed->events, event_version::core_v1);
  EXPECT_EQ(slashed->names, (std::vector<std::string>{"a.1", "b.2"}));

  // --field-selector works on the kinds too (the server checks the fields).
  auto pods = parse({"get", "pods", "--field-selector=status.phase=Running"});
  ASSERT_TRUE(pods.ok()) << pods.error().message();
  EXPECT_EQ(pods->field_selector, "status.phase=Running");
  EXPECT_FALSE(pods->events);
}

TEST(CtlEvents, UsageErrorsSayWhyEventsCannotBeUsedSo) {
  struct row {
    std::vector<std::string> args;
    std::string message;
  };
  for (const auto& r : std::vector<row>{
         {{"describe", "events"}, "events are read-only and listed by get only"},
         {{"delete", "ev", "a.1"}, "events are read-only and listed by get only"},
         {{"delete", "ev/a.1"}, "events are read-only and listed by get only"},
         {{"get", "pods,events"}, "events are listed on their own, not with other resource types"},
         {{"get", "ev/a.1", "pod/x"}, "must name the same kind of resource"},
         {{"get", "pod/x", "ev/a.1"}, "must name the same kind of resource"},
         {{"get", "ev/a.1", "events.events.k8s.io/b"}, "must name the same kind of resource"},
         {{"get", "ev", "a.1", "--field-selector", "type=Normal"},
          "names cannot be given together with a field selector (--field-selector)"},
         {{"get", "ev", "a/b"}, "\"a/b\" is not a name"},
         {{"describe", "pods", "--field-selector", "x=y"},
          "flag --field-selector does not apply to \"describe\""},
         {{"get", "deployments"}, "events (ev)"},
       }) {
    auto inv = parse(r.args);
    ASSERT_FALSE(inv.ok()) << r.args[0] << " " << r.args[1];
    EXPECT_NE(inv.error().message().find(r.message), std::string::npos)
        << inv.error().message();
  }
}

TEST(CtlEvents, PathsAndNamesOfBothVersions) {
  EXPECT_EQ(events_collection_path(event_version::core_v1, ""), "/api/v1/events");
  EXPECT_EQ(events_collection_path(event_version::core_v1, "team"),
            "/api/v1/namespaces/team/events");
  EXPECT_EQ(events_collection_path(event_version::events_v1, ""),
            "/apis/events.k8s.io/v1/events");
  EXPECT_EQ(events_item_path(event_version::events_v1, "team", "a.1"),
            "/apis/events.k8s.io/v1/namespaces/team/events/a.1");
  EXPECT_EQ(events_qualified_name(event_version::core_v1, "a.1"), "event/a.1");
  EXPECT_EQ(events_qualified_name(event_version::events_v1, "a.1"), "event.events.k8s.io/a.1");
}

scheduler::timestamp at(int64_t seconds) {
  return scheduler::timestamp{std::chrono::seconds(seconds)};
}

json::value pod_event(event_version version) {
  object_event e;
  e.kind = resource_kind::pod;
  e.namespace_name = "team";
  e.name = "web-0";
  e.event = {"Warning", "FailedScheduling", "0/3 nodes are available", 4, at(1700000000),
             at(1700000090)};
  return encode_event(e, 7, version);
}

// kubectl prints the server's Table: its column titles upper-cased, the priority-1 ones with
// -o wide only, NAMESPACE first with -A. phalanxctl prints the same cells from the Events.
TEST(CtlEvents, TablesHaveKubectlsColumnsFromTheServersCells) {
  table_options o;
  o.now = at(1700000100);
  EXPECT_EQ(event_table_header(o),
            (std::vector<std::string>{"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"}));
  for (int v = 0; v <= int(event_version_last); ++v) {
    auto event = pod_event(event_version(v));
    EXPECT_EQ(event_table_row(event, o),
              (std::vector<std::string>{"10s", "Warning", "FailedScheduling", "pod/web-0",
                                        "0/3 nodes are available"}))
        << v;
  }
  o.wide = true;
  o.with_namespace = true;
  o.with_event = true;
  EXPECT_EQ(event_table_header(o),
            (std::vector<std::string>{"EVENT", "NAMESPACE", "LAST SEEN", "TYPE", "REASON",
                                      "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST SEEN",
                                      "COUNT", "NAME"}));
  auto event = pod_event(event_version::events_v1);
  auto row = event_table_row(event, o, "MODIFIED");
  std::string name(event.at("metadata").at("name").as_string());
  EXPECT_EQ(row, (std::vector<std::string>{"MODIFIED", "team", "10s", "Warning",
                                           "FailedScheduling", "pod/web-0", "",
                                           "phalanx, phalanxd", "0/3 nodes are available",
                                           "100s", "4", name}));
  o = {};
  o.show_labels = true;
  EXPECT_EQ(event_table_header(o).back(), "LABELS");
  EXPECT_EQ(event_table_row(event, o).back(), "<none>");
}

} // namespace
} // namespace phalanx::api::ctl
