#pragma once

// Where the Kubernetes apiserver is and how to authenticate to it: a kubeconfig file (the one
// kubectl reads) or the in-cluster ServiceAccount mount. Both produce a connection_config, which
// k8s::client (client.hpp) turns into connections.
//
// Supported authentication: bearer tokens, inline (`token`) or in a file (`tokenFile`, re-read
// when it changes, as the kubelet rotates projected ServiceAccount tokens). Client certificates,
// exec plugins, auth providers and basic auth are refused with an error that names the user:
// api::http_client has no client certificate support, and a scheduler Deployment runs with a
// ServiceAccount token.
//
// Thread-safety: every function here is a pure function of its arguments and the files it reads.

#include "scheduler/result.hpp"

#include <chrono>
#include <string>

namespace phalanx::k8s {

/// How to reach one apiserver. Defaults follow client-go's where it has one.
struct connection_config {
  /// The apiserver's URL: "https://HOST:PORT" (http:// is accepted for tests). No path prefix.
  /// Default: empty (required).
  std::string server;

  /// A PEM file of CA certificates to trust for the server's certificate.
  /// Default: empty: ca_pem, else the system's trust store.
  std::string ca_file;

  /// PEM CA certificates given inline (kubeconfig certificate-authority-data, decoded). Used when
  /// ca_file is empty; the client writes them to a private temporary file (mode 0600) that lives
  /// as long as the client, since api::http_client reads its CA from a file.
  /// Default: empty.
  std::string ca_pem;

  /// Skip verification of the server's certificate (kubeconfig insecure-skip-tls-verify). Only
  /// for tests; cannot be combined with a CA, as kubectl refuses it too.
  /// Default: false.
  bool insecure_skip_verify = false;

  /// A bearer token. Ignored when token_file is set.
  /// Default: empty (no Authorization header).
  std::string token;

  /// A file holding the bearer token (surrounding whitespace is trimmed). Re-read whenever its
  /// inode, size or modification time changes, and after any 401 answer: the kubelet replaces a
  /// projected ServiceAccount token before it expires. Wins over `token`.
  /// Default: empty.
  std::string token_file;

  /// Requests per second the client's rate limiter lets through on average; <= 0 turns the
  /// limiter off. client-go's default is 5; 50 is kube-scheduler's (--kube-api-qps).
  /// Default: 50.
  double qps = 50;

  /// How many requests may go at once after a quiet spell (the token bucket's size).
  /// kube-scheduler's --kube-api-burst. Values below 1 count as 1.
  /// Default: 100.
  int burst = 100;

  /// Keep-alive connections in the client's pool: at most this many requests are in flight at
  /// once; more callers wait for a free connection. Watches use connections of their own.
  /// Default: 4.
  int connections = 4;

  /// Connecting, the TLS handshake and each request's exchange must each finish within this.
  /// client-go has no default timeout; kube-scheduler's leader election uses its renew deadline.
  /// Default: 30 s.
  std::chrono::milliseconds timeout{30000};

  /// Sent as User-Agent; the apiserver's audit log and managedFields name it.
  /// Default: "phalanxd".
  std::string user_agent = "phalanxd";

  /// The namespace of the kubeconfig context, or of the in-cluster ServiceAccount: where a
  /// caller puts its Lease unless told otherwise. Not used by the client itself.
  /// Default: "default".
  std::string default_namespace = "default";
};

/// Reads a kubeconfig file (YAML): the context named `context`, or `current-context` when
/// `context` is empty; its cluster's server, certificate-authority (a path, relative to the
/// kubeconfig's directory as kubectl resolves it) or certificate-authority-data (base64 PEM),
/// insecure-skip-tls-verify; its user's token or tokenFile; its namespace. Limits and rate
/// settings keep their defaults.
///
/// Errors (each names the file and the field, e.g. `kubeconfig /etc/k.yaml: users["admin"].user:
/// ...`): not_found when the file, the context, its cluster or its user is missing;
/// invalid_argument when the YAML is malformed, a field has the wrong type, the server URL is
/// not http(s)://HOST[:PORT], the CA data is not base64, or the user authenticates by client
/// certificate, exec plugin, auth provider or username/password (not supported).
result<connection_config> load_kubeconfig(const std::string& path, const std::string& context = "");

/// Where a pod finds its ServiceAccount, as client-go's rest.InClusterConfig reads it. The
/// fields exist so tests can point them elsewhere.
struct in_cluster_options {
  /// The apiserver's host. Empty: the environment variable KUBERNETES_SERVICE_HOST.
  /// Default: empty.
  std::string service_host;
  /// The apiserver's port. Empty: the environment variable KUBERNETES_SERVICE_PORT.
  /// Default: empty.
  std::string service_port;
  /// Default: "/var/run/secrets/kubernetes.io/serviceaccount/token".
  std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  /// Default: "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt".
  std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  /// Optional: when missing, the namespace is "default".
  /// Default: "/var/run/secrets/kubernetes.io/serviceaccount/namespace".
  std::string namespace_file = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
};

/// The config of a pod's ServiceAccount: server https://HOST:PORT (an IPv6 host in brackets),
/// token_file and ca_file as given (the token is re-read as it rotates), default_namespace from
/// the namespace file.
/// Errors: failed_precondition when the host or port is unknown (not running in a cluster);
/// not_found when the token or CA file cannot be read (each error names the variable or file).
result<connection_config> in_cluster_config(const in_cluster_options& options = {});

} // namespace phalanx::k8s
