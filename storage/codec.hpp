#pragma once

// Model <-> record codecs (storage/records.proto). The bytes produced here are the values of the
// store's column families; this header includes no protobuf header, so tests and tools can use it
// without seeing the generated code.
//
// Round trip: decode(encode(x)) equals x field for field, including null versus empty constraints
// and spec_json. Decoding validates what the model types promise (label keys sorted and unique,
// known enum values, extended resources named and non-zero) and fails with errc::corruption and a
// message naming the field, never with an exception or a crash.

#include "scheduler/model.hpp"
#include "scheduler/result.hpp"
#include "storage/store.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace phalanx::storage {

/// The version written into every record's `record_version` field, and the newest one read.
inline constexpr uint32_t record_version = 1;

/// The key of each kind of object: object_key(meta.namespace_name, meta.name).
std::string key_of(const scheduler::node& n);
std::string key_of(const queue_record& q);
std::string key_of(const pod_group_record& g);
std::string key_of(const scheduler::pod& p);
std::string key_of(const job_record& j);
std::string key_of(const scheduler::priority_class& c);

/// Serialized records. Thread-safe (no shared state).
std::string encode(const scheduler::node& n);
std::string encode(const queue_record& q);
std::string encode(const pod_group_record& g);
std::string encode(const scheduler::pod& p);
std::string encode(const job_record& j);
std::string encode(const scheduler::priority_class& c);
/// The pod's record into `out`, replacing its contents: the buffer's capacity is reused.
void encode(const scheduler::pod& p, std::string& out);

/// The runtime state of a pod (phase, container restart count, node name, start and finish times,
/// resource version) as an update of its record: PodRecord bytes holding only those Pod fields.
/// Appended to the pod's record (the pods column family merges by concatenation), it overrides
/// them there, as protobuf merges a message that appears twice: decode(encode(p) +
/// encode_pod_state(runtime_of(q))) is p with q's state. A few dozen bytes instead of the whole
/// pod, for every binding, phase change and container restart. Records and updates written
/// before the restart count existed lack it and decode with 0.
std::string encode_pod_state(const scheduler::pod_runtime& state);
/// The same into `out`, replacing its contents (the buffer's capacity is reused).
void encode_pod_state(const scheduler::pod_runtime& state, std::string& out);
/// A state update that marks the pod deleted (Pod.deleted), for a pod stored as its job's
/// expansion: erasing its key would not do, as the job would make it again at the next start.
std::string encode_pod_tombstone(uint64_t resource_version);

class record_decoder;

namespace detail {
/// Pod records through the generated protobuf code instead of the wire decoder record_decoder
/// uses: a reference for tests (the two must agree on everything the fast one accepts).
result<scheduler::pod> reference_decode_pod(std::string_view bytes);
/// Pod records through the generated code: what encode(pod), which writes the wire format
/// directly, must equal byte for byte.
std::string reference_encode_pod(const scheduler::pod& p);
} // namespace detail

/// Decodes records. Reuses its parse buffers between calls and shares what repeats: pods (and job
/// task templates) whose constraints have the same bytes get one placement_constraints instance,
/// and equal spec_json texts one string, so the pods of one job task cost one copy of each.
///
/// Not thread-safe: use one decoder per thread. The shared instances outlive the decoder.
class record_decoder {
 public:
  record_decoder();
  ~record_decoder();
  record_decoder(record_decoder&&) noexcept;
  record_decoder& operator=(record_decoder&&) noexcept;
  record_decoder(const record_decoder&) = delete;
  record_decoder& operator=(const record_decoder&) = delete;

  /// Each fails with errc::corruption ("meta.labels: keys not sorted or repeated", "record_version
  /// 2 is newer than this build reads (1)", "not a valid NodeRecord").
  result<scheduler::node> decode_node(std::string_view bytes);
  result<queue_record> decode_queue(std::string_view bytes);
  result<pod_group_record> decode_pod_group(std::string_view bytes);
  result<scheduler::pod> decode_pod(std::string_view bytes);
  result<job_record> decode_job(std::string_view bytes);
  result<scheduler::priority_class> decode_priority_class(std::string_view bytes);

  /// The same, decoding into `out` (overwritten entirely; on failure left in an unspecified but
  /// valid state). Lets a loader fill pre-sized vectors in place.
  status decode(std::string_view bytes, scheduler::node& out);
  status decode(std::string_view bytes, queue_record& out);
  status decode(std::string_view bytes, pod_group_record& out);
  status decode(std::string_view bytes, scheduler::pod& out);
  status decode(std::string_view bytes, job_record& out);
  status decode(std::string_view bytes, scheduler::priority_class& out);

  /// A pod key's value made only of state updates, with no record before them: what the store
  /// holds for a pod that exists as its job's expansion. The update with the highest
  /// resource_version wins whole (on a tie, the later one), and `deleted` is set when that update
  /// is a tombstone (encode_pod_tombstone). Not "each field's last value", as in a record: a key
  /// outlives the pods named by it (a job deleted and created again under its name), and an
  /// update of an earlier pod written after a newer pod's must not undo the newer one's state.
  /// The runtime then keeps the state only if it is not older than the pod it finds for the key.
  status decode_pod_state(std::string_view bytes, scheduler::pod_runtime& out, bool& deleted);
  /// Whether a pod key's value is only state updates (decode_pod_state) rather than a record
  /// (decode): a record starts with its record_version, field 1; an update with its pod, field 2.
  static bool holds_only_pod_state(std::string_view bytes) noexcept;

  /// How many distinct constraints and spec_json instances this decoder handed out (spec_json:
  /// its pool may have let go of texts nothing else held any more).
  std::size_t distinct_constraints() const noexcept;
  std::size_t distinct_spec_json() const noexcept;

 private:
  friend result<scheduler::pod> detail::reference_decode_pod(std::string_view bytes);
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace phalanx::storage
