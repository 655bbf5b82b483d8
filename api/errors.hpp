#pragma once

// Errors as the API reports them: a Kubernetes Status (reason, message, details.causes) and the
// HTTP code that goes with it. Light header: no Boost, no protobuf.
//
// errc -> HTTP status (api_error::from):
//   invalid_argument     422 Invalid        (a field value breaks a rule; malformed input that
//                                            is not an object at all is 400 BadRequest, set
//                                            explicitly by the decoder)
//   not_found            404 NotFound
//   already_exists       409 AlreadyExists
//   conflict             409 Conflict
//   failed_precondition  422 Invalid        (the request is well formed but the system's state
//                                            refuses it: a closed queue. 422 rather than 409,
//                                            so that clients do not retry it as a write conflict;
//                                            watch streams map it to 410 Expired, see server.hpp)
//   too_large            413 RequestEntityTooLarge
//   unauthenticated      401 Unauthorized
//   unavailable          503 ServiceUnavailable
//   corruption, io_error, internal, ok (as an error: a bug)   500 InternalError

#include "scheduler/result.hpp"
#include "scheduler/validation.hpp"

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace phalanx::api {

/// Kubernetes' StatusReason values the API uses.
enum class status_reason {
  bad_request,               // 400 BadRequest
  unauthorized,              // 401 Unauthorized
  forbidden,                 // 403 Forbidden
  not_found,                 // 404 NotFound
  method_not_allowed,        // 405 MethodNotAllowed
  not_acceptable,            // 406 NotAcceptable
  timeout,                   // 408 Timeout (a client too slow to send its request)
  already_exists,            // 409 AlreadyExists
  conflict,                  // 409 Conflict
  expired,                   // 410 Expired (a watch from a version that is gone)
  request_entity_too_large,  // 413 RequestEntityTooLarge
  unsupported_media_type,    // 415 UnsupportedMediaType
  invalid,                   // 422 Invalid
  too_many_requests,         // 429 TooManyRequests
  internal_error,            // 500 InternalError
  service_unavailable,       // 503 ServiceUnavailable
};
inline constexpr status_reason status_reason_last = status_reason::service_unavailable;

/// "BadRequest", "NotFound", ...
std::string_view to_string(status_reason r) noexcept;
/// The HTTP status code of a reason.
int http_code(status_reason r) noexcept;
/// The errc a reason stands for (the inverse of api_error::from, up to ties).
errc errc_of(status_reason r) noexcept;

/// One field that broke a rule (metav1.StatusCause).
struct status_cause {
  std::string reason;   // "FieldValueInvalid", "FieldValueRequired", "FieldValueNotSupported"...
  std::string message;  // "Invalid value: 0: must be greater than or equal to 1"
  std::string field;    // "spec.minMember"
  /// "spec.minMember: Invalid value: 0: must be greater than or equal to 1".
  std::string to_string() const;
  friend bool operator==(const status_cause&, const status_cause&) = default;
};

/// A failure as the API reports it: the body of a Status with status "Failure".
struct api_error {
  status_reason reason = status_reason::internal_error;
  std::string message;
  std::vector<status_cause> causes;
  // details.kind / details.group / details.name, when the error is about one object.
  std::string kind;
  std::string group;
  std::string name;
  /// The Status's metadata.continue: on a paged list's 410 Expired, the token that lists the
  /// rest without the first page's promise (api/list_page.hpp).
  std::string continue_token;

  int code() const noexcept { return http_code(reason); }
  /// The status a module boundary would return: errc_of(reason) and the message.
  status to_status() const { return {errc_of(reason), message}; }

  /// Maps a service or core error (table in the file comment).
  static api_error from(const status& s);
  static api_error bad_request(std::string message);
  /// A 422 Invalid for `causes`; the message is Kubernetes':
  /// `Job.batch.volcano.sh "tf" is invalid: spec.tasks[0].replicas: Invalid value: ...` (several
  /// causes are listed in brackets, separated by ", "). `kind_group` is "Job.batch.volcano.sh",
  /// "Pod"...; `name` may be empty.
  static api_error invalid(std::string_view kind_group, std::string_view name,
                           const scheduler::field_errors& errors);

  friend bool operator==(const api_error&, const api_error&) = default;
};

/// A value or an api_error (the API's result<T>).
template <class T>
class [[nodiscard]] outcome {
 public:
  outcome(T value) : data_(std::move(value)) {}              // NOLINT: implicit by design.
  outcome(api_error error) : data_(std::move(error)) {}      // NOLINT

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

  /// The error. Precondition: !ok().
  const api_error& error() const& {
    assert(!ok());
    return std::get<api_error>(data_);
  }
  api_error&& error() && {
    assert(!ok());
    return std::get<api_error>(std::move(data_));
  }

 private:
  std::variant<T, api_error> data_;
};

/// The cause of a field error: reason "FieldValueInvalid", "FieldValueRequired", ...; message
/// without the path ("Invalid value: 0: must be greater than or equal to 1"); field = path.
status_cause to_cause(const scheduler::field_error& e);
/// Kubernetes' cause reason of a field error type: "FieldValueInvalid", ...
std::string_view cause_reason(scheduler::field_error_type t) noexcept;

} // namespace phalanx::api
