#include "scheduler/object_uid.hpp"

#include <cassert>
#include <utility>

namespace phalanx::scheduler {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

// Positions of the hyphens in a UUID's text (8-4-4-4-12).
constexpr bool is_hyphen_position(std::size_t i) noexcept {
  return i == 8 || i == 13 || i == 18 || i == 23;
}

int lower_hex_value(char c) noexcept {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1; // Uppercase too: its text would not read back as written.
}

// The 128 bits of a canonical lowercase UUID's text, or false.
bool parse_uuid(std::string_view text, uint64_t& high, uint64_t& low) noexcept {
  if (text.size() != 36)
    return false;
  uint64_t words[2] = {0, 0};
  int digits = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_hyphen_position(i)) {
      if (text[i] != '-')
        return false;
      continue;
    }
    int v = lower_hex_value(text[i]);
    if (v < 0)
      return false;
    auto& w = words[digits / 16];
    w = w << 4 | static_cast<uint64_t>(v);
    ++digits;
  }
  high = words[0];
  low = words[1];
  return true;
}

// A view of a detached block's text, without touching its count.
std::string_view view_of(uint64_t detached) noexcept {
  auto s = shared_string::adopt(detached);
  std::string_view v = s.view();
  s.detach();
  return v;
}

// Another reference to a detached block (0 stays 0).
uint64_t retain(uint64_t detached) noexcept {
  auto s = shared_string::adopt(detached);
  shared_string copy = s;
  s.detach();
  return copy.detach();
}

} // namespace

object_uid::object_uid(std::string_view text) {
  if (text.empty())
    return;
  uint64_t high = 0, low = 0;
  if (parse_uuid(text, high, low) && (low >> 62) == 2) {
    high_ = high;
    low_ = low;
    return;
  }
  low_ = shared_string(text).detach();
}

object_uid object_uid::make_uuid(uint64_t high, uint64_t low, unsigned version) noexcept {
  assert(version < 16);
  object_uid uid;
  uid.high_ = (high & ~(uint64_t{0xf} << 12)) | (uint64_t{version} << 12);
  uid.low_ = (low & ~(uint64_t{0x3} << 62)) | (uint64_t{0x2} << 62); // Makes it compact.
  return uid;
}

object_uid::object_uid(const object_uid& other) noexcept
    : high_(other.high_), low_(other.is_compact() ? other.low_ : retain(other.low_)) {}

object_uid& object_uid::operator=(const object_uid& other) noexcept {
  if (this != &other) {
    object_uid copy(other);
    *this = std::move(copy);
  }
  return *this;
}

object_uid& object_uid::operator=(object_uid&& other) noexcept {
  if (this != &other) {
    release();
    high_ = std::exchange(other.high_, 0);
    low_ = std::exchange(other.low_, 0);
  }
  return *this;
}

void object_uid::release() noexcept {
  if (!is_compact() && low_ != 0) {
    shared_string held = shared_string::adopt(low_); // Its destructor drops the reference.
  }
  high_ = low_ = 0;
}

std::string_view object_uid::text_view() const noexcept {
  return is_compact() ? std::string_view() : view_of(low_);
}

std::string_view object_uid::text(text_buffer& buffer) const noexcept {
  if (!is_compact())
    return view_of(low_);
  const uint64_t words[2] = {high_, low_};
  int digit = 0;
  for (std::size_t i = 0; i < buffer.size(); ++i) {
    if (is_hyphen_position(i)) {
      buffer[i] = '-';
      continue;
    }
    const uint64_t w = words[digit / 16];
    const int shift = 4 * (15 - digit % 16);
    buffer[i] = hex_digits[(w >> shift) & 0xf];
    ++digit;
  }
  return {buffer.data(), buffer.size()};
}

std::string object_uid::str() const {
  text_buffer buffer;
  return std::string(text(buffer));
}

bool operator==(const object_uid& a, const object_uid& b) noexcept {
  if (a.is_compact() && b.is_compact())
    return a.high_ == b.high_ && a.low_ == b.low_;
  if (a.is_compact() != b.is_compact())
    return false; // A text uid is never a lowercase RFC 4122 UUID, which would be compact.
  return a.low_ == b.low_ || a.text_view() == b.text_view();
}

bool operator==(const object_uid& a, std::string_view b) noexcept {
  object_uid::text_buffer buffer;
  return a.text(buffer) == b;
}

std::strong_ordering operator<=>(const object_uid& a, const object_uid& b) noexcept {
  if (a.is_compact() && b.is_compact())
    return a.high_ != b.high_ ? a.high_ <=> b.high_ : a.low_ <=> b.low_;
  object_uid::text_buffer buffer_a, buffer_b;
  return a.text(buffer_a) <=> b.text(buffer_b);
}

} // namespace phalanx::scheduler
