// Fuzzes HTTP request framing (http_framing.hpp): the input is the byte stream of one
// connection, framed under the server's limits and under tight ones. Invariants, beyond not
// crashing:
// - Split invariance: the stream frames the same (requests, fault, message, bytes used)
//   whether it arrives whole, in random pieces or one byte at a time.
// - Nothing after the end: once a stream faults (or a request asks to close), appending any
//   bytes - a smuggled request - changes nothing, and a failed framer takes nothing more.
// - Every request is framed one way only: never Content-Length with chunked; a body as long
//   as its Content-Length and within the limit; at most one Content-Length; Transfer-Encoding
//   only as chunked and never in HTTP/1.0; no field value with CR or LF; and in the raw bytes
//   it came from, no obs-fold and no whitespace before a colon.
// - A request written back on its own, with a Content-Length, frames to the same request; the
//   bytes its stream used, framed alone, give the same requests and nothing left over.

#include "api/http_framing.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using namespace phalanx::api;

namespace {

// Says which invariant broke (the replay's seed and count reproduce the input), then crashes.
void check(bool ok, std::source_location where = std::source_location::current()) {
  if (ok)
    return;
  std::fprintf(stderr, "fuzz_http: invariant broken at line %u\n", unsigned(where.line()));
  __builtin_trap();
}

bool same_request(const framed_request& a, const framed_request& b) {
  return a.head.method == b.head.method && a.head.target == b.head.target &&
         a.head.version == b.head.version && a.head.fields == b.head.fields &&
         a.head.keep_alive == b.head.keep_alive &&
         a.head.content_length == b.head.content_length && a.head.chunked == b.head.chunked &&
         a.body == b.body;
}

bool same_result(const framing_result& a, const framing_result& b) {
  if (a.requests.size() != b.requests.size() || a.error.has_value() != b.error.has_value() ||
      a.must_close != b.must_close || a.consumed_bytes != b.consumed_bytes ||
      a.incomplete_bytes != b.incomplete_bytes)
    return false;
  for (std::size_t i = 0; i < a.requests.size(); ++i)
    if (!same_request(a.requests[i], b.requests[i]))
      return false;
  return !a.error || (a.error->fault == b.error->fault && a.error->message == b.error->message);
}

/// A deterministic source of piece sizes, seeded from the input.
struct splitter {
  uint64_t state;
  std::size_t next(std::size_t max) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return 1 + std::size_t((state >> 33) % max);
  }
};

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (char c : s)
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

/// Frames `data` as frame_requests does, feeding it in pieces of 1..max_piece bytes. With
/// `spans`, adds where each request lay in `data`.
framing_result frame_in_pieces(std::string_view data, const framing_limits& limits,
                               splitter split, std::size_t max_piece,
                               std::vector<std::pair<std::size_t, std::size_t>>* spans = nullptr) {
  framing_result out;
  request_framer f{limits};
  std::size_t fed = 0;
  for (;;) {
    switch (f.advance()) {
      case framer_state::reading_head:
      case framer_state::reading_body: {
        if (fed == data.size()) {
          out.consumed_bytes = f.consumed_bytes();
          out.incomplete_bytes = data.size() - static_cast<std::size_t>(out.consumed_bytes);
          return out;
        }
        std::size_t n = std::min(split.next(max_piece), data.size() - fed);
        f.feed(data.substr(fed, n));
        fed += n;
        break;
      }
      case framer_state::head_ready:
        f.accept_body();
        break;
      case framer_state::request_ready: {
        auto from = static_cast<std::size_t>(f.consumed_bytes());
        out.requests.push_back(f.take());
        if (spans != nullptr)
          spans->emplace_back(from, static_cast<std::size_t>(f.consumed_bytes()));
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
        // A failed framer takes nothing more, whatever arrives.
        f.feed(data.substr(fed));
        f.feed("GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n");
        check(f.advance() == framer_state::failed);
        check(f.buffered_bytes() == 0);
        return out;
    }
  }
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z')
      x = char(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z')
      y = char(y - 'A' + 'a');
    if (x != y)
      return false;
  }
  return true;
}

// The list's elements, without empty ones (RFC 9110 section 5.6.1.2), are one "chunked".
bool codings_are_chunked(std::string_view list) {
  int items = 0;
  bool chunked = false;
  while (!list.empty()) {
    std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t'))
      item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t'))
      item.remove_suffix(1);
    if (!item.empty()) {
      ++items;
      chunked = iequals(item, "chunked");
    }
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return items == 1 && chunked;
}

void check_well_framed(const framed_request& r, const framing_limits& limits) {
  const request_head& h = r.head;
  check(!(h.content_length && h.chunked));
  check(!h.content_length || r.body.size() == *h.content_length);
  check(r.body.size() <= limits.max_body_bytes);
  check(h.version == 10 || h.version == 11);
  check(!h.method.empty() && !h.target.empty());
  int content_lengths = 0;
  std::string codings;  // Of every Transfer-Encoding field: one list.
  bool has_transfer_encoding = false;
  for (const auto& [name, value] : h.fields) {
    check(!name.empty());
    check(value.find_first_of("\r\n") == std::string::npos);
    check(name.find_first_of(" \t\r\n:") == std::string::npos);
    if (iequals(name, "content-length")) {
      ++content_lengths;
      // One number, the one the body was framed by.
      check(!value.empty() && value.find_first_not_of("0123456789") == std::string::npos);
      check(h.content_length && std::to_string(*h.content_length) ==
                                  value.substr(std::min(value.find_first_not_of('0'),
                                                        value.size() - 1)));
    }
    if (iequals(name, "transfer-encoding")) {
      has_transfer_encoding = true;
      codings += "," + value;
    }
  }
  check(has_transfer_encoding == h.chunked);
  check(!h.chunked || (h.version == 11 && codings_are_chunked(codings)));
  check(content_lengths <= 1);
  check(!h.chunked || content_lengths == 0);
}

// The bytes a request was framed from, seen without the parser: its head has no obs-fold (a
// line that starts with whitespace) and no whitespace before a field name's colon.
void check_raw_head(std::string_view request) {
  std::string_view head = request.substr(0, request.find("\r\n\r\n"));
  std::size_t at = head.find("\r\n");
  while (at != std::string_view::npos) {
    std::size_t start = at + 2;
    std::size_t end = head.find("\r\n", start);
    std::string_view line = head.substr(start, end == std::string_view::npos ? end : end - start);
    check(!line.empty() && line.front() != ' ' && line.front() != '\t');
    std::string_view name = line.substr(0, line.find(':'));
    check(name.find_first_of(" \t") == std::string_view::npos);
    at = end;
  }
}

// The request alone, framed by Content-Length.
std::string write_back(const framed_request& r) {
  std::string out = r.head.method + " " + r.head.target +
                    (r.head.version == 10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
  for (const auto& [name, value] : r.head.fields) {
    if (iequals(name, "content-length") || iequals(name, "transfer-encoding"))
      continue;
    out += name + ": " + value + "\r\n";
  }
  if (!r.body.empty())
    out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  return out + "\r\n" + r.body;
}

void check_round_trip(const framed_request& r, const framing_limits& limits) {
  // ": " may add a byte per field: room for it.
  framing_limits wider{limits.max_header_bytes * 2 + 64, limits.max_body_bytes};
  auto again = frame_requests(write_back(r), wider);
  check(!again.error && again.requests.size() == 1 && again.incomplete_bytes == 0);
  const framed_request& b = again.requests.front();
  check(b.head.method == r.head.method && b.head.target == r.head.target &&
        b.head.version == r.head.version && b.head.keep_alive == r.head.keep_alive &&
        b.body == r.body);
}

void run(std::string_view data, const framing_limits& limits) {
  framing_result whole = frame_requests(data, limits);
  check(!whole.error || whole.must_close);
  check(whole.consumed_bytes + whole.incomplete_bytes <= data.size());
  for (const auto& r : whole.requests) {
    check_well_framed(r, limits);
    check_round_trip(r, limits);
  }

  splitter split{fnv1a(data)};
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  check(same_result(whole, frame_in_pieces(data, limits, split, 64, &spans)));
  for (auto [from, to] : spans)
    check_raw_head(data.substr(from, to - from));
  check(same_result(whole, frame_in_pieces(data, limits, split, 7)));
  if (data.size() <= 4096)
    check(same_result(whole, frame_in_pieces(data, limits, split, 1)));

  if (whole.must_close) {
    // Nothing after the end of the stream is ever parsed.
    std::string more(data);
    more += "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";
    check(same_result(whole, frame_requests(more, limits)));
    more.append(data);
    check(same_result(whole, frame_requests(more, limits)));
  } else {
    // The bytes the requests used frame to the same requests on their own.
    auto used = frame_requests(data.substr(0, std::size_t(whole.consumed_bytes)), limits);
    check(!used.error && used.incomplete_bytes == 0 &&
          used.requests.size() == whole.requests.size());
    for (std::size_t i = 0; i < used.requests.size(); ++i)
      check(same_request(used.requests[i], whole.requests[i]));
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  run(bytes, framing_limits{});             // The server's defaults.
  run(bytes, framing_limits{256, 64});      // Tight: every limit within reach.
  return 0;
}
