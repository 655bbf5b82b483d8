#pragma once

// A real Kubernetes control plane (etcd 3.6 + kube-apiserver 1.37, from
// k8s/testing/control-plane.sh) for the tests of this module and the actors' Kubernetes-mode
// tests. One per test process, started on first use in a fresh temporary directory and stopped
// (and the directory removed) when the process exits; a watchdog process stops it too if the
// test process dies without running its destructors (a crash, a ctest timeout).
//
// The binaries are not built here: a build takes 11-15 min. If they are missing, shared()
// throws with what to run (`make k8s-control-plane`), so every test that needs the control
// plane fails loudly; nothing is skipped.
//
// The apiserver differs from production in one way, on purpose: ConfigMaps have no watch cache
// (--watch-cache-sizes=configmaps#0), so their lists and watches are served by etcd and
// compact_etcd() makes their old resourceVersions and continue tokens answer 410 at once, as
// they do on a real cluster after its periodic compaction or an apiserver restart. Every other
// resource is served by the watch cache as in production (bookmarks, the cache's own 410s after
// restart_apiserver()). Extra flags from $PHALANX_APISERVER_FLAGS are passed on.
//
// Thread-safety: shared() and every const accessor are thread-safe; the calls that talk to the
// apiserver are as thread-safe as k8s::client; restart_apiserver() must not run concurrently with
// anything else.

#include "k8s/client.hpp"
#include "k8s/config.hpp"

#include "scheduler/result.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace phalanx::k8s::testing {

class control_plane {
 public:
  /// The process's control plane, started on the first call (about 4 s). Throws
  /// std::runtime_error (the same message on every call) when it cannot start.
  static control_plane& shared();

  /// Stops etcd and the apiserver and removes the directory.
  ~control_plane();
  control_plane(const control_plane&) = delete;
  control_plane& operator=(const control_plane&) = delete;

  /// The state directory (logs: kube-apiserver.log, etcd.log).
  const std::string& dir() const { return dir_; }
  /// "https://127.0.0.1:PORT". Changes after restart_apiserver() if the old port was not free.
  std::string server() const;
  /// The admin's connection (group system:masters): server, CA file, token; rate limiter off.
  connection_config admin_config() const;
  /// A kubeconfig for the admin (current-context phalanx-test, CA inline).
  std::string kubeconfig_path() const;
  std::string ca_file() const;
  std::string admin_token() const;
  /// A client with admin_config(), shared by the tests. A restart_apiserver() makes a new one;
  /// references taken before stay valid but talk to the old address.
  client& admin();

  /// "http://127.0.0.1:PORT" of etcd's client URL (its v3 JSON gateway answers there).
  std::string etcd_endpoint() const;

  /// A token for ServiceAccount `ns`/`name` (created if missing), from the TokenRequest API, valid
  /// for a day. The namespace must exist.
  result<std::string> service_account_token(const std::string& ns, const std::string& name);

  /// Creates the namespace; already existing is fine.
  status create_namespace(const std::string& name);

  /// Creates Node `name`, then sets its status through the status subresource: capacity and
  /// allocatable {cpu, memory, pods} and a Ready=True condition (no kubelet will).
  status create_node(const std::string& name, const std::string& cpu, const std::string& memory,
                     int pods = 110, const std::map<std::string, std::string>& labels = {});

  /// Compacts etcd at its current revision (physical: done when the call returns): every older
  /// resourceVersion is gone from etcd. Returns that revision. Uses etcd's gRPC gateway:
  /// POST /v3/kv/range for the revision, POST /v3/kv/compaction.
  result<int64_t> compact_etcd();

  /// Stops and starts etcd and the apiserver (about 8-10 s), keeping the data: the apiserver's
  /// watch caches start empty at the current revision, so older resourceVersions of cached
  /// resources answer 410.
  status restart_apiserver();

 private:
  control_plane();
  void start();
  void read_env();

  std::string source_dir_;
  std::string bin_;
  std::string dir_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> env_;
  std::unique_ptr<client> admin_;
  std::vector<std::unique_ptr<client>> retired_;
};

} // namespace phalanx::k8s::testing
