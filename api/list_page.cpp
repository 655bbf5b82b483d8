#include "api/list_page.hpp"

#include "scheduler/validation.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>

namespace phalanx::api {

namespace json = boost::json;

void page_finder::offer(list_key key) {
  if (page_.after && key <= list_key{page_.after->first, page_.after->second})
    return;
  if (page_.limit == 0)
    return;  // The page holds the rest, whatever it is.
  if (first_.size() < page_.limit) {
    first_.push_back(key);
    std::push_heap(first_.begin(), first_.end());
    return;
  }
  ++beyond_;
  if (key < first_.front()) {
    std::pop_heap(first_.begin(), first_.end());
    first_.back() = key;
    std::push_heap(first_.begin(), first_.end());
  }
}

page_end page_finder::end() const {
  if (beyond_ == 0)
    return {};
  return {first_.front(), beyond_};
}

bool in_page(list_key key, const list_page& page, const page_end& end) {
  if (page.after && key <= list_key{page.after->first, page.after->second})
    return false;
  return !end.last || key <= *end.last;
}

namespace {

// The version of the tokens' content: a token of another is refused, not misread.
constexpr std::string_view token_version = "phalanx.io/v1";

constexpr std::string_view base64url_alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// Base64url without padding (RFC 4648 section 5), as kube-apiserver's tokens are written.
std::string base64url_encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16 | uint32_t(uint8_t(in[i + 1])) << 8 |
                 uint32_t(uint8_t(in[i + 2]));
    for (int shift : {18, 12, 6, 0})
      out += base64url_alphabet[(v >> shift) & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16;
    out += base64url_alphabet[(v >> 18) & 63];
    out += base64url_alphabet[(v >> 12) & 63];
  } else if (i + 2 == in.size()) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16 | uint32_t(uint8_t(in[i + 1])) << 8;
    for (int shift : {18, 12, 6})
      out += base64url_alphabet[(v >> shift) & 63];
  }
  return out;
}

std::optional<std::string> base64url_decode(std::string_view in) {
  if (in.size() % 4 == 1)
    return std::nullopt;
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : in) {
    auto at = base64url_alphabet.find(c);
    if (at == std::string_view::npos)
      return std::nullopt;
    bits = bits << 6 | uint32_t(at);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += char((bits >> count) & 0xff);
    }
  }
  return out;
}

std::string encode_token(std::string_view resource, uint64_t first_version, list_key last) {
  json::object token{{"v", token_version},
                     {"resource", resource},
                     {"rv", first_version},
                     {"after", json::array{last.namespace_name, last.name}}};
  return base64url_encode(json::serialize(token));
}

api_error bad_continue(std::string_view text, std::string_view why) {
  return api_error::bad_request("continue: Invalid value: " + scheduler::go_quote(text) + ": " +
                                std::string(why) +
                                "; start the list again without the continue parameter");
}

} // namespace

outcome<list_page> read_page_query(std::string_view limit, std::string_view continue_text,
                                   std::string_view resource_version, std::string_view resource) {
  list_page page;
  if (!limit.empty()) {
    int64_t n = 0;
    auto [end, ec] = std::from_chars(limit.data(), limit.data() + limit.size(), n);
    if (ec != std::errc() || end != limit.data() + limit.size())
      return api_error::bad_request("limit: Invalid value: " + scheduler::go_quote(limit) +
                                    ": must be a whole number");
    if (n < 0)
      return api_error::bad_request("limit: Invalid value: " + std::string(limit) +
                                    ": must be greater than or equal to 0");
    page.limit = std::size_t(n);
  }
  if (continue_text.empty())
    return page;
  if (!resource_version.empty() && resource_version != "0")
    return api_error::bad_request("specifying resource version is not allowed when using "
                                  "continue");
  auto text = base64url_decode(continue_text);
  if (!text)
    return bad_continue(continue_text, "not base64url, so not a token this server made");
  boost::system::error_code ec;
  auto parsed = json::parse(*text, ec);
  const json::object* token = parsed.if_object();
  const json::value* v = token ? token->if_contains("v") : nullptr;
  if (ec || v == nullptr || !v->is_string() || v->get_string() != token_version)
    return bad_continue(continue_text, "not a token this server made");
  const auto* of = token->if_contains("resource");
  const auto* rv = token->if_contains("rv");
  const auto* after = token->if_contains("after");
  const bool version =
      rv != nullptr && (rv->is_uint64() || (rv->is_int64() && rv->get_int64() >= 0));
  if (of == nullptr || !of->is_string() || !version || after == nullptr || !after->is_array() ||
      after->get_array().size() != 2 || !after->get_array()[0].is_string() ||
      !after->get_array()[1].is_string() || after->get_array()[1].get_string().empty())
    return bad_continue(continue_text, "a token of this server's, but damaged");
  if (of->get_string() != resource)
    return bad_continue(continue_text, "the token continues a list of " +
                                           std::string(of->get_string()) + ", not of " +
                                           std::string(resource));
  page.first_version = rv->is_uint64() ? rv->get_uint64() : uint64_t(rv->get_int64());
  page.after.emplace(std::string(after->get_array()[0].get_string()),
                     std::string(after->get_array()[1].get_string()));
  return page;
}

page_metadata answer_page(std::string_view resource, const list_page& asked, uint64_t version,
                          std::optional<list_key> last, std::size_t remaining, bool selectors) {
  page_metadata out;
  // A consistent list reports its first page's version on every page; the first page, and a
  // list continued after a 410, the version it was read at.
  out.resource_version = asked.first_version != 0 ? asked.first_version : version;
  if (remaining == 0 || !last)
    return out;
  out.continue_token = encode_token(resource, out.resource_version, *last);
  if (!selectors)
    out.remaining = remaining;
  return out;
}

void set_page_metadata(json::value& list, const page_metadata& meta) {
  auto& m = list.as_object()["metadata"].emplace_object();
  m["resourceVersion"] = std::to_string(meta.resource_version);
  if (!meta.continue_token.empty())
    m["continue"] = meta.continue_token;
  if (meta.remaining)
    m["remainingItemCount"] = meta.remaining.value();
}

api_error continue_expired(std::string_view resource, const list_page& asked) {
  api_error e;
  e.reason = status_reason::expired;
  // kube-apiserver's words (its etcd3 store's inconsistentContinue).
  e.message = "The provided continue parameter is too old to display a consistent list result. "
              "You can start a new list without the continue parameter, or use the continue "
              "token in this response to retrieve the remainder of the results. Continuing "
              "with the provided token results in an inconsistent list - objects that were "
              "created, modified, or deleted between the time the first chunk was returned "
              "and now may show up in the list.";
  if (asked.after)
    e.continue_token =
        encode_token(resource, 0, list_key{asked.after->first, asked.after->second});
  return e;
}

} // namespace phalanx::api
