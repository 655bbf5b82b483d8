#pragma once

// An immutable string shared by reference: one pointer in the object that holds it.
//
// A pod names its PodGroup, its role, its priority class and its scheduler; the pods of one job
// task share all four, and 150,000 pods held them as four std::strings, 128 bytes per pod before
// any heap copy of a name longer than 15 characters. A shared_string is 8 bytes; copies share one
// block (a reference count, the size and the characters). Equal texts share a block only when
// whoever builds the objects makes them share: copying one shared_string into each pod, or a
// shared_string_pool where the values arrive from separate sources (a store's records, an API).
//
// Reads hand out string_views that stay valid while some shared_string holds the block. A const
// shared_string may be read and copied from any thread (the count is atomic); assigning one is as
// thread-safe as assigning a std::string.

#include <atomic>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

namespace phalanx::scheduler {

class shared_string {
 public:
  shared_string() noexcept = default;
  // Implicit from text, as a std::string is: `pod.group = "spark"` reads as it did.
  shared_string(std::string_view text); // NOLINT(google-explicit-constructor)
  shared_string(const std::string& text) : shared_string(std::string_view(text)) {} // NOLINT
  shared_string(const char* text) : shared_string(std::string_view(text)) {}        // NOLINT
  shared_string(const shared_string& other) noexcept : block_(other.block_) { retain(); }
  shared_string(shared_string&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
  shared_string& operator=(const shared_string& other) noexcept;
  shared_string& operator=(shared_string&& other) noexcept;
  ~shared_string() { release(); }

  std::string_view view() const noexcept {
    return block_ ? std::string_view(block_->text, block_->size) : std::string_view();
  }
  operator std::string_view() const noexcept { return view(); } // NOLINT
  std::string str() const { return std::string(view()); }
  /// NUL-terminated, like std::string's.
  const char* data() const noexcept { return block_ ? block_->text : ""; }
  std::size_t size() const noexcept { return block_ ? block_->size : 0; }
  bool empty() const noexcept { return block_ == nullptr; }
  /// True when not empty: reads as the shared pointer to a string it replaced did (spec_json).
  explicit operator bool() const noexcept { return block_ != nullptr; }
  void clear() noexcept {
    release();
    block_ = nullptr;
  }

  /// Gives up the block, with the reference this shared_string held, as an integer (0 when
  /// empty), leaving it empty; adopt() makes a shared_string of it again. For a holder that
  /// keeps the block in its own words (object_uid). A block's address has its top bits clear.
  std::uintptr_t detach() noexcept {
    return reinterpret_cast<std::uintptr_t>(std::exchange(block_, nullptr));
  }
  static shared_string adopt(std::uintptr_t detached) noexcept {
    shared_string s;
    s.block_ = reinterpret_cast<block*>(detached);
    return s;
  }

  /// True when both hold the same block (equal text then, but not only then).
  bool shares_with(const shared_string& other) const noexcept { return block_ == other.block_; }
  /// How many shared_strings hold this one's block (0 for the empty string). For the pool's sweep
  /// and for tests; another thread may change it at any time.
  uint32_t use_count() const noexcept {
    return block_ ? block_->references.load(std::memory_order_acquire) : 0;
  }

  friend bool operator==(const shared_string& a, const shared_string& b) noexcept {
    return a.block_ == b.block_ || a.view() == b.view();
  }
  friend bool operator==(const shared_string& a, std::string_view b) noexcept {
    return a.view() == b;
  }
  friend bool operator==(const shared_string& a, const std::string& b) noexcept {
    return a.view() == std::string_view(b);
  }
  friend bool operator==(const shared_string& a, const char* b) noexcept {
    return a.view() == std::string_view(b);
  }
  friend std::strong_ordering operator<=>(const shared_string& a, const shared_string& b) noexcept {
    return a.view() <=> b.view();
  }
  friend std::strong_ordering operator<=>(const shared_string& a, std::string_view b) noexcept {
    return a.view() <=> b;
  }
  friend std::strong_ordering operator<=>(const shared_string& a, const std::string& b) noexcept {
    return a.view() <=> std::string_view(b);
  }

  friend std::string operator+(const std::string& a, const shared_string& b) {
    std::string out;
    out.reserve(a.size() + b.size());
    out.append(a).append(b.view());
    return out;
  }
  friend std::string operator+(const char* a, const shared_string& b) { return std::string(a) + b; }
  friend std::string operator+(const shared_string& a, const char* b) {
    const std::string_view tail(b);
    std::string out;
    out.reserve(a.size() + tail.size());
    out.append(a.view()).append(tail);
    return out;
  }

 private:
  struct block {
    std::atomic<uint32_t> references;
    uint32_t size;
    char text[1]; // `size` characters and a terminating NUL (data() reads as a C string).
  };
  void retain() const noexcept {
    if (block_)
      block_->references.fetch_add(1, std::memory_order_relaxed);
  }
  void release() noexcept;

  block* block_ = nullptr;
};

/// Hands out one shared_string per distinct text, so values that arrive separately (a pod per
/// API call, a record per pod in the store) share a block. Owned by one thread. Texts nobody
/// else holds any more are dropped by a sweep whenever the pool has doubled since the last one,
/// so the pool stays within twice the distinct texts in use (plus a floor).
class shared_string_pool {
 public:
  shared_string share(std::string_view text);
  /// Replaces `s` by the pool's shared_string of the same text.
  void share_into(shared_string& s) { s = share(s.view()); }
  std::size_t size() const noexcept { return texts_.size(); }

 private:
  struct text_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
    std::size_t operator()(const shared_string& s) const noexcept { return (*this)(s.view()); }
  };
  struct text_equal {
    using is_transparent = void;
    bool operator()(const shared_string& a, const shared_string& b) const noexcept {
      return a == b;
    }
    bool operator()(std::string_view a, const shared_string& b) const noexcept { return b == a; }
    bool operator()(const shared_string& a, std::string_view b) const noexcept { return a == b; }
  };
  void sweep();

  std::unordered_set<shared_string, text_hash, text_equal> texts_;
  std::size_t sweep_at_ = 256;
};

/// Writes the text (test failure messages print names this way).
std::ostream& operator<<(std::ostream& out, const shared_string& s);

} // namespace phalanx::scheduler

template <>
struct std::hash<phalanx::scheduler::shared_string> {
  std::size_t operator()(const phalanx::scheduler::shared_string& s) const noexcept {
    return std::hash<std::string_view>{}(s.view());
  }
};
