#include "api/errors.hpp"


namespace phalanx::api {

std::string_view to_string(status_reason r) noexcept {
  switch (r) {
    case status_reason::bad_request:
      return "BadRequest";
    case status_reason::unauthorized:
      return "Unauthorized";
    case status_reason::forbidden:
      return "Forbidden";
    case status_reason::not_found:
      return "NotFound";
    case status_reason::method_not_allowed:
      return "MethodNotAllowed";
    case status_reason::not_acceptable:
      return "NotAcceptable";
    case status_reason::timeout:
      return "Timeout";
    case status_reason::already_exists:
      return "AlreadyExists";
    case status_reason::conflict:
      return "Conflict";
    case status_reason::expired:
      return "Expired";
    case status_reason::request_entity_too_large:
      return "RequestEntityTooLarge";
    case status_reason::unsupported_media_type:
      return "UnsupportedMediaType";
    case status_reason::invalid:
      return "Invalid";
    case status_reason::too_many_requests:
      return "TooManyRequests";
    case status_reason::internal_error:
      return "InternalError";
    case status_reason::service_unavailable:
      return "ServiceUnavailable";
  }
  return "InternalError";
}

int http_code(status_reason r) noexcept {
  switch (r) {
    case status_reason::bad_request:
      return 400;
    case status_reason::unauthorized:
      return 401;
    case status_reason::forbidden:
      return 403;
    case status_reason::not_found:
      return 404;
    case status_reason::method_not_allowed:
      return 405;
    case status_reason::not_acceptable:
      return 406;
    case status_reason::timeout:
      return 408;
    case status_reason::already_exists:
    case status_reason::conflict:
      return 409;
    case status_reason::expired:
      return 410;
    case status_reason::request_entity_too_large:
      return 413;
    case status_reason::unsupported_media_type:
      return 415;
    case status_reason::invalid:
      return 422;
    case status_reason::too_many_requests:
      return 429;
    case status_reason::internal_error:
      return 500;
    case status_reason::service_unavailable:
      return 503;
  }
  return 500;
}

errc errc_of(status_reason r) noexcept {
  switch (r) {
    case status_reason::bad_request:
    case status_reason::invalid:
    case status_reason::method_not_allowed:
    case status_reason::not_acceptable:
    case status_reason::unsupported_media_type:
      return errc::invalid_argument;
    case status_reason::unauthorized:
      return errc::unauthenticated;
    case status_reason::forbidden:
      return errc::forbidden;
    case status_reason::not_found:
      return errc::not_found;
    case status_reason::already_exists:
      return errc::already_exists;
    case status_reason::conflict:
      return errc::conflict;
    case status_reason::expired:
      return errc::failed_precondition;
    case status_reason::request_entity_too_large:
      return errc::too_large;
    case status_reason::timeout:
    case status_reason::too_many_requests:
    case status_reason::service_unavailable:
      return errc::unavailable;
    case status_reason::internal_error:
      return errc::internal;
  }
  return errc::internal;
}

std::string status_cause::to_string() const {
  if (field.empty())
    return message;
  return field + ": " + message;
}

api_error api_error::from(const status& s) {
  api_error e;
  e.message = s.message();
  switch (s.code()) {
    case errc::invalid_argument:
    case errc::failed_precondition:
      e.reason = status_reason::invalid;
      break;
    case errc::not_found:
      e.reason = status_reason::not_found;
      break;
    case errc::already_exists:
      e.reason = status_reason::already_exists;
      break;
    case errc::conflict:
      e.reason = status_reason::conflict;
      break;
    case errc::too_large:
      e.reason = status_reason::request_entity_too_large;
      break;
    case errc::unauthenticated:
      e.reason = status_reason::unauthorized;
      break;
    case errc::forbidden:
      e.reason = status_reason::forbidden;
      break;
    case errc::unavailable:
      e.reason = status_reason::service_unavailable;
      break;
    case errc::ok:
      e.message = "internal error: an error without a code";
      e.reason = status_reason::internal_error;
      break;
    case errc::corruption:
    case errc::io_error:
    case errc::internal:
      e.reason = status_reason::internal_error;
      break;
  }
  return e;
}

api_error api_error::bad_request(std::string message) {
  api_error e;
  e.reason = status_reason::bad_request;
  e.message = std::move(message);
  return e;
}

api_error api_error::invalid(std::string_view kind_group, std::string_view name,
                             const scheduler::field_errors& errors) {
  api_error e;
  e.reason = status_reason::invalid;
  e.message = std::string(kind_group);
  if (!name.empty()) {
    e.message += " \"";
    e.message += name;
    e.message += '"';
  }
  e.message += " is invalid: ";
  if (errors.size() == 1) {
    e.message += errors.front().to_string();
  } else {
    e.message += '[';
    for (std::size_t i = 0; i < errors.size(); ++i) {
      if (i > 0)
        e.message += ", ";
      e.message += errors[i].to_string();
    }
    e.message += ']';
  }
  e.causes.reserve(errors.size());
  for (const auto& fe : errors)
    e.causes.push_back(to_cause(fe));
  e.name = std::string(name);
  return e;
}

std::string_view cause_reason(scheduler::field_error_type t) noexcept {
  using scheduler::field_error_type;
  switch (t) {
    case field_error_type::required:
      return "FieldValueRequired";
    case field_error_type::invalid:
      return "FieldValueInvalid";
    case field_error_type::not_supported:
      return "FieldValueNotSupported";
    case field_error_type::duplicate:
      return "FieldValueDuplicate";
    case field_error_type::too_long:
      return "FieldValueTooLong";
    case field_error_type::too_many:
      return "FieldValueTooMany";
    case field_error_type::forbidden:
      return "FieldValueForbidden";
  }
  return "FieldValueInvalid";
}

status_cause to_cause(const scheduler::field_error& e) {
  std::string full = e.to_string();
  std::string message = full;
  if (full.size() >= e.path.size() + 2 && full.compare(0, e.path.size(), e.path) == 0 &&
      full.compare(e.path.size(), 2, ": ") == 0)
    message = full.substr(e.path.size() + 2);
  return {std::string(cause_reason(e.type)), std::move(message), e.path};
}

} // namespace phalanx::api
