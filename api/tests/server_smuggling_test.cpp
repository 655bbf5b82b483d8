// Request smuggling over a raw TCP connection: a request whose framing could be read two ways,
// followed in the same write by a second request that a front proxy would have taken for its
// body. The server must refuse the first (4xx), say Connection: close, close the connection,
// and never hand the second to the service.

#include "api/tests/server_fixture.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace phalanx::api::test {
namespace {

using namespace std::chrono_literals;

// Deletes a pod of the seeded gang: if it ran, the pod would be gone and the service called.
const std::string smuggled =
  "DELETE /api/v1/namespaces/default/pods/resnet-ps-0 HTTP/1.1\r\nHost: x\r\n\r\n";

std::string post_head(const std::string& framing_fields) {
  return "POST /api/v1/namespaces/team/pods HTTP/1.1\r\nHost: x\r\n"
         "Content-Type: application/json\r\n" +
         framing_fields + "\r\n";
}

struct smuggling_case {
  const char* name;
  std::string request;  // The bad request; the smuggled one follows in the same write.
};

void PrintTo(const smuggling_case& c, std::ostream* os) {
  *os << c.name;
}

std::vector<smuggling_case> smuggling_cases() {
  return {
    {"xchunked", post_head("Transfer-Encoding: xchunked\r\n")},
    {"chunked_then_identity", post_head("Transfer-Encoding: chunked, identity\r\n")},
    {"identity", post_head("Transfer-Encoding: identity\r\n")},
    {"gzip_then_chunked", post_head("Transfer-Encoding: gzip, chunked\r\n") + "0\r\n\r\n"},
    {"chunked_with_content_length",
     post_head("Transfer-Encoding: chunked\r\nContent-Length: " +
               std::to_string(smuggled.size() + 5) + "\r\n") +
       "0\r\n\r\n"},
    {"content_length_with_chunked",
     post_head("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n") + "0\r\n\r\n"},
    {"two_content_lengths_differ",
     post_head("Content-Length: 0\r\nContent-Length: " + std::to_string(smuggled.size()) +
               "\r\n")},
    {"two_content_lengths_equal", post_head("Content-Length: 2\r\nContent-Length: 2\r\n") + "{}"},
    {"content_length_list", post_head("Content-Length: 2, 2\r\n") + "{}"},
    {"chunked_twice",
     post_head("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n") + "0\r\n\r\n"},
    {"obs_fold_hides_chunked", post_head("Transfer-Encoding:\r\n chunked\r\n") + "0\r\n\r\n"},
    {"space_before_colon", post_head("Transfer-Encoding : chunked\r\n") + "0\r\n\r\n"},
    {"chunk_size_junk", post_head("Transfer-Encoding: chunked\r\n") + "zz\r\n{}\r\n0\r\n\r\n"},
    {"chunk_size_overflow",
     post_head("Transfer-Encoding: chunked\r\n") + "10000000000000002\r\n{}\r\n0\r\n\r\n"},
    {"bad_request_line", "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n"},
  };
}

/// What the server wrote until it closed: the status of each response (no body here holds
/// "HTTP/1.1 ").
struct transcript {
  std::vector<int> statuses;
  std::string first_head;  // The first response's header, lowercase.
};

transcript parse_transcript(const std::string& bytes) {
  transcript t;
  for (std::size_t at = bytes.find("HTTP/1.1 "); at != std::string::npos;
       at = bytes.find("HTTP/1.1 ", at + 9))
    t.statuses.push_back(std::atoi(bytes.c_str() + at + 9));
  std::string head = bytes.substr(0, bytes.find("\r\n\r\n"));
  for (auto& c : head)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  t.first_head = head;
  return t;
}

class Smuggling : public ::testing::TestWithParam<smuggling_case> {};

TEST_P(Smuggling, IsRefusedAndTheConnectionClosed) {
  const auto& c = GetParam();
  auto s = start_server();
  ASSERT_TRUE(s.srv);
  raw_connection conn{s.port()};
  ASSERT_TRUE(conn.write(c.request + smuggled));
  std::string answer = conn.read_until_close(10s);
  EXPECT_TRUE(conn.closed_within(2s)) << "the connection stayed open:\n" << answer;
  auto t = parse_transcript(answer);
  ASSERT_EQ(t.statuses.size(), 1u) << "expected one answer:\n" << answer;
  EXPECT_TRUE((t.statuses[0] >= 400 && t.statuses[0] < 500) || t.statuses[0] == 501)
    << answer;
  EXPECT_NE(t.first_head.find("\r\nconnection: close"), std::string::npos) << answer;
  EXPECT_EQ(s.service_calls(), 0) << "a request reached the service:\n" << answer;
  EXPECT_TRUE(s.svc->find(resource_kind::pod, "default", "resnet-ps-0"));
}

INSTANTIATE_TEST_SUITE_P(Server, Smuggling, ::testing::ValuesIn(smuggling_cases()),
                         [](const ::testing::TestParamInfo<smuggling_case>& info) {
                           return std::string(info.param.name);
                         });

TEST(Smuggling, AGoodRequestBeforeTheBadOneIsServedThenTheConnectionCloses) {
  auto s = start_server();
  ASSERT_TRUE(s.srv);
  raw_connection conn{s.port()};
  ASSERT_TRUE(conn.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" +
                         post_head("Transfer-Encoding: xchunked\r\n") + smuggled));
  auto t = parse_transcript(conn.read_until_close(10s));
  ASSERT_EQ(t.statuses.size(), 2u);
  EXPECT_EQ(t.statuses[0], 200);
  EXPECT_EQ(t.statuses[1], 400);
  EXPECT_TRUE(conn.closed_within(2s));
  EXPECT_EQ(s.service_calls(), 0);
}

TEST(Smuggling, TheRefusalNamesTheProblem) {
  auto s = start_server();
  ASSERT_TRUE(s.srv);
  raw_connection conn{s.port()};
  ASSERT_TRUE(conn.write(post_head("Transfer-Encoding: xchunked\r\n") + smuggled));
  auto r = conn.read_response(10s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->header("connection"), "close");
  EXPECT_NE(r->body.find(R"(the final transfer coding is \"xchunked\", not chunked)"),
            std::string::npos)
    << r->body;
  EXPECT_NE(r->body.find(R"("reason":"BadRequest")"), std::string::npos) << r->body;
}

TEST(Smuggling, ChunkedBodiesStillWork) {
  auto s = start_server();
  ASSERT_TRUE(s.srv);
  raw_connection conn{s.port()};
  std::string pod =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"chunky"},"spec":{"containers":[{"name":"c"}]}})";
  char size[16];
  std::snprintf(size, sizeof size, "%zx", pod.size());
  ASSERT_TRUE(conn.write(post_head("Transfer-Encoding: chunked\r\n") + size + "\r\n" + pod +
                         "\r\n0\r\n\r\nGET /api/v1/namespaces/team/pods/chunky HTTP/1.1\r\n"
                         "Host: x\r\n\r\n"));
  auto created = conn.read_response(10s);
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, 201) << created->body;
  auto got = conn.read_response(10s);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->status, 200) << got->body;
}

} // namespace
} // namespace phalanx::api::test
