#pragma once

// List and watch one collection of the apiserver, as client-go's Reflector does, on a thread of
// its own, and hand what it sees to a sink the caller implements (the informer cache of the
// Kubernetes world, a test's recorder).
//
// The cycle:
//   1. List, paginated: `?limit=page_size`, then `&continue=TOKEN` until no token is left, all
//      pages at the list's one resourceVersion. A 410 on a later page (the continue token outlived
//      etcd's compaction) restarts the list from the first page. The pages together are one
//      on_list(): the sink replaces its view with it.
//   2. Watch from the list's resourceVersion: `?watch=1&allowWatchBookmarks=true&resourceVersion=RV
//      &timeoutSeconds=T`, T drawn uniformly from [min_watch_timeout, 2 x min_watch_timeout) as
//      client-go draws it, so that a fleet of watchers does not reconnect in step. Every event and
//      BOOKMARK moves the resourceVersion forward.
//   3. When the stream ends (T passed, or the apiserver closed it), watch again from the last
//      resourceVersion seen, at once: no list. When it breaks, the same after a backoff.
//   4. 410 Gone (an HTTP 410 on opening, or an ERROR event with code 410: the resourceVersion is
//      older than the apiserver's watch cache window or etcd's compaction) -> back to 1.
// Starting from a checkpoint (options.resume_from) skips the first list: it watches from there,
// and lists only if that gives 410.
//
// Errors (cannot connect, 5xx, 403, a malformed event) go to on_error() and are retried after an
// exponential backoff with full jitter: the n-th consecutive failure waits a uniform time in
// [0, min(max_backoff, initial_backoff x 2^n)]; a complete list or a watch that ran until its
// clean end resets it. client-go uses 800 ms to 30 s; we start at 200 ms because a scheduler
// that lost its watch is blind, and 30 s caps the load a thousand reconnecting clients put on a
// recovering apiserver.
//
// A watch that shows nothing (no event, no bookmark) for T + 30 s is taken as broken: the
// apiserver ends every watch after T, so silence beyond that is a dead connection. A watch that
// ends cleanly within 1 s with nothing in it counts as a failure too (client-go's "very short
// watch"), so an apiserver that closes streams at once is not hammered.
//
// Thread model: start() runs the cycle on a std::thread owned by the reflector. The sink is
// called on that thread only, one call at a time, in the order of the stream. The accessors are
// thread-safe. stop() (and the destructor) ends the thread: a watch is read in slices of
// `read_slice`, so a stop is noticed within about that time, but a list page or a watch opening
// in flight is not interrupted (it ends within the client's timeout).

#include "k8s/client.hpp"

#include "scheduler/random.hpp"
#include "scheduler/result.hpp"

#include <boost/json/value.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace phalanx::k8s {

/// The kind of a watch event.
enum class event_type { added, modified, deleted };
std::string_view to_string(event_type t) noexcept;

/// What a reflector delivers. Called on the reflector's thread, never concurrently for one
/// reflector; a call that blocks holds the reflector up (and the apiserver ends a watch whose
/// client does not read).
class reflector_sink {
 public:
  virtual ~reflector_sink() = default;

  /// A complete list (the first, or a relist after 410): every object of the collection at
  /// `resource_version`, each with kind and apiVersion set (the apiserver leaves them out of list
  /// items). The sink replaces its view: what it holds and the list lacks was deleted.
  virtual void on_list(std::vector<boost::json::value> items,
                       const std::string& resource_version) = 0;

  /// One change, in the stream's order. `object` is the object after the change (for deleted,
  /// its last state); `resource_version` is its metadata.resourceVersion.
  virtual void on_event(event_type type, boost::json::value object,
                        const std::string& resource_version) = 0;

  /// The collection has reached `resource_version` with nothing for this watch (a selector may
  /// filter every change out): the resourceVersion to checkpoint.
  virtual void on_bookmark(const std::string& resource_version) = 0;

  /// Something failed; informational, the reflector recovers by itself. Default: ignored.
  virtual void on_error(const status& error) { error.permit_unchecked(); }
};

struct reflector_options {
  /// The collection: "/api/v1/pods", "/api/v1/namespaces/NS/configmaps",
  /// "/apis/scheduling.volcano.sh/v1beta1/podgroups". No query.
  /// Default: empty (required).
  std::string path;

  /// The kind and apiVersion written into list items ("Pod", "v1"; "PodGroup",
  /// "scheduling.volcano.sh/v1beta1"), so each item decodes on its own (api::decode_object).
  /// Default: empty (required).
  std::string kind;
  std::string api_version;

  /// labelSelector / fieldSelector of the list and the watch ("app=web", "spec.nodeName=").
  /// Default: empty (everything).
  std::string label_selector;
  std::string field_selector;

  /// Objects per list page (`limit`). client-go's default page size.
  /// Default: 500.
  int page_size = 500;

  /// A resourceVersion to watch from without listing first (a checkpoint). If the apiserver no
  /// longer has it (410), the reflector lists.
  /// Default: empty (list first).
  std::string resume_from;

  /// Watches ask the apiserver to end them after a time drawn uniformly from
  /// [min_watch_timeout, 2 x min_watch_timeout): client-go's minWatchTimeout.
  /// Default: 5 min.
  std::chrono::seconds min_watch_timeout{300};

  /// The backoff after a failure (see the file comment).
  /// Default: 200 ms and 30 s.
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{30000};

  /// How long one read of the watch blocks: the latency of stop().
  /// Default: 100 ms.
  std::chrono::milliseconds read_slice{100};

  /// Seeds the jitter of watch timeouts and backoffs. 0: a random seed.
  /// Default: 0.
  uint64_t seed = 0;
};

/// Counters since start(); each is read atomically on its own.
struct reflector_counters {
  /// Complete lists handed to on_list (the first included).
  uint64_t lists = 0;
  /// Of those, lists started because of a 410 (watch or continue token).
  uint64_t relists_after_410 = 0;
  /// Watches opened after the first one (stream ended, broke, or relist).
  uint64_t watch_restarts = 0;
  /// Events handed to on_event, and bookmarks to on_bookmark.
  uint64_t events = 0;
  uint64_t bookmarks = 0;
  /// Failures handed to on_error.
  uint64_t errors = 0;
};

class reflector {
 public:
  /// Checks the options. Errors: invalid_argument naming the option (path, kind, api_version,
  /// page_size, min_watch_timeout, backoffs, read_slice). `c` and `sink` must outlive the
  /// reflector.
  static result<std::unique_ptr<reflector>> create(client& c, reflector_options options,
                                                   reflector_sink& sink);

  /// Stops the thread (stop()).
  ~reflector();
  reflector(const reflector&) = delete;
  reflector& operator=(const reflector&) = delete;

  /// Starts the thread. Calling it again does nothing.
  void start();

  /// Ends the thread and joins it; no sink call happens after it returns. Idempotent. Must not be
  /// called from the sink (it would wait for itself); a call on the reflector's own thread only
  /// asks it to stop.
  void stop();

  /// True once the sink holds the whole collection: after the first complete list, or, when
  /// resuming, once the first watch opened without 410 (the first event, or a read slice that
  /// passed without an error). Stays true afterwards.
  bool synced() const;

  /// The newest resourceVersion seen (list, event or bookmark): where a restart would resume.
  std::string last_resource_version() const;

  reflector_counters counters() const;

  const reflector_options& options() const { return options_; }

 private:
  reflector(client& c, reflector_options options, reflector_sink& sink);

  enum class watch_end { clean, expired, failed, stopped };

  void run();
  status list_all(bool after_410);
  watch_end watch_from(const std::string& rv, bool resuming);
  watch_end handle_line(const std::string& line, bool& synced_now);
  void report(const status& error);
  void set_resource_version(const std::string& rv);
  bool sleep_for(std::chrono::milliseconds d);  // False when stopped.
  std::chrono::milliseconds next_backoff();
  std::string selectors() const;

  client& client_;
  const reflector_options options_;
  reflector_sink& sink_;

  std::thread thread_;
  std::atomic<bool> started_{false};
  std::atomic<bool> stopping_{false};
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;

  mutable std::mutex rv_mutex_;
  std::string rv_;
  std::atomic<bool> synced_{false};

  // Owned by the thread.
  scheduler::rng rng_;
  int failures_ = 0;
  bool first_watch_ = true;

  std::atomic<uint64_t> lists_{0};
  std::atomic<uint64_t> relists_after_410_{0};
  std::atomic<uint64_t> watch_restarts_{0};
  std::atomic<uint64_t> events_{0};
  std::atomic<uint64_t> bookmarks_{0};
  std::atomic<uint64_t> errors_{0};
};

/// `s` percent-encoded for a URL query value (RFC 3986 unreserved characters kept).
std::string query_escape(std::string_view s);

} // namespace phalanx::k8s
