// Lists in pages as kube-apiserver serves them (issue 30): ?limit and ?continue on every kind
// and on Events, metadata.continue and remainingItemCount, the 400s of a bad limit or token and
// the 410 Expired of a token too old; and the rule that finds a page (api/list_page.hpp).

#include "api/kinds.hpp"
#include "api/list_page.hpp"
#include "api/tests/server_fixture.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace phalanx::api::test {
namespace {

namespace json = boost::json;

// The page of `items` after `after` with `limit`, as page_finder and in_page find it, each as
// "ns/name", in order.
std::vector<std::string> page_of(std::vector<std::pair<std::string, std::string>> items,
                                 std::size_t limit, std::optional<std::pair<std::string,
                                                                            std::string>> after,
                                 std::size_t& remaining) {
  list_page page;
  page.limit = limit;
  page.after = std::move(after);
  page_finder finder(page);
  for (const auto& [ns, name] : items)
    finder.offer({ns, name});
  auto end = finder.end();
  remaining = end.remaining;
  std::vector<std::string> out;
  for (const auto& [ns, name] : items)
    if (in_page({ns, name}, page, end))
      out.push_back(ns + "/" + name);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ListPage, APageIsTheFirstItemsAfterTheCursorInKeyOrder) {
  // In no order, as a hash map walks them; names that sort apart from their namespaces.
  const std::vector<std::pair<std::string, std::string>> items = {
      {"b", "a"}, {"a", "z"}, {"a", "b"}, {"c", "a"}, {"a", "y"}, {"b", "b"}};
  std::size_t remaining = 0;
  using strings = std::vector<std::string>;
  EXPECT_EQ(page_of(items, 2, std::nullopt, remaining), (strings{"a/b", "a/y"}));
  EXPECT_EQ(remaining, 4u);
  EXPECT_EQ(page_of(items, 2, std::pair{"a", "y"}, remaining), (strings{"a/z", "b/a"}));
  EXPECT_EQ(remaining, 2u);
  EXPECT_EQ(page_of(items, 2, std::pair{"b", "a"}, remaining), (strings{"b/b", "c/a"}));
  EXPECT_EQ(remaining, 0u);
  // A cursor that is no item's (it was deleted): the page starts after where it would be.
  EXPECT_EQ(page_of(items, 3, std::pair{"a", "c"}, remaining), (strings{"a/y", "a/z", "b/a"}));
  EXPECT_EQ(remaining, 2u);
  EXPECT_EQ(page_of(items, 0, std::pair{"b", "a"}, remaining), (strings{"b/b", "c/a"}));
  EXPECT_EQ(page_of(items, 6, std::nullopt, remaining).size(), 6u);
  EXPECT_EQ(remaining, 0u);
  EXPECT_TRUE(page_of(items, 2, std::pair{"c", "a"}, remaining).empty());
}

// A 400 names the parameter and the rule.
TEST(ListPage, BadLimitsAndTokensAreRefusedNamingTheParameter) {
  struct bad_case {
    std::string limit, token, resource_version, message;
  };
  auto token = answer_page("pods", {}, 7, list_key{"default", "p-1"}, 3, false).continue_token;
  ASSERT_FALSE(token.empty());
  const std::vector<bad_case> cases = {
      {"x", "", "", "limit: Invalid value: \"x\": must be a whole number"},
      {"2x", "", "", "limit: Invalid value: \"2x\": must be a whole number"},
      {"-1", "", "", "limit: Invalid value: -1: must be greater than or equal to 0"},
      {"", "%%%", "", "continue: Invalid value: \"%%%\": not base64url, so not a token this "
                      "server made; start the list again without the continue parameter"},
      {"", "eyJ2IjoxfQ", "", "continue: Invalid value: \"eyJ2IjoxfQ\": not a token this server "
                             "made; start the list again without the continue parameter"},
      {"", token, "12", "specifying resource version is not allowed when using continue"},
  };
  for (const auto& c : cases) {
    auto page = read_page_query(c.limit, c.token, c.resource_version, "pods");
    ASSERT_FALSE(page.ok()) << c.message;
    EXPECT_EQ(page.error().code(), 400);
    EXPECT_EQ(page.error().message, c.message);
  }
  auto other = read_page_query("", token, "", "nodes");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("the token continues a list of pods, not of nodes"),
            std::string::npos)
      << other.error().message;
  auto read = read_page_query("2", token, "0", "pods");
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->limit, 2u);
  EXPECT_EQ(read->first_version, 7u);
  ASSERT_TRUE(read->after.has_value());
  EXPECT_EQ(*read->after, (std::pair<std::string, std::string>{"default", "p-1"}));
}

class PagedServer : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 5; ++i) {
      pod_object p;
      p.pod.meta.name = "p-" + std::to_string(i);
      p.pod.meta.namespace_name = "paged";
      p.pod.meta.labels.set("app", "web");
      s_.svc->put(p);
    }
  }

  json::value list(const std::string& target, int want_status = 200,
                   const std::string& accept = "") {
    auto r = get(s_.port(), target, accept);
    EXPECT_EQ(r.status, want_status) << target << ": " << r.body;
    return json::parse(r.body);
  }

  static std::vector<std::string> names(const json::value& list) {
    std::vector<std::string> out;
    for (const auto& item : list.at("items").as_array())
      out.emplace_back(item.at("metadata").at("name").as_string());
    return out;
  }

  running_server s_ = start_server();
};

TEST_F(PagedServer, PagesAListInKeyOrderWithTheFirstPagesVersion) {
  const std::string pods = "/api/v1/namespaces/paged/pods";
  auto first = list(pods + "?limit=2");
  EXPECT_EQ(names(first), (std::vector<std::string>{"p-0", "p-1"}));
  const auto& meta = first.at("metadata").as_object();
  ASSERT_TRUE(meta.contains("continue")) << first;
  EXPECT_EQ(meta.at("remainingItemCount"), 3);
  const std::string version(meta.at("resourceVersion").as_string());

  // Changed between pages: p-9 (after the cursor) shows up, p-00 (before it) does not, and
  // every page says the first page's version, for a watch to replay what the pages missed.
  for (auto name : {"p-00", "p-9"}) {
    pod_object late;
    late.pod.meta.name = name;
    late.pod.meta.namespace_name = "paged";
    s_.svc->put(late);
  }
  std::vector<std::string> seen = names(first);
  std::string token(meta.at("continue").as_string());
  int pages = 1;
  while (!token.empty()) {
    auto page = list(pods + "?limit=2&continue=" + token);
    ++pages;
    EXPECT_EQ(page.at("metadata").at("resourceVersion").as_string(), version);
    for (auto& n : names(page))
      seen.push_back(n);
    const auto& m = page.at("metadata").as_object();
    token = m.contains("continue") ? std::string(m.at("continue").as_string()) : "";
    EXPECT_EQ(m.contains("remainingItemCount"), !token.empty()) << page;
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(seen, (std::vector<std::string>{"p-0", "p-1", "p-2", "p-3", "p-4", "p-9"}));

  // Without a limit (or with 0), the whole list and no token.
  auto whole = list(pods + "?limit=0");
  EXPECT_EQ(names(whole).size(), 7u);
  EXPECT_FALSE(whole.at("metadata").as_object().contains("continue"));
}

// kubectl asks for Tables in pages (`kubectl get pods --chunk-size=2`); a selector keeps the
// token and drops the count, as kube-apiserver; every kind pages.
TEST_F(PagedServer, PagesTablesSelectionsAndEveryKind) {
  auto table = list("/api/v1/namespaces/paged/pods?limit=2", 200,
                    "application/json;as=Table;v=v1;g=meta.k8s.io");
  EXPECT_EQ(table.at("kind"), "Table");
  EXPECT_EQ(table.at("rows").as_array().size(), 2u);
  EXPECT_TRUE(table.at("metadata").as_object().contains("continue")) << table;
  EXPECT_EQ(table.at("metadata").at("remainingItemCount"), 3);

  auto selected = list("/api/v1/namespaces/paged/pods?limit=2&labelSelector=app%3Dweb");
  EXPECT_EQ(names(selected).size(), 2u);
  EXPECT_TRUE(selected.at("metadata").as_object().contains("continue"));
  EXPECT_FALSE(selected.at("metadata").as_object().contains("remainingItemCount"));

  for (const auto& k : all_kinds()) {
    std::string path = k.group.empty() ? "/api/v1/" : "/apis/" + std::string(k.group) + "/" +
                                                          std::string(k.version) + "/";
    path += std::string(k.plural);
    auto whole = list(path);
    auto all = names(whole);
    if (all.size() < 2)
      continue;  // Nothing to page.
    auto page = list(path + "?limit=1");
    ASSERT_EQ(names(page).size(), 1u) << path;
    EXPECT_EQ(page.at("metadata").at("remainingItemCount").to_number<std::size_t>(),
              all.size() - 1)
        << path;
    auto rest = list(path + "?continue=" +
                     std::string(page.at("metadata").at("continue").as_string()));
    auto again = names(page);
    for (auto& n : names(rest))
      again.push_back(n);
    EXPECT_EQ(again, all) << path;
  }
}

TEST_F(PagedServer, RefusesBadPagesAndTokensOfAListMovedOn) {
  auto bad = list("/api/v1/pods?limit=many", 400);
  EXPECT_EQ(bad.at("message"), "limit: Invalid value: \"many\": must be a whole number");
  auto damaged = list("/api/v1/pods?continue=bm90IGEgdG9rZW4", 400);
  EXPECT_EQ(damaged.at("reason"), "BadRequest");
  EXPECT_NE(std::string(damaged.at("message").as_string()).find("continue: Invalid value:"),
            std::string::npos)
      << damaged;
  auto first = list("/api/v1/namespaces/paged/pods?limit=2");
  std::string token(first.at("metadata").at("continue").as_string());
  auto of_nodes = list("/api/v1/nodes?continue=" + token, 400);
  EXPECT_NE(std::string(of_nodes.at("message").as_string()).find("a list of pods, not of nodes"),
            std::string::npos);

  // The service can no longer replay the changes since the first page: 410 Expired in
  // kube-apiserver's words, with a token that lists the rest as things are now.
  s_.svc->fail_next("list", status{errc::failed_precondition, "too old"});
  auto gone = list("/api/v1/namespaces/paged/pods?limit=2&continue=" + token, 410);
  EXPECT_EQ(gone.at("reason"), "Expired");
  EXPECT_EQ(gone.at("code"), 410);
  EXPECT_EQ(gone.at("message"),
            "The provided continue parameter is too old to display a consistent list result. "
            "You can start a new list without the continue parameter, or use the continue token "
            "in this response to retrieve the remainder of the results. Continuing with the "
            "provided token results in an inconsistent list - objects that were created, "
            "modified, or deleted between the time the first chunk was returned and now may "
            "show up in the list.");
  std::string inconsistent(gone.at("metadata").at("continue").as_string());
  ASSERT_FALSE(inconsistent.empty());
  pod_object late;
  late.pod.meta.name = "p-5";
  late.pod.meta.namespace_name = "paged";
  s_.svc->put(late);
  auto rest = list("/api/v1/namespaces/paged/pods?continue=" + inconsistent);
  EXPECT_EQ(names(rest), (std::vector<std::string>{"p-2", "p-3", "p-4", "p-5"}));
  // Continued without the first page's promise: the version it was read at, not the first's.
  EXPECT_NE(rest.at("metadata").at("resourceVersion"), first.at("metadata").at("resourceVersion"));
  // Any other failure is itself; a first page is never too old.
  s_.svc->fail_next("list", status{errc::failed_precondition, "not now"});
  auto other = list("/api/v1/namespaces/paged/pods?limit=2", 422);
  EXPECT_EQ(other.at("message"), "not now");
}

TEST_F(PagedServer, PagesEvents) {
  for (int i = 0; i < 5; ++i) {
    scheduler::event e;
    e.type = "Normal";
    e.reason = "Scheduled";
    e.message = "placed";
    e.first_time = scheduler::timestamp{std::chrono::seconds(1000 + i)};
    e.last_time = e.first_time;
    s_.svc->add_event(resource_kind::pod, "paged", "p-" + std::to_string(i), e);
  }
  for (const std::string prefix : {"/api/v1", "/apis/events.k8s.io/v1"}) {
    const std::string events = prefix + "/namespaces/paged/events";
    auto whole = list(events);
    auto all = names(whole);
    ASSERT_EQ(all.size(), 5u) << whole;
    std::vector<std::string> seen;
    std::string token;
    do {
      auto page = list(events + "?limit=2" + (token.empty() ? "" : "&continue=" + token));
      EXPECT_LE(names(page).size(), 2u);
      for (auto& n : names(page))
        seen.push_back(n);
      const auto& m = page.at("metadata").as_object();
      token = m.contains("continue") ? std::string(m.at("continue").as_string()) : "";
    } while (!token.empty());
    EXPECT_EQ(seen, all) << prefix;
  }
  // A token is of its version's list.
  auto first = list("/api/v1/namespaces/paged/events?limit=2");
  auto other = list("/apis/events.k8s.io/v1/namespaces/paged/events?continue=" +
                        std::string(first.at("metadata").at("continue").as_string()),
                    400);
  EXPECT_NE(std::string(other.at("message").as_string())
                .find("a list of events, not of events.events.k8s.io"),
            std::string::npos)
      << other;
}

} // namespace
} // namespace phalanx::api::test
