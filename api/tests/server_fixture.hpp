#pragma once

// A running server over the fake service, seeded with the repository's examples, for the tests
// that talk HTTP over loopback.

#include "api/codec.hpp"
#include "api/server.hpp"
#include "api/testing/fake_service.hpp"
#include "api/tests/test_util.hpp"

#include <gtest/gtest.h>

#include <atomic>
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

/// Passes every call on to another service and counts them, so a test can tell that a request
/// never reached the service (a smuggled one).
class counting_service final : public service {
 public:
  explicit counting_service(service& inner) : inner_(inner) {}

  using service::create;
  using service::update;
  using service::remove;
  void create(object obj, const write_options& options, object_callback done) override {
    ++calls_;
    inner_.create(std::move(obj), options, std::move(done));
  }
  void get(resource_kind kind, std::string namespace_name, std::string name,
           object_callback done) override {
    ++calls_;
    inner_.get(kind, std::move(namespace_name), std::move(name), std::move(done));
  }
  void list(resource_kind kind, list_options options, list_callback done) override {
    ++calls_;
    inner_.list(kind, std::move(options), std::move(done));
  }
  void remove(resource_kind kind, std::string namespace_name, std::string name,
              const write_options& options, object_callback done) override {
    ++calls_;
    inner_.remove(kind, std::move(namespace_name), std::move(name), options, std::move(done));
  }
  void update(object obj, const write_options& options, object_callback done) override {
    ++calls_;
    inner_.update(std::move(obj), options, std::move(done));
  }
  void act(resource_kind kind, std::string namespace_name, std::string name,
           object_action action, object_callback done) override {
    ++calls_;
    inner_.act(kind, std::move(namespace_name), std::move(name), action, std::move(done));
  }
  void events(resource_kind kind, std::string namespace_name, std::string name,
              events_callback done) override {
    ++calls_;
    inner_.events(kind, std::move(namespace_name), std::move(name), std::move(done));
  }
  void all_events(all_events_callback done) override {
    ++calls_;
    inner_.all_events(std::move(done));
  }
  void event_changes(uint64_t from, event_changes_callback done) override {
    ++calls_;
    inner_.event_changes(from, std::move(done));
  }
  watch_handle watch(resource_kind kind, list_options options, uint64_t resource_version,
                     std::shared_ptr<watch_sink> sink) override {
    ++calls_;
    return inner_.watch(kind, std::move(options), resource_version, std::move(sink));
  }
  bool ready() const override {
    ++calls_;
    return inner_.ready();
  }
  // Not counted: /healthz asks it, and the smuggling tests count what requests reached.
  std::string failure() const override { return inner_.failure(); }
  std::string metrics_text() const override {
    ++calls_;
    return inner_.metrics_text();
  }

  /// Calls so far, of every kind.
  int calls() const { return calls_.load(); }

 private:
  service& inner_;
  mutable std::atomic<int> calls_{0};
};

struct running_server {
  std::unique_ptr<api::testing::fake_service> svc;
  std::unique_ptr<counting_service> counted;  // Over svc; the server calls this one.
  std::unique_ptr<server> srv;
  uint16_t port() const { return srv->port(); }
  /// Calls the server made to the service so far.
  int service_calls() const { return counted->calls(); }
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
  r.counted = std::make_unique<counting_service>(*r.svc);
  auto s = server::start(*r.counted, std::move(options));
  if (!s.ok()) {
    ADD_FAILURE() << s.error().to_string();
    return r;
  }
  r.srv = std::move(*s);
  return r;
}

} // namespace phalanx::api::test
