// Request framing (http_framing.hpp). Beast's parser reads the request line and the fields; the
// rules it does not enforce (it ignores a Transfer-Encoding whose final coding is not chunked,
// accepts equal duplicate Content-Lengths and unfolds obs-fold) are checked here on the raw
// header bytes before Beast sees them. Beast is given exactly the bytes up to the first empty
// line and must end the header exactly there, so the two never disagree on where it ends.
// Bodies, chunked ones included, are read here (body_reader says why not by Beast).

#include "api/http_framing.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>

#include <algorithm>
#include <cassert>
#include <limits>

namespace phalanx::api {

namespace http = boost::beast::http;

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto x = static_cast<unsigned char>(a[i]);
    auto y = static_cast<unsigned char>(b[i]);
    if (x >= 'A' && x <= 'Z')
      x = static_cast<unsigned char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z')
      y = static_cast<unsigned char>(y - 'A' + 'a');
    if (x != y)
      return false;
  }
  return true;
}

bool is_ows(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && is_ows(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back()))
    s.remove_suffix(1);
  return s;
}

// What the client sent, quoted in a message: bounded, so that a refusal does not echo a 64 KiB
// field back, and printable, so that the Status body stays valid UTF-8 whatever was sent.
std::string quote(std::string_view s) {
  constexpr std::size_t max_quoted = 64;
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s.substr(0, max_quoted)) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 0xf];
    }
  }
  if (s.size() > max_quoted)
    out += "...";
  return out + "\"";
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Fits in the uint64 Beast parses it into.
bool parse_length(std::string_view s, std::uint64_t& out) {
  if (!all_digits(s))
    return false;
  std::uint64_t v = 0;
  for (char c : s) {
    auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10)
      return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

bool is_tchar(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
    return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Beast's: any byte but controls, space and DEL.
bool is_target_char(char c) {
  auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u != 0x7f;
}

} // namespace

// Beast's request-line grammar (method SP target SP "HTTP/" DIGIT "." DIGIT CRLF), one byte at a
// time, resuming where the last call stopped. It refuses at the first byte no request line can
// have there, so garbage (a TLS hello on the plain port) is refused at once rather than at the
// header limit or timeout. A prefix gets the verdict the whole line gets, so the fault does not
// depend on how the stream was split.
class request_framer::line_check {
 public:
  /// Checks the bytes of `in` not checked yet; `in` starts at the request line and only grows.
  /// Returns what is wrong ("bad method"), or nullopt while the line can still be valid.
  std::optional<std::string_view> advance(std::string_view in) {
    static constexpr std::string_view version_form = "HTTP/D.D\r\n";
    for (; checked_ < in.size() && part_ != part::done; ++checked_) {
      char c = in[checked_];
      switch (part_) {
        case part::method:
          if (is_tchar(c)) {
            ++run_;
          } else {
            if (c != ' ' || run_ == 0)
              return "bad method";
            part_ = part::target;
            run_ = 0;
          }
          break;
        case part::target:
          if (is_target_char(c)) {
            ++run_;
          } else {
            if (c != ' ' || run_ == 0)
              return "bad target";
            part_ = part::version;
            run_ = 0;
          }
          break;
        case part::version: {
          char want = version_form[run_];
          if (want == 'D' ? !(c >= '0' && c <= '9') : c != want)
            return "bad version";
          if (++run_ == version_form.size())
            part_ = part::done;
          break;
        }
        case part::done:
          break;
      }
    }
    return std::nullopt;
  }

 private:
  enum class part { method, target, version, done };
  part part_ = part::method;
  std::size_t run_ = 0;
  std::size_t checked_ = 0;
};

namespace {

/// The framing fields of a header block, and the first rule it breaks.
struct head_scan {
  std::vector<std::string_view> content_lengths;
  std::vector<std::string_view> transfer_encodings;
  std::optional<framing_error> error;
};

// `head` ends with the first CRLF CRLF. Lines are split on CRLF; bare CRs and LFs stay inside
// lines, where Beast refuses them.
head_scan scan_head(std::string_view head) {
  head_scan out;
  std::size_t at = head.find("\r\n");
  at = at == std::string_view::npos ? head.size() : at + 2;  // Past the request line.
  while (at < head.size()) {
    std::size_t end = head.find("\r\n", at);
    if (end == std::string_view::npos)
      end = head.size();
    std::string_view line = head.substr(at, end - at);
    at = end + 2;
    if (line.empty())
      break;  // The empty line that ends the header.
    if (is_ows(line.front())) {
      out.error = framing_error{framing_fault::obsolete_line_folding,
                                "a header field line starts with whitespace (obsolete line "
                                "folding), which is not accepted"};
      return out;
    }
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      continue;  // Beast refuses it.
    std::string_view name = line.substr(0, colon);
    if (!name.empty() && is_ows(name.back())) {
      out.error = framing_error{framing_fault::field_name_whitespace,
                                "whitespace between the header field name " +
                                  quote(trim_ows(name)) + " and its colon"};
      return out;
    }
    std::string_view value = trim_ows(line.substr(colon + 1));
    if (iequals(name, "content-length"))
      out.content_lengths.push_back(value);
    else if (iequals(name, "transfer-encoding"))
      out.transfer_encodings.push_back(value);
  }
  return out;
}

// The rules on Content-Length and Transfer-Encoding (the file comment of the header).
std::optional<framing_error> check_body_framing(const head_scan& s) {
  if (!s.content_lengths.empty() && !s.transfer_encodings.empty())
    return framing_error{framing_fault::content_length_with_transfer_encoding,
                         "the request has both Content-Length and Transfer-Encoding; send one"};
  if (s.content_lengths.size() > 1)
    return framing_error{framing_fault::duplicate_content_length,
                         "the request has " + std::to_string(s.content_lengths.size()) +
                           " Content-Length fields; send one"};
  if (s.content_lengths.size() == 1) {
    std::uint64_t ignored = 0;
    if (!parse_length(s.content_lengths.front(), ignored))
      return framing_error{framing_fault::bad_content_length,
                           "Content-Length " + quote(s.content_lengths.front()) +
                             " is not a number of bytes"};
  }
  if (s.transfer_encodings.empty())
    return std::nullopt;
  // Every Transfer-Encoding field, in order, is one list of codings.
  std::vector<std::string_view> codings;
  for (std::string_view v : s.transfer_encodings) {
    while (!v.empty()) {
      std::size_t comma = v.find(',');
      std::string_view item = trim_ows(v.substr(0, comma));
      if (!item.empty())
        codings.push_back(item);
      v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
    }
  }
  if (codings.empty())
    return framing_error{framing_fault::final_coding_not_chunked,
                         "Transfer-Encoding names no coding; the body's length is unknown"};
  // chunked takes no parameters: "chunked;x=1" is some other coding.
  auto chunked = [](std::string_view c) { return iequals(c, "chunked"); };
  if (!chunked(codings.back()))
    return framing_error{framing_fault::final_coding_not_chunked,
                         "the final transfer coding is " + quote(codings.back()) +
                           ", not chunked; the body's length is unknown"};
  if (std::count_if(codings.begin(), codings.end(), chunked) > 1)
    return framing_error{framing_fault::chunked_twice,
                         "the transfer coding chunked is applied more than once"};
  if (codings.size() > 1)
    return framing_error{framing_fault::unsupported_transfer_coding,
                         "the transfer coding " + quote(codings.front()) +
                           " is not supported; send the body with chunked alone"};
  return std::nullopt;
}

// A chunk-size line without its CRLF: 1*HEXDIG, then chunk extensions (RFC 9112 section 7.1.1:
// *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] )), which are checked and
// dropped. Returns the size, or nullopt when the line breaks the grammar or the size does not
// fit in 64 bits.
std::optional<std::uint64_t> parse_chunk_line(std::string_view line) {
  std::uint64_t size = 0;
  std::size_t i = 0;
  for (; i < line.size(); ++i) {
    char c = line[i];
    unsigned d = 0;
    if (c >= '0' && c <= '9')
      d = unsigned(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = unsigned(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      d = unsigned(c - 'A' + 10);
    else
      break;
    if (size > (std::numeric_limits<std::uint64_t>::max() >> 4))
      return std::nullopt;
    size = (size << 4) | d;
  }
  if (i == 0)
    return std::nullopt;
  auto skip_bws = [&] {
    while (i < line.size() && is_ows(line[i]))
      ++i;
  };
  auto token = [&] {
    std::size_t from = i;
    while (i < line.size() && is_tchar(line[i]))
      ++i;
    return i > from;
  };
  while (i < line.size()) {
    skip_bws();
    if (i == line.size() || line[i] != ';')
      return std::nullopt;
    ++i;
    skip_bws();
    if (!token())
      return std::nullopt;
    std::size_t after_name = i;
    skip_bws();
    if (i == line.size() || line[i] != '=') {
      i = after_name;
      if (i < line.size() && !is_ows(line[i]) && line[i] != ';')
        return std::nullopt;
      continue;
    }
    ++i;
    skip_bws();
    if (i < line.size() && line[i] == '"') {
      // quoted-string: qdtext (HTAB, SP, 0x21, 0x23-0x5B, 0x5D-0x7E, obs-text) or quoted-pair.
      for (++i;; ++i) {
        if (i == line.size())
          return std::nullopt;
        auto u = static_cast<unsigned char>(line[i]);
        if (u == '"')
          break;
        if (u == '\\') {
          if (++i == line.size())
            return std::nullopt;
          u = static_cast<unsigned char>(line[i]);
          if (u != '\t' && (u < 0x20 || u == 0x7f))
            return std::nullopt;
          continue;
        }
        if (u != '\t' && (u < 0x20 || u == 0x7f))
          return std::nullopt;
      }
      ++i;
    } else if (!token()) {
      return std::nullopt;
    }
  }
  return size;
}

// A trailer section, ending with its empty line: field lines "name: value" with a token name
// and a value without control bytes other than HTAB; no obs-fold.
bool valid_trailer(std::string_view section) {
  std::size_t at = 0;
  for (;;) {
    std::size_t end = section.find("\r\n", at);
    if (end == std::string_view::npos)
      return false;
    std::string_view line = section.substr(at, end - at);
    at = end + 2;
    if (line.empty())
      return at == section.size();
    std::size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos)
      return false;
    for (char c : line.substr(0, colon))
      if (!is_tchar(c))
        return false;
    for (char c : line.substr(colon + 1)) {
      auto u = static_cast<unsigned char>(c);
      if (u != '\t' && (u < 0x20 || u == 0x7f))
        return false;
    }
  }
}

} // namespace

std::string_view to_string(framing_fault f) noexcept {
  switch (f) {
    case framing_fault::malformed_request: return "malformed_request";
    case framing_fault::header_too_large: return "header_too_large";
    case framing_fault::obsolete_line_folding: return "obsolete_line_folding";
    case framing_fault::field_name_whitespace: return "field_name_whitespace";
    case framing_fault::bad_content_length: return "bad_content_length";
    case framing_fault::duplicate_content_length: return "duplicate_content_length";
    case framing_fault::content_length_with_transfer_encoding:
      return "content_length_with_transfer_encoding";
    case framing_fault::final_coding_not_chunked: return "final_coding_not_chunked";
    case framing_fault::chunked_twice: return "chunked_twice";
    case framing_fault::unsupported_transfer_coding: return "unsupported_transfer_coding";
    case framing_fault::transfer_encoding_in_http10: return "transfer_encoding_in_http10";
    case framing_fault::malformed_body: return "malformed_body";
    case framing_fault::body_too_large: return "body_too_large";
  }
  return "unknown";
}

int http_status(framing_fault f) noexcept {
  return f == framing_fault::body_too_large ? 413 : 400;
}

std::string_view to_string(framer_state s) noexcept {
  switch (s) {
    case framer_state::reading_head: return "reading_head";
    case framer_state::head_ready: return "head_ready";
    case framer_state::reading_body: return "reading_body";
    case framer_state::request_ready: return "request_ready";
    case framer_state::failed: return "failed";
  }
  return "unknown";
}

std::string_view request_head::field(std::string_view name) const {
  for (const auto& [k, v] : fields)
    if (iequals(k, name))
      return v;
  return {};
}

bool request_head::has_body() const noexcept {
  return chunked || (content_length && *content_length > 0);
}

bool request_head::expects_continue() const {
  return iequals(field("expect"), "100-continue");
}

// ---------------------------------------------------------------------------------------------

/// How far the body of the request in progress is read. Beast reads the head only: its chunk
/// parser charges a chunk against the body limit before the chunk header is whole, again at
/// every retry, so the same stream could pass or fail depending on how it was split.
struct request_framer::body_reader {
  enum class part {
    content,     // Content-Length bytes; `remaining` to go.
    chunk_line,  // A chunk-size line.
    chunk_data,  // A chunk's bytes; `remaining` to go.
    chunk_end,   // The CRLF after a chunk's bytes.
    trailer,     // The trailer section after the last chunk.
  };
  part at = part::content;
  std::uint64_t remaining = 0;
  std::string body;
};

request_framer::request_framer(framing_limits limits)
  : limits_(limits), line_check_(std::make_unique<line_check>()) {}
request_framer::~request_framer() = default;
request_framer::request_framer(request_framer&&) noexcept = default;
request_framer& request_framer::operator=(request_framer&&) noexcept = default;

bool request_framer::transition(framer_state to) {
  bool legal = false;
  switch (state_) {
    case framer_state::reading_head:
      legal = to == framer_state::head_ready || to == framer_state::failed;
      break;
    case framer_state::head_ready:
      legal = to == framer_state::reading_body || to == framer_state::request_ready ||
              to == framer_state::reading_head || to == framer_state::failed;
      break;
    case framer_state::reading_body:
      legal = to == framer_state::request_ready || to == framer_state::failed;
      break;
    case framer_state::request_ready:
      legal = to == framer_state::reading_head;
      break;
    case framer_state::failed:
      legal = false;
      break;
  }
  assert(legal && "request_framer: illegal state change");
  if (legal)
    state_ = to;
  return legal;
}

void request_framer::feed(std::string_view bytes) {
  if (state_ == framer_state::failed)
    return;
  // Reclaim the consumed prefix once it is most of the buffer, so a long keep-alive connection
  // does not grow it and pipelined bytes are not moved on every request.
  if (pos_ > 0 && pos_ >= buf_.size() / 2) {
    buf_.erase(0, pos_);
    scan_ -= std::min(scan_, pos_);
    pos_ = 0;
  }
  buf_.append(bytes);
}

std::string_view request_framer::unread() const noexcept {
  return std::string_view(buf_).substr(pos_);
}

std::size_t request_framer::buffered_bytes() const noexcept {
  return buf_.size() - pos_;
}

void request_framer::consume(std::size_t n) {
  pos_ += n;
  request_bytes_ += n;
  if (scan_ < pos_)
    scan_ = pos_;
}

void request_framer::fail(framing_fault fault, std::string message) {
  error_ = framing_error{fault, std::move(message)};
  transition(framer_state::failed);
  body_.reset();
  // Nothing after a fault is ever parsed: drop what is buffered.
  buf_.clear();
  pos_ = 0;
  scan_ = 0;
}

framer_state request_framer::advance() {
  if (state_ == framer_state::reading_head)
    parse_head();
  else if (state_ == framer_state::reading_body)
    parse_body();
  return state_;
}

std::optional<std::size_t> request_framer::find_section_end(std::size_t limit) {
  std::string_view in = unread();
  std::size_t window = std::min(in.size(), limit);
  std::size_t from = scan_ - pos_;
  from = from >= 3 ? from - 3 : 0;  // The terminator may straddle two feeds.
  std::size_t end = in.substr(0, window).find("\r\n\r\n", std::min(from, window));
  if (end == std::string_view::npos) {
    scan_ = pos_ + window;
    return std::nullopt;
  }
  return end + 4;
}

void request_framer::parse_head() {
  std::string_view in = unread();
  if (in.empty())
    return;
  std::size_t window = std::min(in.size(), limits_.max_header_bytes);
  if (auto bad = line_check_->advance(in.substr(0, window)))
    return fail(framing_fault::malformed_request, "malformed HTTP request: " + std::string(*bad));
  // The header ends at the first CRLF CRLF, which must lie within the limit.
  auto end = find_section_end(limits_.max_header_bytes);
  if (!end) {
    if (in.size() >= limits_.max_header_bytes)
      fail(framing_fault::header_too_large,
           "the request header is larger than " + std::to_string(limits_.max_header_bytes) +
             " bytes");
    return;
  }
  parse_whole_head(in.substr(0, *end));
}

void request_framer::parse_whole_head(std::string_view head) {
  head_scan scan = scan_head(head);
  if (scan.error)
    return fail(scan.error->fault, std::move(scan.error->message));
  if (auto e = check_body_framing(scan))
    return fail(e->fault, std::move(e->message));

  http::request_parser<http::empty_body> p;
  p.eager(false);
  p.header_limit(std::numeric_limits<std::uint32_t>::max());  // Ours is checked above.
  p.body_limit(boost::none);  // accept_body checks Content-Length against ours.
  boost::beast::error_code ec;
  std::size_t used = p.put(boost::asio::const_buffer(head.data(), head.size()), ec);
  if (ec || !p.is_header_done() || used != head.size())
    return fail(framing_fault::malformed_request,
                "malformed HTTP request: " + (ec ? ec.message() : std::string("bad header")));
  const auto& m = p.get();
  if (m.version() == 10 && !scan.transfer_encodings.empty())
    return fail(framing_fault::transfer_encoding_in_http10,
                "an HTTP/1.0 request cannot carry Transfer-Encoding");

  head_ = request_head{};
  head_.method = std::string(m.method_string());
  head_.target = std::string(m.target());
  head_.version = m.version();
  for (const auto& f : m)
    head_.fields.emplace_back(std::string(f.name_string()), std::string(f.value()));
  head_.keep_alive = p.keep_alive();
  // The rules above leave one reading of the body; Beast must agree with it.
  head_.chunked = !scan.transfer_encodings.empty();
  if (!scan.content_lengths.empty()) {
    std::uint64_t cl = 0;
    if (parse_length(scan.content_lengths.front(), cl))
      head_.content_length = cl;
  }
  auto beast_cl = p.content_length();
  if (head_.chunked != p.chunked() || head_.content_length.has_value() != beast_cl.has_value() ||
      (beast_cl && *beast_cl != *head_.content_length))
    return fail(framing_fault::malformed_request, "malformed HTTP request: ambiguous framing");
  request_bytes_ = 0;
  consume(head.size());
  transition(framer_state::head_ready);
}

const request_head& request_framer::head() const {
  assert(state_ == framer_state::head_ready || state_ == framer_state::reading_body ||
         state_ == framer_state::request_ready);
  return head_;
}

framer_state request_framer::accept_body() {
  assert(state_ == framer_state::head_ready);
  if (state_ != framer_state::head_ready)
    return state_;
  if (head_.content_length && *head_.content_length > limits_.max_body_bytes) {
    fail(framing_fault::body_too_large,
         "the request body is " + std::to_string(*head_.content_length) +
           " bytes; the limit is " + std::to_string(limits_.max_body_bytes) + " bytes");
    return state_;
  }
  body_ = std::make_unique<body_reader>();
  if (!head_.has_body()) {
    transition(framer_state::request_ready);
    return state_;
  }
  if (head_.chunked) {
    body_->at = body_reader::part::chunk_line;
  } else {
    body_->at = body_reader::part::content;
    body_->remaining = *head_.content_length;
    body_->body.reserve(static_cast<std::size_t>(*head_.content_length));
  }
  transition(framer_state::reading_body);
  return state_;
}

bool request_framer::skip_head() {
  assert(state_ == framer_state::head_ready);
  if (state_ != framer_state::head_ready || head_.has_body())
    return false;
  consumed_ += request_bytes_;
  request_bytes_ = 0;
  line_check_ = std::make_unique<line_check>();
  transition(framer_state::reading_head);
  return true;
}

void request_framer::parse_body() {
  using part = body_reader::part;
  body_reader& b = *body_;
  for (;;) {
    std::string_view in = unread();
    switch (b.at) {
      case part::content:
      case part::chunk_data: {
        auto n = static_cast<std::size_t>(std::min<std::uint64_t>(b.remaining, in.size()));
        b.body.append(in.substr(0, n));
        b.remaining -= n;
        consume(n);
        if (b.remaining > 0)
          return;
        if (b.at == part::content) {
          transition(framer_state::request_ready);
          return;
        }
        b.at = part::chunk_end;
        break;
      }
      case part::chunk_end:
        if (in.size() < 2)
          return;
        if (in.substr(0, 2) != "\r\n")
          return fail(framing_fault::malformed_body,
                      "malformed HTTP request body: a chunk does not end with CRLF");
        consume(2);
        b.at = part::chunk_line;
        break;
      case part::chunk_line: {
        std::size_t window = std::min(in.size(), max_chunk_line_bytes);
        std::size_t from = scan_ - pos_;
        from = from >= 1 ? from - 1 : 0;  // CRLF may straddle two feeds.
        std::size_t eol = in.substr(0, window).find("\r\n", std::min(from, window));
        if (eol == std::string_view::npos) {
          scan_ = pos_ + window;
          if (in.size() >= max_chunk_line_bytes)
            return fail(framing_fault::malformed_body,
                        "malformed HTTP request body: a chunk-size line is longer than " +
                          std::to_string(max_chunk_line_bytes) + " bytes");
          return;
        }
        auto size = parse_chunk_line(in.substr(0, eol));
        if (!size)
          return fail(framing_fault::malformed_body,
                      "malformed HTTP request body: bad chunk-size line " +
                        quote(in.substr(0, eol)));
        if (*size > limits_.max_body_bytes - b.body.size())
          return fail(framing_fault::body_too_large,
                      "the request body is larger than the limit of " +
                        std::to_string(limits_.max_body_bytes) + " bytes");
        consume(eol + 2);
        b.remaining = *size;
        b.at = *size == 0 ? part::trailer : part::chunk_data;
        break;
      }
      case part::trailer: {
        // No trailer fields: the empty line follows the last chunk at once.
        if (in.size() < 2)
          return;
        std::size_t end = 2;
        if (in.substr(0, 2) != "\r\n") {
          auto found = find_section_end(limits_.max_header_bytes);
          if (!found) {
            if (in.size() >= limits_.max_header_bytes)
              return fail(framing_fault::malformed_body,
                          "malformed HTTP request body: the trailer is larger than " +
                            std::to_string(limits_.max_header_bytes) + " bytes");
            return;
          }
          end = *found;
          if (!valid_trailer(in.substr(0, end)))
            return fail(framing_fault::malformed_body,
                        "malformed HTTP request body: bad trailer field");
        }
        consume(end);  // Trailer fields are dropped: nothing here reads them.
        transition(framer_state::request_ready);
        return;
      }
    }
  }
}

framed_request request_framer::take() {
  assert(state_ == framer_state::request_ready);
  framed_request out;
  if (state_ != framer_state::request_ready)
    return out;
  out.head = std::move(head_);
  out.body = std::move(body_->body);
  head_ = request_head{};
  body_.reset();
  consumed_ += request_bytes_;
  request_bytes_ = 0;
  line_check_ = std::make_unique<line_check>();
  transition(framer_state::reading_head);
  return out;
}

const framing_error& request_framer::error() const {
  assert(error_);
  return *error_;
}

// ---------------------------------------------------------------------------------------------

framing_result frame_requests(std::string_view bytes, const framing_limits& limits) {
  framing_result out;
  request_framer f{limits};
  f.feed(bytes);
  for (;;) {
    switch (f.advance()) {
      case framer_state::reading_head:
      case framer_state::reading_body:
        out.consumed_bytes = f.consumed_bytes();
        out.incomplete_bytes = bytes.size() - static_cast<std::size_t>(out.consumed_bytes);
        return out;
      case framer_state::head_ready:
        f.accept_body();
        break;
      case framer_state::request_ready: {
        out.requests.push_back(f.take());
        if (!out.requests.back().head.keep_alive) {
          out.must_close = true;
          out.consumed_bytes = f.consumed_bytes();
          return out;
        }
        break;
      }
      case framer_state::failed:
        out.error = f.error();
        out.must_close = true;
        out.consumed_bytes = f.consumed_bytes();
        return out;
    }
  }
}

} // namespace phalanx::api
