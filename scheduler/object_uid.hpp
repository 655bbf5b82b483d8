#pragma once

// An object's uid: 16 bytes in the object and nothing on the heap when it is a UUID.
//
// Every uid the API server, the registry (new_uid) and a job's expansion (derived_uid) make is a
// UUID in its canonical text, 36 characters: as a std::string or a shared_string that was a
// 48-byte heap block per pod beside the pointer or string in the pod. An object_uid keeps such
// a uid as its 128 bits. Any other text (a test's "u1", a user's uppercase UUID) is kept as it
// was given, in a shared_string's block, so a uid always reads back exactly as written.
//
// Which form a value has is told by the top two bits of its second word: a UUID of RFC 4122's
// variant (every one we see) has 10 there, while a block pointer, as every user-space address
// on the platforms we build for, has 00. Texts that are UUIDs of another variant stay text.
//
// Reads: str() (an owned string), text(buffer) (a view into the caller's buffer or the block),
// comparisons with any string type. Order is the text's order: for two UUIDs, the order of their
// bits (lowercase hex digits sort as their values).

#include "scheduler/shared_string.hpp"

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace phalanx::scheduler {

class object_uid {
 public:
  /// Room for the text of a UUID.
  using text_buffer = std::array<char, 36>;

  object_uid() noexcept = default;
  /// The UUID of `version` (4: random, 8: custom) made of these bits (first and last 8 bytes,
  /// big-endian), with its version and RFC 4122's variant written over the bits they take.
  static object_uid make_uuid(uint64_t high, uint64_t low, unsigned version) noexcept;
  // Implicit from text, as a std::string is: `p.meta.uid = "u1"` reads as it did.
  object_uid(std::string_view text); // NOLINT(google-explicit-constructor)
  object_uid(const std::string& text) : object_uid(std::string_view(text)) {} // NOLINT
  object_uid(const char* text) : object_uid(std::string_view(text)) {}        // NOLINT
  object_uid(const object_uid& other) noexcept;
  object_uid(object_uid&& other) noexcept : high_(other.high_), low_(other.low_) {
    other.high_ = other.low_ = 0;
  }
  object_uid& operator=(const object_uid& other) noexcept;
  object_uid& operator=(object_uid&& other) noexcept;
  ~object_uid() { release(); }

  bool empty() const noexcept { return high_ == 0 && low_ == 0; }
  void clear() noexcept { release(); }
  /// True when held as 128 bits (the text is a lowercase UUID of RFC 4122's variant).
  bool is_compact() const noexcept { return (low_ >> 62) == 2; }
  std::size_t size() const noexcept { return is_compact() ? 36 : text_view().size(); }
  /// The text: written into `buffer` for a compact uid, else a view of the held block. Valid
  /// while both `buffer` and this object_uid are.
  std::string_view text(text_buffer& buffer) const noexcept;
  std::string str() const;

  friend bool operator==(const object_uid& a, const object_uid& b) noexcept;
  friend bool operator==(const object_uid& a, std::string_view b) noexcept;
  friend bool operator==(const object_uid& a, const std::string& b) noexcept {
    return a == std::string_view(b);
  }
  friend bool operator==(const object_uid& a, const char* b) noexcept {
    return a == std::string_view(b);
  }
  friend std::strong_ordering operator<=>(const object_uid& a, const object_uid& b) noexcept;

  friend std::string operator+(const std::string& a, const object_uid& b) { return a + b.str(); }
  friend std::string operator+(const char* a, const object_uid& b) { return a + b.str(); }

 private:
  // The held block's text; empty for a compact uid.
  std::string_view text_view() const noexcept;
  void release() noexcept;

  // Compact: the UUID's first and last 8 bytes, big-endian. Text: high_ is 0 and low_ holds a
  // shared_string's block (shared_string::detach), or 0 for the empty uid.
  uint64_t high_ = 0;
  uint64_t low_ = 0;
};

} // namespace phalanx::scheduler
