#pragma once

// A running server over the fake service, seeded with the repository's examples, for the tests
// that talk HTTP over loopback.

#include "api/codec.hpp"
#include "api/server.hpp"
#include "api/testing/fake_service.hpp"
#include "api/tests/test_util.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace phalanx::api::test {

inline std::string example_path(const std::string& name) {
  return std::string(PHALANX_SOURCE_DIR) + "/examples/" + name;
}

/// Puts every object of an example file into the fake service.
inline void seed(api::testing::fake_service& svc, const std::string& example) {
  decode_options opts;
  opts.read_status = false;
  opts.default_namespace = "default";
  auto objs = decode_manifests(read_file(example_path(example)), opts);
  ASSERT_TRUE(objs.ok()) << example << ": " << objs.error().message;
  for (auto& o : *objs)
    svc.put(std::move(o));
}

struct running_server {
  std::unique_ptr<api::testing::fake_service> svc;
  std::unique_ptr<server> srv;
  uint16_t port() const { return srv->port(); }
};

/// Starts a fake service (nodes, queues, a closed queue "closed-q", the PodGroup and its pods)
/// and a server on a free loopback port.
inline running_server start_server(server_options options = {}) {
  running_server r;
  r.svc = std::make_unique<api::testing::fake_service>();
  seed(*r.svc, "nodes.yaml");
  seed(*r.svc, "queues.yaml");
  seed(*r.svc, "podgroup.yaml");
  seed(*r.svc, "gang-pods.yaml");
  queue_object closed;
  closed.queue.meta.name = "closed-q";
  closed.queue.state = scheduler::queue_state::closed;
  r.svc->put(closed);
  auto s = server::start(*r.svc, std::move(options));
  if (!s.ok()) {
    ADD_FAILURE() << s.error().to_string();
    return r;
  }
  r.srv = std::move(*s);
  return r;
}

} // namespace phalanx::api::test
