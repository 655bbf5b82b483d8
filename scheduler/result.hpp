#pragma once

// Status and result types used at every module boundary (STYLE.md "Errors"): functions that can
// fail return one of these instead of throwing. Both are [[nodiscard]]; ignoring an error on
// purpose is spelled `permit_unchecked()` so it can be grepped.

#include <cassert>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace phalanx {

/// What went wrong, with a meaning for the caller (retry, fix the input, give up).
enum class errc {
  ok,
  invalid_argument,   // The input breaks a rule; fix the input (HTTP 400/422).
  not_found,          // The object does not exist (HTTP 404).
  already_exists,     // An object with that name exists (HTTP 409).
  conflict,           // A concurrent change won; retry with fresh state (HTTP 409).
  failed_precondition,// The system is not in a state that allows this (closed queue...).
  too_large,          // The input exceeds a size limit (HTTP 413).
  unauthenticated,    // Missing or wrong credentials (HTTP 401).
  forbidden,          // A policy refuses it whoever asks (HTTP 403): a second default class.
  unavailable,        // Not ready or shutting down; retry later (HTTP 503).
  corruption,         // Stored data cannot be decoded.
  io_error,           // The operating system or storage failed.
  internal,           // A bug: an invariant did not hold.
};

/// Every enum has a to_string; tests walk all values.
std::string_view to_string(errc code) noexcept;

/// The last value of errc, for tests that walk every value.
inline constexpr errc errc_last = errc::internal;

/// The outcome of an operation without a value: ok, or a code with a message for humans.
class [[nodiscard]] status {
 public:
  status() = default;
  status(errc code, std::string message) : code_(code), message_(std::move(message)) {}

  static status ok_status() { return {}; }

  bool ok() const noexcept { return code_ == errc::ok; }
  explicit operator bool() const noexcept { return ok(); }
  errc code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }

  /// "invalid_argument: spec.minMember: must be >= 1", or "ok".
  std::string to_string() const;

  /// Marks an error as deliberately ignored.
  void permit_unchecked() const noexcept {}

  friend bool operator==(const status&, const status&) = default;

 private:
  errc code_ = errc::ok;
  std::string message_;
};

/// A value or an error status (never an ok status).
template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design, like expected<T>.
  result(status error) : data_(std::move(error)) {  // NOLINT
    assert(!std::get<status>(data_).ok() && "a result cannot hold an ok status without a value");
  }
  result(errc code, std::string message) : data_(status{code, std::move(message)}) {}

  bool ok() const noexcept { return std::holds_alternative<T>(data_); }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<T>(data_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(data_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(data_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  /// The error; an ok status when the result holds a value.
  status error() const {
    if (ok())
      return {};
    return std::get<status>(data_);
  }

  T value_or(T fallback) const& { return ok() ? std::get<T>(data_) : std::move(fallback); }

 private:
  std::variant<T, status> data_;
};

} // namespace phalanx
