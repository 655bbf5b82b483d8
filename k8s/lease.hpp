#pragma once

// Leader election on a coordination.k8s.io/v1 Lease, by the rules of client-go's
// tools/leaderelection (kube-scheduler's and Volcano's), so that Phalanx and those can read each
// other's leases:
//   - The record is the Lease's spec: holderIdentity, leaseDurationSeconds, acquireTime,
//     renewTime (MicroTime, "2006-01-02T15:04:05.000000Z"), leaseTransitions.
//   - A candidate takes the lease when it is free (no holder: released), held by itself, or
//     expired. Expired is judged by the local steady clock only: the lease expires
//     leaseDurationSeconds after this process last saw the record change. The timestamps in the
//     record are never compared with the local clock (they come from another machine's clock);
//     only their change shows the holder is alive. So a new candidate waits one full lease
//     duration after it first sees a lease held by someone else, however old its renewTime.
//   - Every write is a PUT of the object read last, with its metadata.resourceVersion: two
//     candidates that both saw the lease expire cannot both win (the second gets 409 and reads
//     again). A missing Lease is created (POST; 409 AlreadyExists if another candidate won).
//   - The leader renews every retry_period. It stops leading when no renewal succeeded within
//     renew_deadline, or at once when a read shows another holder.
//   - On stop(), a leader releases (release_on_stop, client-go's ReleaseOnCancel): holderIdentity
//     "" and leaseDurationSeconds 1, so another candidate takes over at its next try instead of
//     after a lease duration.
//
// Invariant I6 (only the leader binds; a deposed leader binds nothing after its renew deadline)
// rests on leading_now(): it is computed from timestamps, not from a flag the thread sets, so it
// turns false at renew_deadline after the start of the last successful renewal even while the
// thread is stuck in a slow request. Measured from the start of the request that succeeded (not
// its end), because the apiserver may have written the record at any moment in between, and
// other candidates count the lease duration from when they see it. As lease_duration >
// renew_deadline, a deposed leader stops before another candidate can start, given clocks that
// run at the same rate (client-go's assumption).
//
// Thread model: start() runs the election on a std::thread owned by the elector, with a private
// client (one connection, never rate limited), so renewals never queue behind other traffic.
// The callbacks run on that thread, one at a time; on_stopped_leading may come later than
// leading_now() turned false, by at most one request timeout. The accessors are thread-safe and
// cheap (one atomic load for leading_now()).

#include "k8s/client.hpp"

#include "scheduler/random.hpp"
#include "scheduler/result.hpp"

#include <boost/json/object.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace phalanx::k8s {

/// The Lease's spec as leader election reads and writes it.
struct lease_record {
  std::string holder_identity;  // "" when released.
  int64_t lease_duration_seconds = 0;
  std::string acquire_time;  // MicroTime text, as read or written.
  std::string renew_time;
  int64_t lease_transitions = 0;
  friend bool operator==(const lease_record&, const lease_record&) = default;
};

/// `t` as a Kubernetes MicroTime: UTC, microseconds, "2006-01-02T15:04:05.000000Z" (the apiserver
/// refuses a Lease time without the six fraction digits).
std::string format_micro_time(std::chrono::system_clock::time_point t);

/// What a candidate knows of a lease held by others: the record and the local steady time it
/// last changed. The expiry rule of the file comment, as a pure class for tests.
///
/// Not thread-safe.
class lease_observation {
 public:
  using steady = std::chrono::steady_clock;

  /// Records `r` as read at `now`; the expiry clock restarts only if `r` differs from the last
  /// record observed (or nothing was observed yet).
  void observe(const lease_record& r, steady::time_point now);

  /// The last record observed.
  const lease_record& record() const { return record_; }
  /// When it last changed.
  steady::time_point changed_at() const { return changed_at_; }
  bool observed() const { return observed_; }

  /// The record's holder has not renewed for its lease duration, as this process counts it.
  bool expired(steady::time_point now) const;

  /// `identity` may write itself as holder: nothing observed yet, no holder, itself, or expired.
  bool may_acquire(const std::string& identity, steady::time_point now) const;

 private:
  lease_record record_;
  steady::time_point changed_at_{};
  bool observed_ = false;
};

struct lease_options {
  /// The Lease's namespace and name. Default: empty (required).
  std::string namespace_name;
  std::string name;

  /// Who we are, written as holderIdentity: unique per process (the pod's name, plus a random
  /// suffix if it may run twice). Default: empty (required).
  std::string identity;

  /// How long others wait, after the record last changed, before taking the lease. Whole
  /// seconds (leaseDurationSeconds). client-go's and kube-scheduler's default.
  /// Default: 15 s.
  std::chrono::milliseconds lease_duration{15000};

  /// The leader stops leading when no renewal succeeded for this long. Must be below
  /// lease_duration (the margin absorbs clock rate differences) and above 1.2 x retry_period.
  /// Default: 10 s.
  std::chrono::milliseconds renew_deadline{10000};

  /// Between tries: renewals while leading; tries to acquire (with up to 1.2 x jitter, as
  /// client-go) while not.
  /// Default: 2 s.
  std::chrono::milliseconds retry_period{2000};

  /// The private client's timeout for connecting, the handshake and each exchange.
  /// 0: renew_deadline / 3, so that one try cannot outlast the renew deadline by much.
  /// Default: 0.
  std::chrono::milliseconds request_timeout{0};

  /// On stop(), a leader releases the lease so another candidate takes it at once.
  /// Default: true.
  bool release_on_stop = true;

  /// Called on the elector's thread when this process starts / stops leading, and when the
  /// observed holder changes (its identity, "" when released; ourselves included).
  /// Default: none.
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string& identity)> on_new_leader;
  /// Called on the elector's thread when a try fails for another reason than the lease being
  /// held by someone else (what lease_counters::failures counts), with the error last_error()
  /// then returns: a 403 from RBAC says which rule is missing. Default: none.
  std::function<void(const status& error)> on_failure;

  /// Seeds the jitter of the candidate's retries. 0: a random seed. Default: 0.
  uint64_t seed = 0;
};

/// Counters since start(); each read atomically on its own.
struct lease_counters {
  /// Tries (each a GET, PUT or POST sequence), and those that wrote us as holder.
  uint64_t tries = 0;
  uint64_t successes = 0;
  /// Times this process started leading.
  uint64_t acquisitions = 0;
  /// Write conflicts (409) seen.
  uint64_t conflicts = 0;
  /// Tries that failed for another reason than the lease being held by someone else: the
  /// apiserver unreachable, an error status (403 when RBAC does not grant leases). See
  /// last_error().
  uint64_t failures = 0;
};

class lease_elector {
 public:
  using steady = std::chrono::steady_clock;

  /// Checks the options (invalid_argument naming the option: names and identity set,
  /// lease_duration >= 1 s and > renew_deadline > 1.2 x retry_period > 0) and makes the private
  /// client from `config` (client::create's errors).
  static result<std::unique_ptr<lease_elector>> create(const connection_config& config,
                                                       lease_options options);

  /// stop().
  ~lease_elector();
  lease_elector(const lease_elector&) = delete;
  lease_elector& operator=(const lease_elector&) = delete;

  /// Starts the election thread. Calling it again does nothing.
  void start();

  /// Stops the thread: a leader stops leading first (leading_now() false), then releases the
  /// lease if release_on_stop, then on_stopped_leading runs. Waits for a request in flight (at
  /// most the request timeout). Idempotent. Called on the elector's thread (from a callback) it
  /// only asks the thread to stop.
  void stop();

  /// True while this process may act as leader: it holds the lease and now is before
  /// valid_until(). Cheap; safe from any thread.
  bool leading_now() const;

  /// The start of the last successful renewal plus renew_deadline while leading; the steady
  /// clock's minimum when not leading.
  steady::time_point valid_until() const;

  /// The holder last observed ("" when free or not yet read).
  std::string observed_leader() const;

  lease_counters counters() const;

  /// Why the last failed try failed (ok if none failed yet): "GET /apis/coordination.k8s.io/...:
  /// HTTP 403 Forbidden: leases.coordination.k8s.io \"phalanx\" is forbidden: User ...".
  status last_error() const;

 private:
  lease_elector(std::unique_ptr<client> c, lease_options options);

  void run();
  // One try of client-go's tryAcquireOrRenew; true when we are the holder afterwards.
  bool try_acquire_or_renew();
  int write_lease(const lease_record& r, bool create);  // The HTTP status; 0: no answer.
  void release();
  void lose_leadership();
  void note_holder(const std::string& holder);
  void fail(status error);
  bool wait(std::chrono::milliseconds d);  // False when stopped.
  std::string lease_path(bool collection) const;
  request_spec read_request() const;  // GET of the Lease, bypassing the rate limiter.

  std::unique_ptr<client> client_;
  const lease_options options_;

  std::thread thread_;
  std::atomic<bool> started_{false};
  std::atomic<bool> stopping_{false};
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;

  // Nanoseconds since the steady clock's epoch; INT64_MIN when not leading.
  std::atomic<int64_t> valid_until_ns_;

  mutable std::mutex leader_mutex_;
  std::string observed_leader_;
  status last_error_;

  // Owned by the thread.
  bool leading_ = false;
  lease_observation observation_;
  boost::json::object lease_object_;  // The Lease as read or written last; empty if none.
  std::string reported_leader_;
  bool reported_any_ = false;
  scheduler::rng rng_;

  std::atomic<uint64_t> tries_{0};
  std::atomic<uint64_t> successes_{0};
  std::atomic<uint64_t> acquisitions_{0};
  std::atomic<uint64_t> conflicts_{0};
  std::atomic<uint64_t> failures_{0};
};

} // namespace phalanx::k8s
