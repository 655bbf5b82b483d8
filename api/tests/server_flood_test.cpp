// Connection floods: at max_connections the server closes idle connections (the longest idle
// first) to make room, never busy ones; the probe port answers whatever the API port carries.
// No timing asserts: each test asserts that requests succeed while the flood is held open.

#include "api/tests/server_fixture.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

namespace phalanx::api::test {
namespace {

using namespace std::chrono_literals;

/// Connections that connect and send nothing, held open until destroyed. Plain sockets: a
/// raw_connection's io_context would cost three descriptors each.
class idle_flood {
 public:
  idle_flood(uint16_t port, int count) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < count; ++i) {
      int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      if (fd < 0)
        break;
      if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        break;
      }
      fds_.push_back(fd);
    }
  }
  ~idle_flood() {
    for (int fd : fds_)
      ::close(fd);
  }
  idle_flood(const idle_flood&) = delete;
  idle_flood& operator=(const idle_flood&) = delete;
  int connected() const { return static_cast<int>(fds_.size()); }

 private:
  std::vector<int> fds_;
};

/// Raises the soft descriptor limit to at least `wanted`; false when the hard limit is lower.
bool ensure_descriptors(rlim_t wanted) {
  rlimit l{};
  if (::getrlimit(RLIMIT_NOFILE, &l) != 0)
    return false;
  if (l.rlim_cur >= wanted)
    return true;
  if (l.rlim_max != RLIM_INFINITY && l.rlim_max < wanted)
    return false;
  l.rlim_cur = wanted;
  return ::setrlimit(RLIMIT_NOFILE, &l) == 0;
}

uint64_t counter_value(server& srv, const char* name) {
  return srv.metrics().counter_family(name, "").with(label_values{}).value();
}

double gauge_value(server& srv, const char* name) {
  return srv.metrics().gauge_family(name, "").with(label_values{}).value();
}

/// Waits (bounded) until `done` holds; returns whether it did.
template <class F>
bool eventually(F done, std::chrono::seconds limit = 30s) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

request create_pod(const std::string& name) {
  request r;
  r.method = "POST";
  r.target = "/api/v1/namespaces/flood/pods";
  r.content_type = "application/json";
  r.body = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
           R"("},"spec":{"containers":[{"name":"c"}]}})";
  return r;
}

TEST(ConnectionFlood, TwoThousandIdleConnectionsDoNotStarveProbesOrClients) {
  constexpr int flood_size = 2000;
  constexpr std::size_t cap = 256;
  ASSERT_TRUE(ensure_descriptors(2 * flood_size + 1024))
    << "the hard RLIMIT_NOFILE is too low for this test";
  server_options o;
  o.max_connections = cap;
  // Only eviction can make room here: the silent connections outlive the test.
  o.first_byte_timeout = 120s;
  o.probe_port = 0;
  auto s = start_server(o);
  ASSERT_TRUE(s.srv);

  idle_flood flood{s.port(), flood_size};
  ASSERT_EQ(flood.connected(), flood_size);
  // Every flood connection has been accepted: all but `cap` of them were closed to make room
  // (or, by a server without eviction, refused).
  ASSERT_TRUE(eventually([&] {
    return counter_value(*s.srv, "phalanx_http_evicted_connections_total") +
             counter_value(*s.srv, "phalanx_http_rejected_connections_total") >=
           uint64_t(flood_size) - cap;
  }));

  // While the flood is held open: probes on both ports and a client's requests all succeed.
  for (const char* path : {"/healthz", "/readyz", "/livez", "/metrics"})
    EXPECT_EQ(get(s.port(), path).status, 200) << path;
  client keep_alive{s.port()};
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(keep_alive.send(create_pod("kept-" + std::to_string(i))).status, 201) << i;
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(call(s.port(), create_pod("fresh-" + std::to_string(i))).status, 201) << i;
  EXPECT_EQ(s.svc->count(resource_kind::pod), 2u + 40u);
  EXPECT_EQ(counter_value(*s.srv, "phalanx_http_rejected_connections_total"), 0u)
    << "a client got 503";
  EXPECT_GE(counter_value(*s.srv, "phalanx_http_evicted_connections_total"),
            uint64_t(flood_size) - cap);
  for (const char* path : {"/healthz", "/readyz", "/livez", "/metrics"})
    EXPECT_EQ(get(s.srv->probe_port(), path).status, 200) << path << " on the probe port";
}

TEST(ConnectionFlood, TheLongestIdleConnectionMakesRoom) {
  server_options o;
  o.max_connections = 2;
  auto s = start_server(o);
  ASSERT_TRUE(s.srv);
  // `kept_alive` is idle since its answer; then `slow` sends half a header (not a request yet).
  raw_connection kept_alive{s.port()};
  ASSERT_TRUE(kept_alive.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto first = kept_alive.read_response(10s);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 200);
  // The answer can reach the client before the server marks the connection idle: wait for it.
  ASSERT_TRUE(eventually([&] { return gauge_value(*s.srv, "phalanx_http_idle_connections") == 1; }));
  raw_connection slow{s.port()};
  ASSERT_TRUE(slow.write("GET /api/v1/nodes HTTP/1.1\r\nHo"));
  ASSERT_TRUE(eventually([&] { return gauge_value(*s.srv, "phalanx_http_idle_connections") == 2; }));

  // A third connection: served, in place of the one idle the longest.
  auto third = get(s.port(), "/api/v1/nodes");
  EXPECT_EQ(third.status, 200);
  EXPECT_TRUE(kept_alive.closed_within(10s));
  EXPECT_EQ(counter_value(*s.srv, "phalanx_http_evicted_connections_total"), 1u);
  // The slow one was idle for a shorter time: it is still there and finishes its request.
  ASSERT_TRUE(slow.write("st: x\r\n\r\n"));
  auto late = slow.read_response(10s);
  ASSERT_TRUE(late);
  EXPECT_EQ(late->status, 200);
  EXPECT_EQ(counter_value(*s.srv, "phalanx_http_rejected_connections_total"), 0u);
}

TEST(ConnectionFlood, BusyConnectionsAreNeverEvictedAndTheProbePortStillAnswers) {
  server_options o;
  o.max_connections = 2;
  o.probe_port = 0;
  auto s = start_server(o);
  ASSERT_TRUE(s.srv);
  ASSERT_NE(s.srv->probe_port(), 0);
  ASSERT_NE(s.srv->probe_port(), s.port());
  request w;
  w.target = "/api/v1/nodes?watch=1";
  watch_stream first{s.port(), w};
  watch_stream second{s.port(), w};
  ASSERT_EQ(first.status(), 200);
  ASSERT_EQ(second.status(), 200);

  auto refused = get(s.port(), "/healthz");
  EXPECT_EQ(refused.status, 503);
  EXPECT_NE(refused.body.find("too many connections"), std::string::npos) << refused.body;
  for (const char* path : {"/healthz", "/readyz", "/livez", "/metrics"})
    EXPECT_EQ(get(s.srv->probe_port(), path).status, 200) << path;
  auto other = get(s.srv->probe_port(), "/api/v1/nodes");
  EXPECT_EQ(other.status, 404);
  EXPECT_NE(other.body.find("the probe port serves only"), std::string::npos) << other.body;
  // The watches were not touched.
  EXPECT_TRUE(first.next_line(5s));
  EXPECT_TRUE(second.next_line(5s));
  EXPECT_EQ(counter_value(*s.srv, "phalanx_http_evicted_connections_total"), 0u);
}

TEST(ConnectionFlood, ProbePortNeedsTheTokenForMetricsOnly) {
  temp_dir dir;
  server_options o;
  o.probe_port = 0;
  o.token_file = dir.write("token", "probe-token");
  auto s = start_server(o);
  ASSERT_TRUE(s.srv);
  EXPECT_EQ(get(s.srv->probe_port(), "/healthz").status, 200);
  EXPECT_EQ(get(s.srv->probe_port(), "/metrics").status, 401);
  request m;
  m.target = "/metrics";
  m.token = "probe-token";
  EXPECT_EQ(call(s.srv->probe_port(), m).status, 200);
}

TEST(ConnectionFlood, SilentNewConnectionsTimeOutButKeepAliveWaitsLonger) {
  server_options o;
  o.first_byte_timeout = 200ms;
  o.header_timeout = 60s;  // Not what closes a connection that sends nothing.
  o.idle_timeout = 60s;
  auto s = start_server(o);
  ASSERT_TRUE(s.srv);
  raw_connection silent{s.port()};
  EXPECT_TRUE(silent.closed_within(10s));

  raw_connection kept{s.port()};
  ASSERT_TRUE(kept.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto first = kept.read_response(10s);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 200);
  // Longer than the first-byte timeout: a keep-alive connection waits idle_timeout instead.
  std::this_thread::sleep_for(600ms);
  ASSERT_TRUE(kept.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto second = kept.read_response(10s);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 200);
}

} // namespace
} // namespace phalanx::api::test
