#include "scheduler/result.hpp"

namespace phalanx {

std::string_view to_string(errc code) noexcept {
  switch (code) {
    case errc::ok:
      return "ok";
    case errc::invalid_argument:
      return "invalid_argument";
    case errc::not_found:
      return "not_found";
    case errc::already_exists:
      return "already_exists";
    case errc::conflict:
      return "conflict";
    case errc::failed_precondition:
      return "failed_precondition";
    case errc::too_large:
      return "too_large";
    case errc::unauthenticated:
      return "unauthenticated";
    case errc::forbidden:
      return "forbidden";
    case errc::unavailable:
      return "unavailable";
    case errc::corruption:
      return "corruption";
    case errc::io_error:
      return "io_error";
    case errc::internal:
      return "internal";
  }
  return "unknown";
}

std::string status::to_string() const {
  if (ok())
    return "ok";
  std::string out{phalanx::to_string(code_)};
  out += ": ";
  out += message_;
  return out;
}

} // namespace phalanx
