#pragma once

// A set of ids found by the keys they stand for, without keeping the keys: the registry finds a
// pod by "<ns>/<name>" and a PodGroup's gang by its key this way, where the key's text already
// lives in the object the id names.
//
// An open-addressing table (linear probing) of 8-byte slots. A slot holds the id (48 bits) and
// the top 16 bits of its key's hash, so a probe compares tags before it asks whether a key
// matches; a node-based set of ids cost a 24-byte node (next pointer, id, cached hash) and a
// bucket, about 31 bytes per id against 11-16 here. Erasing leaves a tombstone, which an insert
// reuses; a rehash, the only time the table asks for the hash of an id's key, rebuilds at load
// 1/2 or below, so it comes at most once per capacity/4 changes. A table emptied to 1/16 of its
// slots shrinks.
//
// Ops gives the keys' hashes and equality:
//   std::size_t hash(const Key&) const;     the hash of a key;
//   std::size_t hash_of(uint64_t id) const; the same hash, of the key id stands for;
//   bool matches(const Key&, uint64_t id) const.
// The object behind an id must stay readable while the id is in the table (hash_of at a
// rehash, matches at a probe): erase an id before the object it names.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace phalanx::scheduler {

template <class Key, class Ops>
class id_index {
 public:
  /// Ids must be in [1, max_id]: 2^48 - 1, which a counter of a million ids a second reaches in
  /// eight years.
  static constexpr uint64_t max_id = (uint64_t{1} << 48) - 1;

  explicit id_index(Ops ops = {}) : ops_(std::move(ops)) {}

  std::size_t size() const noexcept { return live_; }
  bool empty() const noexcept { return live_ == 0; }
  /// Slots held (8 bytes each).
  std::size_t capacity() const noexcept { return slots_.size(); }

  /// The id standing for `key`; 0 when none does.
  uint64_t find(const Key& key) const {
    if (live_ == 0)
      return 0;
    const auto h = ops_.hash(key);
    const auto tag = tag_of(h);
    for (std::size_t i = h & mask(), n = 0; n < slots_.size(); i = (i + 1) & mask(), ++n) {
      const uint64_t s = slots_[i];
      if (s == empty_slot)
        return 0;
      if (s != tombstone && (s & tag_mask) == tag && ops_.matches(key, s >> tag_bits))
        return s >> tag_bits;
    }
    return 0;
  }
  bool contains(const Key& key) const { return find(key) != 0; }

  /// Makes `id` the one standing for `key`, replacing the id that stood for it. Throws
  /// std::out_of_range for an id outside [1, max_id].
  void insert(const Key& key, uint64_t id) {
    if (id == 0 || id > max_id)
      throw std::out_of_range("id_index: id outside [1, 2^48 - 1]");
    if (used_ + 1 > slots_.size() / 4 * 3)
      rehash(live_ + 1);
    const auto h = ops_.hash(key);
    const auto tag = tag_of(h);
    std::size_t free_slot = slots_.size();
    std::size_t i = h & mask();
    for (;; i = (i + 1) & mask()) {
      const uint64_t s = slots_[i];
      if (s == empty_slot)
        break;
      if (s == tombstone) {
        if (free_slot == slots_.size())
          free_slot = i;
      } else if ((s & tag_mask) == tag && ops_.matches(key, s >> tag_bits)) {
        slots_[i] = (id << tag_bits) | tag;
        return;
      }
    }
    if (free_slot == slots_.size()) {
      free_slot = i;
      ++used_; // A tombstone reused was counted already.
    }
    slots_[free_slot] = (id << tag_bits) | tag;
    ++live_;
  }

  /// Removes `id`, found through the hash of its key (hash_of). False when it is not here.
  bool erase(uint64_t id) {
    if (live_ == 0 || id == 0 || id > max_id)
      return false;
    const auto h = ops_.hash_of(id);
    const uint64_t wanted = (id << tag_bits) | tag_of(h);
    for (std::size_t i = h & mask(), n = 0; n < slots_.size(); i = (i + 1) & mask(), ++n) {
      const uint64_t s = slots_[i];
      if (s == empty_slot)
        return false;
      if (s == wanted) {
        slots_[i] = tombstone;
        --live_;
        if (live_ == 0)
          clear(); // An emptied table gives its room back,
        else if (slots_.size() > 64 && live_ < slots_.size() / 16)
          rehash(live_); // and one mostly emptied most of it.
        return true;
      }
    }
    return false;
  }

  /// Room for n ids without a rehash (at load up to 3/4, where a rehash leaves 1/2).
  void reserve(std::size_t n) {
    if (n > slots_.size() / 4 * 3)
      rehash((n * 2 + 2) / 3);
  }

  void clear() noexcept {
    std::vector<uint64_t>().swap(slots_);
    live_ = used_ = 0;
  }

 private:
  static constexpr int tag_bits = 16;
  static constexpr uint64_t tag_mask = (uint64_t{1} << tag_bits) - 1;
  static constexpr uint64_t empty_slot = 0;
  // Id 0 with tag 1: no id is 0, so no live slot looks like it.
  static constexpr uint64_t tombstone = 1;

  static uint64_t tag_of(std::size_t hash) noexcept {
    return static_cast<uint64_t>(hash) >> (64 - tag_bits);
  }
  std::size_t mask() const noexcept { return slots_.size() - 1; }

  // Rebuilds for `wanted` ids at load at most 1/2, dropping tombstones.
  void rehash(std::size_t wanted) {
    std::size_t capacity = std::bit_ceil(std::max<std::size_t>(16, wanted * 2));
    std::vector<uint64_t> old(capacity, empty_slot);
    old.swap(slots_);
    used_ = live_;
    const std::size_t m = mask();
    for (uint64_t s : old) {
      if (s == empty_slot || s == tombstone)
        continue;
      std::size_t i = ops_.hash_of(s >> tag_bits) & m;
      while (slots_[i] != empty_slot)
        i = (i + 1) & m;
      slots_[i] = s;
    }
  }

  Ops ops_;
  std::vector<uint64_t> slots_; // Empty, or a power of two in size.
  std::size_t live_ = 0;        // Ids held.
  std::size_t used_ = 0;        // Slots not empty: ids and tombstones.
};

} // namespace phalanx::scheduler
