#include "scheduler/model.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <unordered_set>

namespace phalanx::scheduler {

// ---------------------------------------------------------------------------------------------
// label_set

namespace {

// Label and annotation keys repeat across objects (every pod of a Volcano job carries the same
// dozen), so a block points at its keys in this process-wide table instead of holding their
// characters: most of a pod's label bytes were keys. Keys are never removed. The table takes at
// most `max_keys` keys of at most `max_key_size` bytes (at most ~10 MB however hostile the
// keys); a key beyond either is kept in the block itself.
//
// Thread-safe. Interning locks; reading a key needs nothing: its characters are written before
// interning returns, and a pointer to them reaches another thread only inside a block, whose
// publication (a message, a reference count) orders the two.
class key_table {
 public:
  static constexpr std::size_t max_keys = std::size_t{1} << 16;
  static constexpr std::size_t max_key_size = 128;

  static key_table& instance() {
    static key_table* table = new key_table; // Never destroyed: blocks outlive static destructors.
    return *table;
  }

  /// The table's copy of `key`, or null when it takes no more.
  const char* intern(std::string_view key) {
    if (key.size() > max_key_size)
      return nullptr;
    std::lock_guard lock(mu_);
    if (auto i = keys_.find(key); i != keys_.end())
      return i->data();
    if (keys_.size() == max_keys)
      return nullptr;
    std::string_view stored(storage_.emplace_back(key));
    keys_.insert(stored);
    return stored.data();
  }

 private:
  std::mutex mu_;
  std::unordered_set<std::string_view> keys_; // Views of `storage_`.
  std::deque<std::string> storage_;           // Elements never move.
};

// A slot's key: for an interned key its characters' address (user-space addresses fit in 47
// bits) shifted over its size (at most 128, in 16 bits); for a key kept in the block, the top
// bit set over its size. So a key read is one load from the slot and one from the characters,
// as when every key was inline.
constexpr unsigned key_size_bits = 16;
constexpr uint64_t key_size_mask = (uint64_t{1} << key_size_bits) - 1;
constexpr uint64_t inline_key = uint64_t{1} << 63;

uint64_t interned_code(const char* chars, std::size_t size) noexcept {
  return (reinterpret_cast<uint64_t>(chars) << key_size_bits) | size;
}

// key_table::intern behind a small per-thread cache: the same few keys are interned over and
// over (each pod's labels), and the cache answers without the lock. 0 when not interned.
uint64_t intern_key(std::string_view key) {
  thread_local std::array<std::string_view, 64> cache{}; // The table's copies.
  auto& c = cache[std::hash<std::string_view>{}(key) % cache.size()];
  if (c.data() != nullptr && c == key)
    return interned_code(c.data(), c.size());
  const char* chars = key_table::instance().intern(key);
  if (chars == nullptr || (reinterpret_cast<uint64_t>(chars) >> 47) != 0)
    return 0;
  c = {chars, key.size()};
  return interned_code(chars, key.size());
}

} // namespace

// The block: this header, then `count` slots, then the characters of the values and of the keys
// not in the key table (each such key right before its value). Sizes are 32-bit: Kubernetes
// caps a set of annotations at 256 KiB.
//
// Or a delta: a set that differs from a shared full block (its base) in one pair, held as that
// pair and a reference to the base. Every pod of a job task carries the task's labels and
// annotations plus its own index, so a pod's sets cost a small delta each instead of a copy of
// the dozen pairs. A delta's base is always a full block (one level: a change to a delta builds
// a full block, unless it only changes the delta's own pair).
//
// A delta is this header, its base, then, when it adds its pair rather than replacing one of
// the base's, the pair's key code; then the characters: the added pair's key when inline, and
// the value (text_size in all). A replacing delta's key is the base's key at its position, so it
// keeps no key at all: with a value of up to 8 characters it is 32 bytes, a jemalloc class (a
// restored job's pods each hold two, their labels' and annotations' task index, replacing the
// index of the set built before them).
struct alignas(8) label_set::block {
  struct slot {
    uint64_t key;        // Interned: address << key_size_bits | size; else inline_key | size.
    uint32_t offset;     // Of the value in the characters; of the key when it is inline.
    uint32_t value_size;
  };
  struct delta_part {
    block* base; // A full block; the delta holds one reference to it.
  };
  std::atomic<uint32_t> refs{1};
  uint32_t count = 0;    // Pairs in the set (for a delta, merged with its base).
  uint32_t text_size = 0;
  // 0 for a full block. A delta (a delta_part follows the header instead of slots) keeps here
  // 1 | replaces << 1 | at << 2: `at` is its pair's index in the delta's (merged) order,
  // `replaces` 1 when the pair replaces the base's pair `at` (0: it goes before that pair). In
  // the header, so that a delta's own part is its base and, only when it adds a pair, that
  // pair's key code (above: a replacing delta is 32 bytes, an adding one 48).
  uint32_t delta = 0;
  static constexpr std::size_t max_delta_at = (std::size_t{1} << 30) - 1;
  uint32_t delta_at() const noexcept { return delta >> 2; }
  uint32_t delta_replaces() const noexcept { return (delta >> 1) & 1; }

  slot* slots() noexcept { return reinterpret_cast<slot*>(this + 1); }
  const slot* slots() const noexcept { return reinterpret_cast<const slot*>(this + 1); }
  delta_part& diff() noexcept { return *reinterpret_cast<delta_part*>(this + 1); }
  const delta_part& diff() const noexcept { return *reinterpret_cast<const delta_part*>(this + 1); }
  // A delta that adds its pair: that pair's key code, after the delta_part.
  static constexpr std::size_t added_key_bytes = sizeof(uint64_t);
  uint64_t added_key() const noexcept {
    uint64_t code;
    std::memcpy(&code, &diff() + 1, sizeof code);
    return code;
  }
  const char* text() const noexcept {
    return delta ? reinterpret_cast<const char*>(&diff() + 1) +
                       (delta_replaces() ? 0 : added_key_bytes)
                 : reinterpret_cast<const char*>(slots() + count);
  }
  char* text() noexcept { return const_cast<char*>(std::as_const(*this).text()); }
  static std::size_t delta_bytes(uint32_t replaces) noexcept {
    return sizeof(block) + sizeof(delta_part) + (replaces ? 0 : added_key_bytes);
  }
  std::size_t bytes() const noexcept {
    return (delta ? delta_bytes(delta_replaces()) : sizeof(block) + count * sizeof(slot)) +
           text_size;
  }

  static bool is_inline(uint64_t code) noexcept { return (code & inline_key) != 0; }
  static std::size_t inline_key_size(uint64_t code) noexcept {
    return is_inline(code) ? static_cast<std::size_t>(code & ~inline_key) : 0;
  }

  // A delta's pair `i` other than its own: the base's index of it.
  std::size_t base_index(std::size_t i) const noexcept {
    return i < delta_at() ? i : i - 1 + delta_replaces();
  }

  uint64_t key_code(std::size_t i) const noexcept {
    if (!delta)
      return slots()[i].key;
    if (i != delta_at())
      return diff().base->key_code(base_index(i));
    return delta_replaces() ? diff().base->key_code(i) : added_key();
  }
  std::string_view key(std::size_t i) const noexcept {
    if (delta && (i != delta_at() || delta_replaces()))
      return diff().base->key(i == delta_at() ? i : base_index(i));
    // A full block's pair, or an adding delta's own (its inline key starts its characters).
    const uint64_t code = delta ? added_key() : slots()[i].key;
    if (is_inline(code))
      return {text() + (delta ? 0 : slots()[i].offset), inline_key_size(code)};
    return {reinterpret_cast<const char*>(code >> key_size_bits),
            static_cast<std::size_t>(code & key_size_mask)};
  }
  std::string_view value(std::size_t i) const noexcept {
    if (!delta) {
      const auto& s = slots()[i];
      return {text() + s.offset + inline_key_size(s.key), s.value_size};
    }
    if (i != delta_at())
      return diff().base->value(base_index(i));
    const std::size_t key_chars = delta_replaces() ? 0 : inline_key_size(added_key());
    return {text() + key_chars, text_size - key_chars};
  }

  // In make()'s `known`: the pair's key is not coded yet.
  static constexpr uint64_t unknown_key = ~uint64_t{0};

  static uint64_t code_of(std::string_view k, uint64_t known) {
    if (known != unknown_key)
      return known;
    auto code = intern_key(k);
    return code != 0 ? code : inline_key | k.size();
  }

  // Pairs sorted by key with unique keys; null for none. `known`, when given, holds each pair's
  // slot.key where it is known already (copied from another block), else unknown_key: a change
  // to a set then interns only the key it adds.
  static block* make(const std::vector<label_set::entry>& sorted,
                     const std::vector<uint64_t>* known = nullptr) {
    if (sorted.empty())
      return nullptr;
    thread_local std::vector<uint64_t> keys; // Each pair's slot.key.
    keys.clear();
    std::size_t text = 0;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      const auto& [k, v] = sorted[i];
      uint64_t code = code_of(k, known ? (*known)[i] : unknown_key);
      keys.push_back(code);
      text += (is_inline(code) ? k.size() : 0) + v.size();
    }
    if (sorted.size() > UINT32_MAX || text > UINT32_MAX)
      throw std::length_error("label_set: more than 4 GiB of keys and values");
    static_assert(alignof(block) == alignof(slot) && sizeof(block) % alignof(slot) == 0);
    void* memory = ::operator new(sizeof(block) + sorted.size() * sizeof(slot) + text);
    auto* b = new (memory) block;
    b->count = static_cast<uint32_t>(sorted.size());
    b->text_size = static_cast<uint32_t>(text);
    char* out = b->text();
    uint32_t offset = 0;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      const auto& [k, v] = sorted[i];
      new (&b->slots()[i]) slot{keys[i], offset, static_cast<uint32_t>(v.size())};
      offset += copy_pair(out + offset, keys[i], k, v);
    }
    return b;
  }

  // A delta over the full block `base`: the pair (k, v) at `at`, replacing the base's pair
  // there (whose key is k) or not. `known` is k's code when known, else unknown_key; a
  // replacing delta needs none (its key is the base's).
  static block* make_delta(block* base, std::size_t at, uint32_t replaces, uint64_t known,
                           std::string_view k, std::string_view v) {
    assert(!replaces || (at < base->count && base->key(at) == k));
    const uint64_t code = replaces ? 0 : code_of(k, known);
    const std::size_t text = inline_key_size(code) + v.size();
    if (text > UINT32_MAX)
      throw std::length_error("label_set: more than 4 GiB of keys and values");
    if (at > max_delta_at)
      throw std::length_error("label_set: more than 2^30 pairs");
    static_assert(alignof(delta_part) == alignof(block) && sizeof(delta_part) % 8 == 0);
    void* memory = ::operator new(delta_bytes(replaces) + text);
    auto* b = new (memory) block;
    b->count = base->count + 1 - replaces;
    b->text_size = static_cast<uint32_t>(text);
    b->delta = 1 | replaces << 1 | static_cast<uint32_t>(at) << 2;
    base->refs.fetch_add(1, std::memory_order_relaxed);
    new (&b->diff()) delta_part{base};
    if (!replaces)
      std::memcpy(&b->diff() + 1, &code, sizeof code);
    copy_pair(b->text(), code, k, v); // A replacing delta's code is 0: not inline, value only.
    return b;
  }

  // Writes a pair's characters (its key too when inline) at `out`; returns how many.
  static uint32_t copy_pair(char* out, uint64_t code, std::string_view k, std::string_view v) {
    std::size_t n = 0;
    // An empty view may have a null data(), which memcpy must not be given even for 0 bytes.
    if (is_inline(code) && !k.empty()) {
      std::memcpy(out, k.data(), k.size());
      n += k.size();
    }
    if (!v.empty())
      std::memcpy(out + n, v.data(), v.size());
    return static_cast<uint32_t>(n + v.size());
  }

  static void release(block* b) noexcept {
    if (b != nullptr && b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      block* base = b->delta ? b->diff().base : nullptr;
      b->~block();
      ::operator delete(b);
      release(base);
    }
  }
};

label_set::label_set(std::initializer_list<entry> entries) {
  builder b;
  b.reserve(entries.size());
  for (const auto& [k, v] : entries)
    b.add(k, v);
  *this = b.build();
}

label_set::label_set(const label_set& other) noexcept : block_(other.block_) {
  if (block_ != nullptr)
    block_->refs.fetch_add(1, std::memory_order_relaxed);
}

label_set& label_set::operator=(const label_set& other) noexcept {
  if (other.block_ != nullptr)
    other.block_->refs.fetch_add(1, std::memory_order_relaxed);
  block::release(std::exchange(block_, other.block_));
  return *this;
}

label_set& label_set::operator=(label_set&& other) noexcept {
  if (this != &other)
    block::release(std::exchange(block_, std::exchange(other.block_, nullptr)));
  return *this;
}

label_set::~label_set() {
  block::release(block_);
}

std::size_t label_set::size() const noexcept {
  return block_ != nullptr ? block_->count : 0;
}

bool label_set::is_delta() const noexcept {
  return block_ != nullptr && block_->delta != 0;
}

std::size_t label_set::block_bytes() const noexcept {
  return block_ != nullptr ? block_->bytes() : 0;
}

label_set::entries_view label_set::entries() const noexcept {
  return {block_, size()};
}

label_set::entry label_set::entries_view::entry_at(const block* b, std::size_t i) noexcept {
  return {b->key(i), b->value(i)};
}

std::size_t label_set::lower_bound(std::string_view key) const noexcept {
  std::size_t lo = 0, hi = size();
  while (lo < hi) {
    auto mid = lo + (hi - lo) / 2;
    if (block_->key(mid) < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

std::optional<std::string_view> label_set::find(std::string_view key) const noexcept {
  auto i = lower_bound(key);
  if (i < size() && block_->key(i) == key)
    return block_->value(i);
  return std::nullopt;
}

bool label_set::has_key_with_prefix(std::string_view prefix) const noexcept {
  auto i = lower_bound(prefix);
  return i < size() && block_->key(i).starts_with(prefix);
}

// Changes build the new block from views of the old one in a scratch list kept per thread (the
// old block lives until the new one is built, so the views, even `key` and `value` pointing
// into it, stay valid). The pairs stay sorted and unique, so they go straight to a block without
// the builder's sort and duplicate passes (job expansion sets two keys on every pod), and the
// kept pairs' keys are copied rather than interned again.
void label_set::replace_range(std::size_t at, std::size_t removed, const entry* added) {
  thread_local std::vector<entry> pairs;
  thread_local std::vector<uint64_t> codes;
  pairs.clear();
  codes.clear();
  pairs.reserve(size() + 1);
  codes.reserve(size() + 1);
  auto keep = [&](std::size_t i) {
    pairs.emplace_back(block_->key(i), block_->value(i));
    codes.push_back(block_->key_code(i));
  };
  for (std::size_t i = 0; i < at; ++i)
    keep(i);
  if (added) {
    pairs.push_back(*added);
    codes.push_back(removed == 1 ? block_->key_code(at) : block::unknown_key);
  }
  for (std::size_t i = at + removed; i < size(); ++i)
    keep(i);
  *this = label_set(block::make(pairs, &codes));
}

void label_set::set(std::string_view key, std::string_view value) {
  auto at = lower_bound(key);
  bool present = at < size() && block_->key(at) == key;
  if (present && block_->value(at) == value)
    return; // Unchanged: keep sharing.
  const uint32_t replaces = present ? 1 : 0;
  if (block_ != nullptr && !block_->delta && block_->refs.load(std::memory_order_relaxed) > 1) {
    // Shared (a job task's pods are copies of its sets, each then given its index): only the
    // pair goes in a new block. A block this set alone holds is rebuilt below instead, since a
    // delta over it would keep it alive beside the delta.
    *this = label_set(block::make_delta(block_, at, replaces, block::unknown_key, key, value));
    return;
  }
  if (block_ != nullptr && block_->delta && present && at == block_->delta_at()) {
    // The delta's own pair changes: a new delta, same base.
    *this = label_set(block::make_delta(block_->diff().base, at, block_->delta_replaces(),
                                        block_->key_code(at), key, value));
    return;
  }
  const entry added{key, value};
  replace_range(at, replaces, &added);
}

bool label_set::erase(std::string_view key) {
  auto at = lower_bound(key);
  if (at == size() || block_->key(at) != key)
    return false;
  replace_range(at, 1, nullptr);
  return true;
}

bool operator==(const label_set& a, const label_set& b) noexcept {
  if (a.block_ == b.block_)
    return true;
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a.block_->key(i) != b.block_->key(i) || a.block_->value(i) != b.block_->value(i))
      return false;
  return true;
}

label_set::builder::builder(const label_set& start) {
  pairs_.reserve(start.size() + 1); // Room for the add that usually follows.
  for (auto e : start.entries())
    pairs_.push_back(e);
}

void label_set::builder::sort_unique() {
  // Stable, so of equal keys the last added stays last; keep that one. Decoders add in order,
  // and a short list is sorted in place (std::stable_sort takes a buffer from the heap).
  auto by_key = [](const entry& a, const entry& b) { return a.first < b.first; };
  if (!std::is_sorted(pairs_.begin(), pairs_.end(), by_key)) {
    if (pairs_.size() <= 32) {
      for (std::size_t i = 1; i < pairs_.size(); ++i)
        for (std::size_t j = i; j > 0 && by_key(pairs_[j], pairs_[j - 1]); --j)
          std::swap(pairs_[j], pairs_[j - 1]);
    } else {
      std::stable_sort(pairs_.begin(), pairs_.end(), by_key);
    }
  }
  std::size_t out = 0;
  for (std::size_t i = 0; i < pairs_.size(); ++i) {
    if (i + 1 < pairs_.size() && pairs_[i + 1].first == pairs_[i].first)
      continue;
    pairs_[out++] = pairs_[i];
  }
  pairs_.resize(out);
}

label_set label_set::builder::build() {
  sort_unique();
  label_set result(block::make(pairs_));
  pairs_.clear();
  return result;
}

label_set label_set::builder::build_sharing() {
  sort_unique();
  label_set result;
  if (const block* last = last_.block_; last != nullptr) {
    // The pairs against the last set built: the first that differs, then the rest must match
    // with that one replaced (same size) or inserted (one more).
    const std::size_t n = last->count;
    const std::size_t size = pairs_.size();
    std::size_t i = 0;
    while (i < n && i < size && pairs_[i].first == last->key(i) &&
           pairs_[i].second == last->value(i))
      ++i;
    const uint32_t replaces = size == n ? 1 : 0;
    bool one_apart = (size == n || size == n + 1) && i < size &&
                     (replaces == 0 || pairs_[i].first == last->key(i));
    for (std::size_t j = i + 1; one_apart && j < size; ++j) {
      const std::size_t k = j - 1 + replaces;
      one_apart = pairs_[j].first == last->key(k) && pairs_[j].second == last->value(k);
    }
    if (size == n && i == n)
      result = last_; // Equal: share.
    else if (one_apart)
      result = label_set(block::make_delta(last_.block_, i, replaces, block::unknown_key,
                                           pairs_[i].first, pairs_[i].second));
  }
  if (result.block_ == nullptr && !pairs_.empty()) {
    result = label_set(block::make(pairs_));
    last_ = result;
  }
  pairs_.clear();
  return result;
}

// ---------------------------------------------------------------------------------------------
// Enum names. Each table lists every value in declaration order; the tests walk them, so a new
// enumerator without a name fails a test instead of printing "unknown".

namespace {

template <class Enum, std::size_t N>
using name_table = std::array<std::pair<Enum, std::string_view>, N>;

template <class Enum, std::size_t N>
std::string_view name_of(const name_table<Enum, N>& table, Enum value) noexcept {
  for (const auto& [e, name] : table)
    if (e == value)
      return name;
  return "unknown";
}

template <class Enum, std::size_t N>
std::optional<Enum> value_of(const name_table<Enum, N>& table, std::string_view text) noexcept {
  for (const auto& [e, name] : table)
    if (name == text)
      return e;
  return std::nullopt;
}

constexpr name_table<taint_effect, 3> taint_effect_names{{
    {taint_effect::no_schedule, "NoSchedule"},
    {taint_effect::prefer_no_schedule, "PreferNoSchedule"},
    {taint_effect::no_execute, "NoExecute"},
}};

constexpr name_table<toleration_operator, 2> toleration_operator_names{{
    {toleration_operator::equal, "Equal"},
    {toleration_operator::exists, "Exists"},
}};

constexpr name_table<selector_operator, 6> selector_operator_names{{
    {selector_operator::in, "In"},
    {selector_operator::not_in, "NotIn"},
    {selector_operator::exists, "Exists"},
    {selector_operator::does_not_exist, "DoesNotExist"},
    {selector_operator::gt, "Gt"},
    {selector_operator::lt, "Lt"},
}};

constexpr name_table<pod_phase, 5> pod_phase_names{{
    {pod_phase::pending, "Pending"},
    {pod_phase::running, "Running"},
    {pod_phase::succeeded, "Succeeded"},
    {pod_phase::failed, "Failed"},
    {pod_phase::unknown, "Unknown"},
}};

constexpr name_table<pod_group_phase, 5> pod_group_phase_names{{
    {pod_group_phase::pending, "Pending"},
    {pod_group_phase::inqueue, "Inqueue"},
    {pod_group_phase::running, "Running"},
    {pod_group_phase::unknown, "Unknown"},
    {pod_group_phase::completed, "Completed"},
}};

constexpr name_table<queue_state, 3> queue_state_names{{
    {queue_state::open, "Open"},
    {queue_state::closed, "Closed"},
    {queue_state::closing, "Closing"},
}};

constexpr name_table<preemption_policy, 2> preemption_policy_names{{
    {preemption_policy::preempt_lower_priority, "PreemptLowerPriority"},
    {preemption_policy::never, "Never"},
}};

} // namespace

std::string_view to_string(taint_effect e) noexcept {
  return name_of(taint_effect_names, e);
}
std::optional<taint_effect> taint_effect_from_string(std::string_view text) noexcept {
  return value_of(taint_effect_names, text);
}

std::string_view to_string(toleration_operator op) noexcept {
  return name_of(toleration_operator_names, op);
}
std::optional<toleration_operator> toleration_operator_from_string(std::string_view text) noexcept {
  return value_of(toleration_operator_names, text);
}

std::string_view to_string(selector_operator op) noexcept {
  return name_of(selector_operator_names, op);
}
std::optional<selector_operator> selector_operator_from_string(std::string_view text) noexcept {
  return value_of(selector_operator_names, text);
}

std::string_view to_string(pod_phase p) noexcept {
  return name_of(pod_phase_names, p);
}
std::optional<pod_phase> pod_phase_from_string(std::string_view text) noexcept {
  return value_of(pod_phase_names, text);
}

std::string_view to_string(pod_group_phase p) noexcept {
  return name_of(pod_group_phase_names, p);
}
std::optional<pod_group_phase> pod_group_phase_from_string(std::string_view text) noexcept {
  return value_of(pod_group_phase_names, text);
}

std::string_view to_string(queue_state s) noexcept {
  return name_of(queue_state_names, s);
}
std::optional<queue_state> queue_state_from_string(std::string_view text) noexcept {
  return value_of(queue_state_names, text);
}

std::string_view to_string(preemption_policy p) noexcept {
  return name_of(preemption_policy_names, p);
}
std::optional<preemption_policy> preemption_policy_from_string(std::string_view text) noexcept {
  return value_of(preemption_policy_names, text);
}

const system_priority_class* find_system_priority_class(std::string_view name) noexcept {
  for (const auto& c : system_priority_classes)
    if (c.name == name)
      return &c;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Pods

resources effective_requests(const std::vector<container_resources>& containers,
                             const std::vector<container_resources>& init_containers,
                             const resources& overhead) {
  // Regular containers run together, so their requests add up; init containers run one at a
  // time before them, so only the largest matters (kube-scheduler's computePodResourceRequest).
  resources sum;
  for (const auto& c : containers)
    sum += c.requests;
  resources init_max;
  for (const auto& c : init_containers)
    init_max = resources::max(init_max, c.requests);
  resources out = resources::max(sum, init_max);
  out += overhead;
  out.pods = 1; // A pod occupies one pod slot whatever its containers declare.
  return out;
}

const placement_constraints& pod::placement() const noexcept {
  static const placement_constraints none;
  return constraints ? *constraints : none;
}

pod_runtime runtime_of(const pod& p) {
  return {p.phase, p.restart_count, p.node_name, p.start_time, p.finish_time,
          p.meta.resource_version};
}

void set_runtime(pod& p, const pod_runtime& r) {
  p.phase = r.phase;
  p.restart_count = r.restart_count;
  p.node_name = r.node_name;
  p.start_time = r.start_time;
  p.finish_time = r.finish_time;
  p.meta.resource_version = r.resource_version;
}

std::size_t hash_namespaced_name(std::string_view namespace_name, std::string_view name) noexcept {
  std::hash<std::string_view> hash;
  const std::size_t h = hash(namespace_name);
  return h ^ (hash(name) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

} // namespace phalanx::scheduler
