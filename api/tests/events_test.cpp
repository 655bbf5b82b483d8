// Events as the API serves them (issue 30), in core/v1 and events.k8s.io/v1: the Event's JSON,
// kube-apiserver's field selectors for events, the Table kubectl prints, the routes over the
// fake service, discovery and the OpenAPI v3 schemas `kubectl explain` reads.

#include "api/events.hpp"
#include "api/handler.hpp"
#include "api/tests/server_fixture.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace phalanx::api::test {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

json::value body_json(const response& r) {
  return json::parse(r.body);
}

scheduler::timestamp at(int64_t seconds) {
  return scheduler::timestamp{std::chrono::seconds(seconds)};
}

object_event pod_event() {
  object_event e;
  e.kind = resource_kind::pod;
  e.namespace_name = "team";
  e.name = "web-0";
  e.uid = "0b4d6c1e-0000-4000-8000-000000000001";
  e.event = {"Warning", "FailedScheduling", "0/3 nodes are available: 3 Insufficient cpu.", 4,
             at(1700000000), at(1700000090)};
  return e;
}

object_event node_event() {
  object_event e;
  e.kind = resource_kind::node;
  e.name = "cpu-0";
  e.uid = "0b4d6c1e-0000-4000-8000-000000000002";
  e.event = {"Normal", "NodeNotSchedulable", "Node cpu-0 status is now: NodeNotSchedulable", 1,
             at(1700000010), at(1700000010)};
  return e;
}

TEST(EventEncoding, IsACoreV1EventAsKubeApiserverReturnsIt) {
  auto v = encode_event(pod_event(), 42);
  json::value want = json::parse(R"({
    "kind": "Event", "apiVersion": "v1",
    "metadata": {"name": "NAME", "namespace": "team", "uid": "UID", "resourceVersion": "42",
                 "creationTimestamp": "2023-11-14T22:13:20Z"},
    "involvedObject": {"kind": "Pod", "namespace": "team", "name": "web-0",
                       "uid": "0b4d6c1e-0000-4000-8000-000000000001", "apiVersion": "v1"},
    "reason": "FailedScheduling", "message": "0/3 nodes are available: 3 Insufficient cpu.",
    "source": {"component": "phalanx"},
    "firstTimestamp": "2023-11-14T22:13:20Z", "lastTimestamp": "2023-11-14T22:14:50Z",
    "count": 4, "type": "Warning", "eventTime": null,
    "reportingComponent": "phalanx", "reportingInstance": "phalanxd"})");
  auto& meta = want.as_object()["metadata"].as_object();
  meta["name"] = v.at("metadata").at("name");
  meta["uid"] = v.at("metadata").at("uid");
  EXPECT_EQ(v, want) << v;
  // "<object name>.<16 hex digits>", and a uid shaped as one.
  std::string name(v.at("metadata").at("name").as_string());
  ASSERT_EQ(name.size(), std::string("web-0.").size() + 16) << name;
  EXPECT_EQ(name.substr(0, 6), "web-0.");
  EXPECT_EQ(name.find_first_not_of("0123456789abcdef", 6), std::string::npos) << name;
  EXPECT_EQ(v.at("metadata").at("uid").as_string().size(), 36u);
}

TEST(EventEncoding, EveryVersionHasAString) {
  EXPECT_EQ(to_string(event_version::core_v1), "v1");
  EXPECT_EQ(to_string(event_version::events_v1), "events.k8s.io/v1");
  for (int v = 0; v <= int(event_version_last); ++v)
    EXPECT_FALSE(to_string(event_version(v)).empty()) << v;
}

// As kube-apiserver 1.37 answers /apis/events.k8s.io/v1 for a core/v1 Event (checked against
// the real one): regarding, note, the deprecated* fields, a null eventTime, and no
// involvedObject, message, source, count or first/lastTimestamp.
TEST(EventEncoding, IsAnEventsV1EventAsKubeApiserverConvertsIt) {
  auto v = encode_event(pod_event(), 42, event_version::events_v1);
  json::value want = json::parse(R"({
    "kind": "Event", "apiVersion": "events.k8s.io/v1",
    "metadata": {"name": "NAME", "namespace": "team", "uid": "UID", "resourceVersion": "42",
                 "creationTimestamp": "2023-11-14T22:13:20Z"},
    "eventTime": null,
    "reportingController": "phalanx", "reportingInstance": "phalanxd",
    "reason": "FailedScheduling",
    "regarding": {"kind": "Pod", "namespace": "team", "name": "web-0",
                  "uid": "0b4d6c1e-0000-4000-8000-000000000001", "apiVersion": "v1"},
    "note": "0/3 nodes are available: 3 Insufficient cpu.",
    "type": "Warning",
    "deprecatedSource": {"component": "phalanx"},
    "deprecatedFirstTimestamp": "2023-11-14T22:13:20Z",
    "deprecatedLastTimestamp": "2023-11-14T22:14:50Z",
    "deprecatedCount": 4})");
  auto core = encode_event(pod_event(), 42);
  auto& meta = want.as_object()["metadata"].as_object();
  // The same event: the same name and uid in both versions.
  meta["name"] = core.at("metadata").at("name");
  meta["uid"] = core.at("metadata").at("uid");
  EXPECT_EQ(v, want) << v;
  // In kube-apiserver's order (Go's struct order), which `kubectl get -o json` keeps.
  std::vector<std::string> keys;
  for (const auto& kv : v.as_object())
    keys.emplace_back(kv.key());
  EXPECT_EQ(keys, (std::vector<std::string>{
                    "kind", "apiVersion", "metadata", "eventTime", "reportingController",
                    "reportingInstance", "reason", "regarding", "note", "type",
                    "deprecatedSource", "deprecatedFirstTimestamp", "deprecatedLastTimestamp",
                    "deprecatedCount"}));
  auto list = encode_event_list({pod_event()}, 42, event_version::events_v1);
  EXPECT_EQ(list.at("kind"), "EventList");
  EXPECT_EQ(list.at("apiVersion"), "events.k8s.io/v1");
  EXPECT_EQ(list.at("items").at(0).at("note"), "0/3 nodes are available: 3 Insufficient cpu.");
}

TEST(EventEncoding, NamesAreStableAcrossCountBumpsAndDifferPerEvent) {
  auto e = pod_event();
  auto bumped = e;
  bumped.event.count = 9;
  bumped.event.last_time = at(1700000500);
  EXPECT_EQ(event_name(e), event_name(bumped));
  // Other words are another event, as Kubernetes' recorder makes them (it counts repeats only).
  auto reworded = e;
  reworded.event.message = "0/4 nodes are available";
  EXPECT_NE(event_name(e), event_name(reworded));
  auto other = e;
  other.event.first_time = at(1700000001);
  EXPECT_NE(event_name(e), event_name(other));
  auto other_reason = e;
  other_reason.event.reason = "Scheduled";
  EXPECT_NE(event_name(e), event_name(other_reason));
}

TEST(EventEncoding, ClusterScopedObjectsEventsLiveInDefault) {
  auto v = encode_event(node_event(), 7);
  EXPECT_EQ(v.at("metadata").at("namespace"), "default");
  // kubectl describe node asks for involvedObject.namespace= (empty): the reference has none.
  EXPECT_EQ(v.at("involvedObject").as_object().if_contains("namespace"), nullptr) << v;
  EXPECT_EQ(v.at("involvedObject").at("apiVersion"), "v1");
  EXPECT_EQ(event_namespace(node_event()), "default");
}

TEST(EventEncoding, InvolvedObjectApiVersionPerKind) {
  struct row {
    resource_kind kind;
    std::string_view kind_name;
    std::string_view api_version;
  };
  for (const auto& r : std::vector<row>{
         {resource_kind::pod, "Pod", "v1"},
         {resource_kind::node, "Node", "v1"},
         {resource_kind::pod_group, "PodGroup", "scheduling.volcano.sh/v1beta1"},
         {resource_kind::queue, "Queue", "scheduling.volcano.sh/v1beta1"},
         {resource_kind::job, "Job", "batch.volcano.sh/v1alpha1"}}) {
    auto e = pod_event();
    e.kind = r.kind;
    auto v = encode_event(e, 1);
    EXPECT_EQ(v.at("involvedObject").at("kind").as_string(), r.kind_name);
    EXPECT_EQ(v.at("involvedObject").at("apiVersion").as_string(), r.api_version) << r.kind_name;
  }
}

TEST(EventEncoding, ListIsAnEventList) {
  auto v = encode_event_list({pod_event(), node_event()}, 42);
  EXPECT_EQ(v.at("kind"), "EventList");
  EXPECT_EQ(v.at("apiVersion"), "v1");
  EXPECT_EQ(v.at("metadata").at("resourceVersion"), "42");
  ASSERT_EQ(v.at("items").as_array().size(), 2u);
  EXPECT_EQ(v.at("items").at(1).at("reason"), "NodeNotSchedulable");
}

// kube-apiserver's field selectors for events: what kubectl describe sends, and the operators.
TEST(EventFieldSelector, SelectsAsKubeApiserverDoes) {
  const auto e = pod_event();
  const auto n = node_event();
  struct row {
    std::string selector;
    bool pod;
    bool node;
  };
  const std::vector<row> table = {
    {"", true, true},
    {"involvedObject.name=web-0,involvedObject.namespace=team,involvedObject.kind=Pod,"
     "involvedObject.uid=0b4d6c1e-0000-4000-8000-000000000001",
     true, false},
    {"involvedObject.name=web-0,involvedObject.uid=other", false, false},
    // kubectl describe node: the namespace is asked empty.
    {"involvedObject.name=cpu-0,involvedObject.namespace=,involvedObject.kind=Node", false, true},
    {"involvedObject.kind==Pod", true, false},
    {"involvedObject.kind!=Pod", false, true},
    {"type=Warning", true, false},
    {"type!=Warning", false, true},
    {"reason=FailedScheduling", true, false},
    {"involvedObject.apiVersion=v1", true, true},
    {"source=phalanx,reportingComponent=phalanx", true, true},
    {"metadata.namespace=default", false, true},
    {"metadata.namespace=team", true, false},
    {"metadata.name=" + event_name(e), true, false},
    {"involvedObject.fieldPath=", true, true},
    {"involvedObject.resourceVersion!=", false, false},
  };
  for (const auto& r : table) {
    auto terms = parse_event_field_selector(r.selector);
    ASSERT_TRUE(terms.ok()) << r.selector << ": " << terms.error().message();
    EXPECT_EQ(event_fields_match(*terms, e), r.pod) << r.selector;
    EXPECT_EQ(event_fields_match(*terms, n), r.node) << r.selector;
  }
}

TEST(EventFieldSelector, EscapesInValues) {
  auto e = pod_event();
  e.event.reason = "a,b=c\\d";
  auto terms = parse_event_field_selector(R"(reason=a\,b\=c\\d)");
  ASSERT_TRUE(terms.ok()) << terms.error().message();
  EXPECT_TRUE(event_fields_match(*terms, e));
}

TEST(EventFieldSelector, RefusesAsKubeApiserverWordsIt) {
  struct row {
    std::string selector;
    std::string message;
  };
  const std::vector<row> table = {
    {"spec.nodeName=x", "field label not supported: spec.nodeName"},
    {"involvedObject.name=x,status.phase=Pending", "field label not supported: status.phase"},
    {"metadata.uid=x", "field label not supported: metadata.uid"},
    {"reason", "invalid selector: 'reason'; can't understand 'reason'"},
    {"reason=a=b", "invalid field selector: unescaped character in value: ="},
    {R"(reason=a\x)", R"(invalid field selector: invalid escape sequence: \x)"},
  };
  for (const auto& r : table) {
    auto terms = parse_event_field_selector(r.selector);
    ASSERT_FALSE(terms.ok()) << r.selector;
    EXPECT_EQ(terms.error().code(), errc::invalid_argument);
    EXPECT_EQ(terms.error().message(), r.message) << r.selector;
  }
}

// events.k8s.io/v1's field selectors: regarding.* and reportingController read the core/v1
// fields kube-apiserver converts them to.
TEST(EventFieldSelector, EventsV1SelectsByRegarding) {
  const auto e = pod_event();
  const auto n = node_event();
  struct row {
    std::string selector;
    bool pod;
    bool node;
  };
  const std::vector<row> table = {
    {"", true, true},
    {"regarding.name=web-0,regarding.namespace=team,regarding.kind=Pod,"
     "regarding.uid=0b4d6c1e-0000-4000-8000-000000000001,regarding.apiVersion=v1",
     true, false},
    {"regarding.name=cpu-0,regarding.namespace=", false, true},
    {"regarding.kind!=Pod", false, true},
    {"regarding.fieldPath=,regarding.resourceVersion=", true, true},
    {"reportingController=phalanx", true, true},
    {"reportingController!=phalanx", false, false},
    {"type==Warning,reason=FailedScheduling", true, false},
    {"metadata.namespace=default", false, true},
    {"metadata.name=" + event_name(n), false, true},
  };
  for (const auto& r : table) {
    auto terms = parse_event_field_selector(r.selector, event_version::events_v1);
    ASSERT_TRUE(terms.ok()) << r.selector << ": " << terms.error().message();
    EXPECT_EQ(event_fields_match(*terms, e), r.pod) << r.selector;
    EXPECT_EQ(event_fields_match(*terms, n), r.node) << r.selector;
  }
}

// Each version refuses the other's names, in kube-apiserver 1.37's words (checked against it);
// events.k8s.io/v1 has no `source`.
TEST(EventFieldSelector, EachVersionRefusesTheOthersNames) {
  struct row {
    event_version version;
    std::string selector;
    std::string message;
  };
  const std::vector<row> table = {
    {event_version::events_v1, "involvedObject.name=x", "field label not supported: "
                                                       "involvedObject.name"},
    {event_version::events_v1, "reportingComponent=phalanx", "field label not supported: "
                                                            "reportingComponent"},
    {event_version::events_v1, "source=phalanx", "field label not supported: source"},
    {event_version::events_v1, "note=x", "field label not supported: note"},
    {event_version::events_v1, "regarding.name=x,bogus=y", "field label not supported: bogus"},
    {event_version::events_v1, "regarding.name", "invalid selector: 'regarding.name'; can't "
                                                 "understand 'regarding.name'"},
    {event_version::core_v1, "regarding.name=x", "field label not supported: regarding.name"},
    {event_version::core_v1, "reportingController=phalanx", "field label not supported: "
                                                           "reportingController"},
  };
  for (const auto& r : table) {
    auto terms = parse_event_field_selector(r.selector, r.version);
    ASSERT_FALSE(terms.ok()) << r.selector;
    EXPECT_EQ(terms.error().message(), r.message) << r.selector;
  }
  // Every selectable field of each version parses.
  for (int v = 0; v <= int(event_version_last); ++v)
    for (auto field : event_selectable_fields(event_version(v)))
      EXPECT_TRUE(parse_event_field_selector(std::string(field) + "=x", event_version(v)).ok())
          << field;
}

TEST(DiffEvents, NamesNewEventsCountBumpsAndEventsThatLeft) {
  EXPECT_TRUE(diff_events({pod_event()}, {pod_event()}).empty());  // Nothing changed.
  auto bumped = pod_event();
  bumped.event.count = 5;
  bumped.event.last_time = at(1700000200);
  auto out = diff_events({pod_event()}, {bumped, node_event()});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].first, watch_event::type::modified);
  EXPECT_EQ(out[0].second.event.count, 5);
  EXPECT_EQ(out[1].first, watch_event::type::added);
  EXPECT_EQ(out[1].second.event.reason, "NodeNotSchedulable");
  // An event that leaves is DELETED, as last seen.
  out = diff_events({bumped, node_event()}, {bumped});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, watch_event::type::deleted);
  EXPECT_EQ(out[0].second.event.reason, "NodeNotSchedulable");
  // New words (a pending pod's reason changed) are a new event, and the old one leaves.
  auto reworded = bumped;
  reworded.event.message = "another reason";
  out = diff_events({bumped}, {reworded});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].first, watch_event::type::added);
  EXPECT_EQ(out[1].first, watch_event::type::deleted);
  EXPECT_EQ(out[1].second.event.message, bumped.event.message);
  // Changes first, in the new events' order, then what left.
  auto bumped_again = bumped;
  bumped_again.event.count = 6;
  out = diff_events({node_event(), bumped}, {bumped_again});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].first, watch_event::type::modified);
  EXPECT_EQ(out[1].first, watch_event::type::deleted);
}

TEST(EventJournal, ReplaysEveryChangeAfterAVersionItKept) {
  event_journal journal{100, 1000};
  journal.add(watch_event::type::added, pod_event());  // Not keeping: not recorded.
  EXPECT_EQ(journal.version(), 1000u);
  journal.start();
  const uint64_t listed = journal.version();  // A list's version, before the changes below.
  journal.add(watch_event::type::added, node_event());
  auto bumped = pod_event();
  bumped.event.count = 2;
  journal.add_diff({pod_event()}, {bumped});
  auto out = journal.since(listed);
  ASSERT_TRUE(out.ok()) << out.error().message();
  ASSERT_EQ(out->items.size(), 2u);
  EXPECT_EQ(out->items[0].type, watch_event::type::added);
  EXPECT_EQ(out->items[0].version, listed + 1);
  EXPECT_EQ(out->items[1].type, watch_event::type::modified);
  EXPECT_EQ(out->items[1].version, listed + 2);
  EXPECT_EQ(out->resource_version, listed + 2);
  // From the middle, and from the newest: only what came after.
  out = journal.since(listed + 1);
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->items.size(), 1u);
  EXPECT_EQ(out->items[0].event.event.count, 2);
  out = journal.since(listed + 2);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->items.empty());
  // Before the journal kept changes, or a version it never gave (another run's): too old.
  for (uint64_t v : {listed - 1, listed + 3}) {
    auto old = journal.since(v);
    ASSERT_FALSE(old.ok()) << v;
    EXPECT_EQ(old.error().code(), errc::failed_precondition);
    EXPECT_NE(old.error().message().find("too old resource version"), std::string::npos);
  }
}

TEST(EventJournal, AWatchThatFellBehindItsCapacityOrAStopIsTooOld) {
  event_journal journal{2, 1};
  journal.start();
  for (int i = 0; i < 3; ++i)
    journal.add(watch_event::type::added, pod_event());
  EXPECT_FALSE(journal.since(1).ok());  // The first change was dropped for the capacity.
  auto out = journal.since(2);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->items.size(), 2u);
  // Changes made while not keeping are unknown, so every version given before a stop is too
  // old after the next start, even one with no change recorded after it.
  const uint64_t last = journal.version();
  journal.stop();
  EXPECT_FALSE(journal.since(last).ok());
  journal.start();
  EXPECT_FALSE(journal.since(last).ok());
  out = journal.since(journal.version());
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->items.empty());
}

TEST(EventTable, HasKubeApiserversColumnsAndCells) {
  table_options to;
  to.now = at(1700000100);
  auto v = encode_event_table({pod_event()}, 42, to);
  EXPECT_EQ(v.at("kind"), "Table");
  std::vector<std::pair<std::string, int64_t>> columns;
  for (const auto& c : v.at("columnDefinitions").as_array())
    columns.emplace_back(std::string(c.at("name").as_string()), c.at("priority").as_int64());
  const std::vector<std::pair<std::string, int64_t>> want = {
    {"Last Seen", 0}, {"Type", 0},    {"Reason", 0}, {"Object", 0},     {"Subobject", 1},
    {"Source", 1},    {"Message", 0}, {"First Seen", 1}, {"Count", 1}, {"Name", 1}};
  EXPECT_EQ(columns, want);
  const auto& cells = v.at("rows").at(0).at("cells").as_array();
  ASSERT_EQ(cells.size(), 10u);
  EXPECT_EQ(cells[0], "10s");
  EXPECT_EQ(cells[1], "Warning");
  EXPECT_EQ(cells[2], "FailedScheduling");
  EXPECT_EQ(cells[3], "pod/web-0");
  EXPECT_EQ(cells[4], "");
  EXPECT_EQ(cells[5], "phalanx, phalanxd");  // The component and the instance.
  EXPECT_EQ(cells[6], "0/3 nodes are available: 3 Insufficient cpu.");
  EXPECT_EQ(cells[7], "100s");
  EXPECT_EQ(cells[8], 4);
  EXPECT_EQ(cells[9].as_string(), event_name(pod_event()));
  // The row's object names the event's namespace: kubectl get events -A's NAMESPACE column.
  EXPECT_EQ(v.at("rows").at(0).at("object").at("metadata").at("namespace"), "team");
}

// The cells come from the Event's JSON, so that phalanxctl prints what the server's Table
// says: both versions give the same row.
TEST(EventTable, CellsAreTheSameFromEitherVersion) {
  const auto now = at(1700000100);
  auto core = event_table_cells(encode_event(pod_event(), 42), now);
  auto v1 = event_table_cells(encode_event(pod_event(), 42, event_version::events_v1), now);
  EXPECT_EQ(core, v1);
  ASSERT_EQ(core.size(), event_table_columns().size());
  EXPECT_EQ(v1[3], "pod/web-0");
  EXPECT_EQ(v1[6], "0/3 nodes are available: 3 Insufficient cpu.");
  EXPECT_EQ(v1[8], 4);
  // kube-apiserver's printer: no lastTimestamp shows the first; no count is 1; no time at all
  // is <unknown>.
  auto bare = encode_event(pod_event(), 42).as_object();
  bare.erase("lastTimestamp");
  bare.erase("count");
  auto cells = event_table_cells(bare, now);
  EXPECT_EQ(cells[0], "100s");
  EXPECT_EQ(cells[8], 1);
  bare.erase("firstTimestamp");
  cells = event_table_cells(bare, now);
  EXPECT_EQ(cells[0], "<unknown>");
  EXPECT_EQ(cells[7], "<unknown>");
}

TEST(EventTable, RowsCarryTheEventOfTheVersionAsked) {
  table_options to;
  to.include = include_object::object;
  auto v = encode_event_table({pod_event()}, 42, to, event_version::events_v1);
  EXPECT_EQ(v.at("rows").at(0).at("object").at("apiVersion"), "events.k8s.io/v1");
  EXPECT_EQ(v.at("rows").at(0).at("object").at("regarding").at("name"), "web-0");
}

TEST(EventsRoute, MatchesBothVersionsPaths) {
  auto route = [](std::vector<std::string> seg) { return events_route(seg); };
  auto all = route({"apis", "events.k8s.io", "v1", "events"});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->version, event_version::events_v1);
  EXPECT_EQ(all->namespace_name, "");
  auto one = route({"apis", "events.k8s.io", "v1", "namespaces", "team", "events", "x.1"});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->namespace_name, "team");
  EXPECT_EQ(one->name, "x.1");
  auto core = route({"api", "v1", "namespaces", "team", "events"});
  ASSERT_TRUE(core);
  EXPECT_EQ(core->version, event_version::core_v1);
  EXPECT_FALSE(core->name);
  EXPECT_FALSE(route({"apis", "events.k8s.io", "v1beta1", "events"}));
  EXPECT_FALSE(route({"apis", "events.k8s.io", "v1", "pods"}));
  EXPECT_FALSE(route({"api", "v1", "namespaces", "team", "pods"}));
}

// ---- The routes, over the fake service.

class EventsServer : public ::testing::Test {
 protected:
  void SetUp() override {
    s_ = start_server();
    ASSERT_TRUE(s_.srv);
    scheduler::event warning{"Warning", "Unschedulable", "3/4 tasks in gang unschedulable", 2,
                             at(1700000000), at(1700000060)};
    s_.svc->add_event(resource_kind::pod_group, "default", "resnet-gang", warning);
    scheduler::event cordoned{"Normal", "NodeNotSchedulable", "cordoned", 1, at(1700000005),
                              at(1700000005)};
    s_.svc->add_event(resource_kind::node, "", "cpu-node-1", cordoned);
  }
  running_server s_;
};

TEST_F(EventsServer, ListsEveryNamespaceAndOne) {
  auto all = get(s_.port(), "/api/v1/events");
  ASSERT_EQ(all.status, 200) << all.body;
  auto v = body_json(all);
  EXPECT_EQ(v.at("kind"), "EventList");
  ASSERT_EQ(v.at("items").as_array().size(), 2u) << v;
  auto in_default = body_json(get(s_.port(), "/api/v1/namespaces/default/events"));
  EXPECT_EQ(in_default.at("items").as_array().size(), 2u);  // A node's events live in default.
  auto in_team = body_json(get(s_.port(), "/api/v1/namespaces/team/events"));
  EXPECT_EQ(in_team.at("items").as_array().size(), 0u);
  // The uid of the object the event is about, so that kubectl describe's selector finds it.
  EXPECT_FALSE(v.at("items").at(0).at("involvedObject").at("uid").as_string().empty()) << v;
}

TEST_F(EventsServer, SelectsByFields) {
  auto r = get(s_.port(), "/api/v1/namespaces/default/events?fieldSelector="
                          "involvedObject.name%3Dresnet-gang%2CinvolvedObject.kind%3DPodGroup");
  ASSERT_EQ(r.status, 200) << r.body;
  auto v = body_json(r);
  ASSERT_EQ(v.at("items").as_array().size(), 1u) << v;
  EXPECT_EQ(v.at("items").at(0).at("reason"), "Unschedulable");
  EXPECT_EQ(v.at("items").at(0).at("involvedObject").at("apiVersion"),
            "scheduling.volcano.sh/v1beta1");
}

TEST_F(EventsServer, RefusesAnUnsupportedFieldWith400) {
  auto r = get(s_.port(), "/api/v1/events?fieldSelector=spec.nodeName%3Dx");
  ASSERT_EQ(r.status, 400) << r.body;
  auto v = body_json(r);
  EXPECT_EQ(v.at("reason"), "BadRequest");
  EXPECT_EQ(v.at("message"), "field label not supported: spec.nodeName");
}

TEST_F(EventsServer, GetsOneByNameAndAnswers404ForAnother) {
  auto list = body_json(get(s_.port(), "/api/v1/namespaces/default/events"));
  std::string name(list.at("items").at(0).at("metadata").at("name").as_string());
  auto one = get(s_.port(), "/api/v1/namespaces/default/events/" + name);
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(body_json(one).at("kind"), "Event");
  auto missing = get(s_.port(), "/api/v1/namespaces/default/events/nope.0000000000000000");
  ASSERT_EQ(missing.status, 404) << missing.body;
  EXPECT_EQ(body_json(missing).at("message"), "events \"nope.0000000000000000\" not found");
}

TEST_F(EventsServer, ServesTables) {
  auto r = get(s_.port(), "/api/v1/events", "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_EQ(r.status, 200) << r.body;
  auto v = body_json(r);
  EXPECT_EQ(v.at("kind"), "Table");
  EXPECT_EQ(v.at("rows").as_array().size(), 2u);
}

TEST_F(EventsServer, IsReadOnly) {
  for (auto method : {"POST", "PUT", "PATCH", "DELETE"}) {
    request req;
    req.method = method;
    req.target = "/api/v1/namespaces/default/events";
    req.body = R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"x"}})";
    req.content_type = "application/json";
    auto r = call(s_.port(), req);
    EXPECT_EQ(r.status, 405) << method << ": " << r.body;
    EXPECT_EQ(body_json(r).at("reason"), "MethodNotAllowed") << method;
  }
}

TEST_F(EventsServer, AWatchFromAListsVersionStreamsEveryChangeAfterIt) {
  // kubectl get -w: a list, then a watch from its version. What changes in between (here, on
  // purpose, before the watch is even asked for) comes on the watch, once.
  auto list = body_json(get(s_.port(), "/api/v1/namespaces/default/events"));
  std::string listed(list.at("metadata").at("resourceVersion").as_string());
  scheduler::event again{"Warning", "Unschedulable", "3/4 tasks in gang unschedulable", 3,
                         at(1700000000), at(1700000120)};
  s_.svc->add_event(resource_kind::pod_group, "default", "resnet-gang", again);
  request r;
  r.target = "/api/v1/namespaces/default/events?watch=1&resourceVersion=" + listed +
             "&fieldSelector=involvedObject.kind%3DPodGroup";
  watch_stream w{s_.port(), r};
  ASSERT_EQ(w.status(), 200);
  scheduler::event other{"Normal", "NodeSchedulable", "uncordoned", 1, at(1700000200),
                         at(1700000200)};
  s_.svc->add_event(resource_kind::node, "", "cpu-node-1", other);  // Not a PodGroup's.
  scheduler::event fresh{"Normal", "Scheduled", "gang scheduled", 1, at(1700000300),
                         at(1700000300)};
  s_.svc->add_event(resource_kind::pod_group, "default", "resnet-gang", fresh);
  s_.svc->remove_events(resource_kind::pod_group, "default", "resnet-gang");
  std::vector<std::pair<std::string, std::string>> seen;
  uint64_t last_version = std::stoull(listed);
  while (seen.size() < 4) {
    auto line = w.next_line(5s);
    ASSERT_TRUE(line) << "after " << seen.size() << " lines";
    auto e = json::parse(*line);
    ASSERT_EQ(e.at("object").at("kind"), "Event") << e;
    EXPECT_EQ(e.at("object").at("involvedObject").at("kind"), "PodGroup");
    // Each change at a version of its own, from which a watch could resume.
    auto version = std::stoull(std::string(
        e.at("object").at("metadata").at("resourceVersion").as_string()));
    EXPECT_GT(version, last_version) << e;
    last_version = version;
    seen.emplace_back(std::string(e.at("type").as_string()),
                      std::string(e.at("object").at("reason").as_string()));
  }
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, std::string>>{
                    {"MODIFIED", "Unschedulable"},
                    {"ADDED", "Scheduled"},
                    {"DELETED", "Unschedulable"},
                    {"DELETED", "Scheduled"}}));
  EXPECT_FALSE(w.next_line(600ms)) << "a change streamed twice";
}

TEST_F(EventsServer, AWatchFromAVersionItNeverGaveIsTooOld) {
  request r;
  // Another run's version: the client must list again, as after a 410 of an object watch.
  r.target = "/api/v1/events?watch=1&resourceVersion=999999";
  watch_stream w{s_.port(), r};
  ASSERT_EQ(w.status(), 200);
  auto line = w.next_line(5s);
  ASSERT_TRUE(line);
  auto e = json::parse(*line);
  EXPECT_EQ(e.at("type"), "ERROR");
  EXPECT_EQ(e.at("object").at("code"), 410) << e;
  EXPECT_EQ(e.at("object").at("reason"), "Expired") << e;
}

TEST_F(EventsServer, WatchFromVersionZeroSendsTablesOfEveryEvent) {
  request r;
  r.target = "/api/v1/events?watch=1&resourceVersion=0";
  r.accept = "application/json;as=Table;v=v1;g=meta.k8s.io";
  watch_stream w{s_.port(), r};
  ASSERT_EQ(w.status(), 200);
  auto first = w.next_line(5s);
  ASSERT_TRUE(first);
  auto e = json::parse(*first);
  EXPECT_EQ(e.at("type"), "ADDED");
  EXPECT_EQ(e.at("object").at("kind"), "Table");
  EXPECT_EQ(e.at("object").at("columnDefinitions").as_array().size(), 10u);
  auto second = w.next_line(5s);
  ASSERT_TRUE(second);
  EXPECT_EQ(json::parse(*second).at("object").as_object().if_contains("columnDefinitions"),
            nullptr);
}

TEST_F(EventsServer, DiscoveryListsEvents) {
  auto v = body_json(get(s_.port(), "/api/v1"));
  const json::value* events = nullptr;
  for (const auto& r : v.at("resources").as_array())
    if (r.at("name") == "events")
      events = &r;
  ASSERT_NE(events, nullptr) << v;
  EXPECT_EQ(events->at("kind"), "Event");
  EXPECT_EQ(events->at("namespaced"), true);
  EXPECT_EQ(events->at("shortNames"), json::parse(R"(["ev"])"));
  EXPECT_EQ(events->at("verbs"), json::parse(R"(["get","list","watch"])"));
}

} // namespace
} // namespace phalanx::api::test

namespace phalanx::api::test {
namespace {

// ---- events.k8s.io/v1 over the server.

TEST_F(EventsServer, ServesEventsK8sIoV1) {
  auto all = get(s_.port(), "/apis/events.k8s.io/v1/events");
  ASSERT_EQ(all.status, 200) << all.body;
  auto v = body_json(all);
  EXPECT_EQ(v.at("kind"), "EventList");
  EXPECT_EQ(v.at("apiVersion"), "events.k8s.io/v1");
  ASSERT_EQ(v.at("items").as_array().size(), 2u) << v;
  EXPECT_EQ(v.at("items").at(0).at("apiVersion"), "events.k8s.io/v1");
  EXPECT_TRUE(v.at("items").at(0).as_object().contains("regarding")) << v;
  EXPECT_FALSE(v.at("items").at(0).as_object().contains("involvedObject")) << v;

  auto selected = get(s_.port(), "/apis/events.k8s.io/v1/namespaces/default/events?"
                                 "fieldSelector=regarding.kind%3DPodGroup");
  ASSERT_EQ(selected.status, 200) << selected.body;
  auto sv = body_json(selected);
  ASSERT_EQ(sv.at("items").as_array().size(), 1u) << sv;
  EXPECT_EQ(sv.at("items").at(0).at("note"), "3/4 tasks in gang unschedulable");
  EXPECT_EQ(sv.at("items").at(0).at("deprecatedCount"), 2);

  std::string name(sv.at("items").at(0).at("metadata").at("name").as_string());
  auto one = get(s_.port(), "/apis/events.k8s.io/v1/namespaces/default/events/" + name);
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(body_json(one).at("regarding").at("name"), "resnet-gang");
  // The same event in core/v1, by the same name.
  auto core = get(s_.port(), "/api/v1/namespaces/default/events/" + name);
  ASSERT_EQ(core.status, 200) << core.body;
  EXPECT_EQ(body_json(core).at("involvedObject").at("name"), "resnet-gang");

  auto refused = get(s_.port(), "/apis/events.k8s.io/v1/events?fieldSelector="
                                "involvedObject.name%3Dresnet-gang");
  ASSERT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(body_json(refused).at("message"), "field label not supported: involvedObject.name");

  auto table = get(s_.port(), "/apis/events.k8s.io/v1/events?includeObject=Object",
                   "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_EQ(table.status, 200) << table.body;
  auto tv = body_json(table);
  EXPECT_EQ(tv.at("kind"), "Table");
  EXPECT_EQ(tv.at("rows").at(0).at("object").at("apiVersion"), "events.k8s.io/v1");

  request post;
  post.method = "POST";
  post.target = "/apis/events.k8s.io/v1/namespaces/default/events";
  post.body = R"({"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"x"}})";
  post.content_type = "application/json";
  EXPECT_EQ(call(s_.port(), post).status, 405);
}

TEST_F(EventsServer, WatchesEventsK8sIoV1) {
  request r;
  r.target = "/apis/events.k8s.io/v1/events?watch=1&resourceVersion=0&fieldSelector="
             "regarding.kind%3DNode";
  watch_stream w{s_.port(), r};
  ASSERT_EQ(w.status(), 200);
  auto first = w.next_line(5s);
  ASSERT_TRUE(first);
  auto e = json::parse(*first);
  EXPECT_EQ(e.at("type"), "ADDED");
  EXPECT_EQ(e.at("object").at("apiVersion"), "events.k8s.io/v1");
  EXPECT_EQ(e.at("object").at("regarding").at("name"), "cpu-node-1");
  EXPECT_EQ(e.at("object").at("reason"), "NodeNotSchedulable");
}

TEST_F(EventsServer, DiscoveryListsTheEventsGroup) {
  auto groups = body_json(get(s_.port(), "/apis"));
  bool listed = false;
  for (const auto& g : groups.at("groups").as_array())
    if (g.at("name") == "events.k8s.io") {
      listed = true;
      EXPECT_EQ(g.at("preferredVersion").at("groupVersion"), "events.k8s.io/v1");
    }
  EXPECT_TRUE(listed) << groups;
  auto group = get(s_.port(), "/apis/events.k8s.io");
  ASSERT_EQ(group.status, 200) << group.body;
  EXPECT_EQ(body_json(group).at("kind"), "APIGroup");
  auto resources = get(s_.port(), "/apis/events.k8s.io/v1");
  ASSERT_EQ(resources.status, 200) << resources.body;
  auto v = body_json(resources);
  EXPECT_EQ(v.at("groupVersion"), "events.k8s.io/v1");
  ASSERT_EQ(v.at("resources").as_array().size(), 1u) << v;
  const auto& events = v.at("resources").at(0);
  EXPECT_EQ(events.at("name"), "events");
  EXPECT_EQ(events.at("kind"), "Event");
  EXPECT_EQ(events.at("namespaced"), true);
  EXPECT_EQ(events.at("shortNames"), json::parse(R"(["ev"])"));
  EXPECT_EQ(events.at("verbs"), json::parse(R"(["get","list","watch"])"));
  auto root = body_json(get(s_.port(), "/"));
  EXPECT_NE(json::serialize(root).find("\"/apis/events.k8s.io/v1\""), std::string::npos);
}

// What `kubectl explain events` reads: in each version's OpenAPI v3 document, a schema with the
// Event's group-version-kind, whose properties are every field the server writes (and the
// fields it refers to are there too).
TEST_F(EventsServer, OpenApiV3DescribesEveryFieldOfBothVersions) {
  auto index = body_json(get(s_.port(), "/openapi/v3"));
  struct version_case {
    event_version version;
    std::string document;
    std::string schema;
    std::string group;
  };
  const std::vector<version_case> cases = {
    {event_version::core_v1, "api/v1", "io.k8s.api.core.v1.Event", ""},
    {event_version::events_v1, "apis/events.k8s.io/v1", "io.k8s.api.events.v1.Event",
     "events.k8s.io"},
  };
  for (const auto& c : cases) {
    auto url = index.at("paths").at(c.document).at("serverRelativeURL").as_string();
    auto doc = get(s_.port(), std::string(url));
    ASSERT_EQ(doc.status, 200) << doc.body;
    auto d = body_json(doc);
    const auto& schemas = d.at("components").at("schemas").as_object();
    ASSERT_TRUE(schemas.contains(c.schema)) << d;
    const auto& schema = schemas.at(c.schema);
    json::array gvk{json::object{{"group", c.group}, {"version", "v1"}, {"kind", "Event"}}};
    EXPECT_EQ(schema.at("x-kubernetes-group-version-kind"), gvk);
    EXPECT_FALSE(schema.at("description").as_string().empty());
    const auto& properties = schema.at("properties").as_object();
    // Every key of an Event the server sends is described, with a description, and every
    // object field refers to a schema the document has.
    auto event = encode_event(pod_event(), 7, c.version);
    for (const auto& kv : event.as_object()) {
      ASSERT_TRUE(properties.contains(kv.key())) << c.schema << " lacks " << kv.key();
      const auto& p = properties.at(kv.key());
      EXPECT_FALSE(p.at("description").as_string().empty()) << kv.key();
      if (kv.value().is_object()) {
        std::string ref(p.at("allOf").at(0).at("$ref").as_string());
        auto target = ref.substr(std::string("#/components/schemas/").size());
        ASSERT_TRUE(schemas.contains(target)) << ref;
        for (const auto& sub : kv.value().as_object())
          EXPECT_TRUE(schemas.at(target).at("properties").as_object().contains(sub.key()))
              << target << " lacks " << sub.key();
      }
    }
    const char* count = c.version == event_version::core_v1 ? "count" : "deprecatedCount";
    EXPECT_EQ(properties.at(count).at("type"), "integer");
    EXPECT_EQ(properties.at("eventTime").at("format"), "date-time");
    // The writes are listed with fieldValidation, so that kubectl create -f of an Event
    // reaches the server (and its 405) without --validate=false.
    std::string prefix = "/" + c.document + "/namespaces/{namespace}/events";
    EXPECT_EQ(d.at("paths").at(prefix + "/{name}").at("patch").at("parameters").at(0).at("name"),
              "fieldValidation");
    EXPECT_EQ(d.at("paths").at(prefix).at("get").at("x-kubernetes-group-version-kind").at("kind"),
              "Event");
  }
}

} // namespace
} // namespace phalanx::api::test
