// core/v1 Events as the API serves them (issue 30): the Event's JSON, kube-apiserver's field
// selectors for events, the Table kubectl prints, and the routes over the fake service.

#include "api/events.hpp"
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

TEST(EventEncoding, NamesAreStableAcrossCountBumpsAndDifferPerEvent) {
  auto e = pod_event();
  auto bumped = e;
  bumped.event.count = 9;
  bumped.event.last_time = at(1700000500);
  bumped.event.message = "0/4 nodes are available";
  EXPECT_EQ(event_name(e), event_name(bumped));
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

TEST(EventChanges, FromAListsVersionStreamsNewEventsAndCountBumps) {
  event_changes changes{true};
  EXPECT_TRUE(changes.next({pod_event()}).empty());  // Where the watch starts.
  EXPECT_TRUE(changes.next({pod_event()}).empty());  // Nothing changed.
  auto bumped = pod_event();
  bumped.event.count = 5;
  bumped.event.last_time = at(1700000200);
  auto out = changes.next({bumped, node_event()});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].first, watch_event::type::modified);
  EXPECT_EQ(out[0].second.event.count, 5);
  EXPECT_EQ(out[1].first, watch_event::type::added);
  EXPECT_EQ(out[1].second.event.reason, "NodeNotSchedulable");
  // An event that leaves is not reported; one that comes back is new again.
  EXPECT_TRUE(changes.next({bumped}).empty());
  out = changes.next({bumped, node_event()});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, watch_event::type::added);
}

TEST(EventChanges, FromVersionZeroStartsWithEveryEventAdded) {
  event_changes changes{false};
  auto out = changes.next({pod_event(), node_event()});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].first, watch_event::type::added);
  EXPECT_EQ(out[1].first, watch_event::type::added);
  EXPECT_TRUE(changes.next({pod_event(), node_event()}).empty());
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
  EXPECT_EQ(cells[5], "phalanx");
  EXPECT_EQ(cells[6], "0/3 nodes are available: 3 Insufficient cpu.");
  EXPECT_EQ(cells[7], "100s");
  EXPECT_EQ(cells[8], 4);
  EXPECT_EQ(cells[9].as_string(), event_name(pod_event()));
  // The row's object names the event's namespace: kubectl get events -A's NAMESPACE column.
  EXPECT_EQ(v.at("rows").at(0).at("object").at("metadata").at("namespace"), "team");
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

TEST_F(EventsServer, WatchStreamsNewEventsAndCountBumps) {
  request r;
  r.target = "/api/v1/namespaces/default/events?watch=1&resourceVersion=" +
             std::to_string(s_.svc->resource_version()) +
             "&fieldSelector=involvedObject.kind%3DPodGroup";
  watch_stream w{s_.port(), r};
  ASSERT_EQ(w.status(), 200);
  std::this_thread::sleep_for(300ms);  // The watch's first read of the events is its start.
  scheduler::event again{"Warning", "Unschedulable", "3/4 tasks in gang unschedulable", 3,
                         at(1700000000), at(1700000120)};
  s_.svc->add_event(resource_kind::pod_group, "default", "resnet-gang", again);
  scheduler::event other{"Normal", "NodeSchedulable", "uncordoned", 1, at(1700000200),
                         at(1700000200)};
  s_.svc->add_event(resource_kind::node, "", "cpu-node-1", other);  // Not a PodGroup's.
  scheduler::event fresh{"Normal", "Scheduled", "gang scheduled", 1, at(1700000300),
                         at(1700000300)};
  s_.svc->add_event(resource_kind::pod_group, "default", "resnet-gang", fresh);
  std::vector<std::pair<std::string, std::string>> seen;
  while (seen.size() < 2) {
    auto line = w.next_line(5s);
    ASSERT_TRUE(line) << "after " << seen.size() << " lines";
    auto e = json::parse(*line);
    EXPECT_EQ(e.at("object").at("kind"), "Event");
    EXPECT_EQ(e.at("object").at("involvedObject").at("kind"), "PodGroup");
    seen.emplace_back(std::string(e.at("type").as_string()),
                      std::string(e.at("object").at("reason").as_string()));
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, std::string>>{
                    {"ADDED", "Scheduled"}, {"MODIFIED", "Unschedulable"}}));
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
