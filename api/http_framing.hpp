#pragma once

// HTTP/1.1 request framing (RFC 9112): where each request of a connection's byte stream begins
// and ends, and which streams are refused. The server (server.cpp) reads every request through
// request_framer; the fuzz harness (api/fuzz/fuzz_http.cpp) drives the same code without sockets.
// This header does not include Beast (http_framing.cpp reads the request line and fields with
// Beast's parser and adds the rules below; it decodes bodies itself).
//
// A body is framed by exactly one Content-Length (digits only) or by a Transfer-Encoding whose
// one coding is a final `chunked`; anything a front proxy could read another way is refused
// (request smuggling):
// - Content-Length together with Transfer-Encoding (RFC 9112 section 6.3, rule 3);
// - Content-Length twice, even with equal values, or as a list ("5, 5"), or not a number;
// - a final transfer coding other than chunked (`xchunked`, `identity`, `chunked, identity`):
//   the body's length cannot be known (section 6.3, rule 4);
// - chunked twice (`chunked, chunked`, or two Transfer-Encoding fields each naming it);
// - a coding before chunked (`gzip, chunked`): decoding is not implemented;
// - Transfer-Encoding in an HTTP/1.0 request (section 6.1);
// - obs-fold, a field line that starts with a space or tab (section 5.2), and whitespace
//   between a field name and its colon (section 5.1); bare CR or LF;
// - in a chunked body: a chunk-size line that breaks the grammar (section 7.1: hex digits,
//   then only well-formed extensions), does not fit in 64 bits or runs beyond 4 KiB; a chunk
//   not followed by CRLF; a malformed trailer (trailer fields are read and dropped).
// Every refusal is final: once the framing is in doubt, where the next request begins is not
// known, so nothing after the fault is parsed and the connection must be closed after the
// answer. The answer's status is 413 for body_too_large and 400 for every other fault.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace phalanx::api {

/// Why a request stream was refused. Each one ends the stream (see the file comment).
enum class framing_fault {
  malformed_request,     // The request line or a field breaks the syntax (Beast's verdict).
  header_too_large,      // No end of the header within max_header_bytes.
  obsolete_line_folding, // A field line starts with a space or tab.
  field_name_whitespace, // Whitespace between a field name and its colon.
  bad_content_length,    // Content-Length is not one decimal number of bytes.
  duplicate_content_length,
  content_length_with_transfer_encoding,
  final_coding_not_chunked,     // The body's length cannot be known.
  chunked_twice,
  unsupported_transfer_coding,  // A coding before chunked (gzip, deflate...).
  transfer_encoding_in_http10,
  malformed_body,        // A chunk size, chunk extension, chunk end or trailer breaks the syntax.
  body_too_large,        // Content-Length, or the chunks so far, beyond max_body_bytes.
};
inline constexpr framing_fault framing_fault_last = framing_fault::body_too_large;

/// "malformed_request", "header_too_large", ...
std::string_view to_string(framing_fault f) noexcept;
/// The status the answer carries: 413 for body_too_large, else 400.
int http_status(framing_fault f) noexcept;

struct framing_error {
  framing_fault fault = framing_fault::malformed_request;
  /// What the client reads in the Status message ("the request body is 2097152 bytes; the limit
  /// is 1048576 bytes"). Quotes at most 64 bytes of what the client sent.
  std::string message;
};

struct framing_limits {
  /// The request line and fields, their CRLFs and the empty line that ends them.
  /// Default: 64 KiB.
  std::size_t max_header_bytes = std::size_t{64} << 10;
  /// A request's body, after chunked decoding. Default: 1 MiB.
  std::size_t max_body_bytes = std::size_t{1} << 20;
};

/// A request's line and fields, as sent (field values without surrounding whitespace).
struct request_head {
  std::string method;
  std::string target;
  unsigned version = 11;  // 10 or 11.
  std::vector<std::pair<std::string, std::string>> fields;  // In order; names as sent.
  bool keep_alive = true;                                   // Connection and version.
  std::optional<std::uint64_t> content_length;
  bool chunked = false;

  /// The first field of that name (any case), or "".
  std::string_view field(std::string_view name) const;
  /// True when a body follows the head (a Content-Length above 0, or chunked).
  bool has_body() const noexcept;
  /// True when the client waits for 100 Continue before sending its body.
  bool expects_continue() const;
};

struct framed_request {
  request_head head;
  std::string body;  // Decoded when chunked; trailer fields are read and dropped.
};

/// The states of request_framer. Legal moves:
///   reading_head -> head_ready | failed          (advance)
///   head_ready   -> reading_body | request_ready | failed  (accept_body)
///   head_ready   -> reading_head                 (skip_head, for a head without a body)
///   reading_body -> request_ready | failed       (advance)
///   request_ready -> reading_head                (take)
/// failed is final.
enum class framer_state {
  /// Waiting for the bytes of a request's line and fields. The first state.
  reading_head,
  /// A head is complete: the caller checks it (auth, limits) and calls accept_body() or
  /// skip_head(), or refuses it and closes the connection.
  head_ready,
  /// Waiting for the bytes of the body the head announced.
  reading_body,
  /// A whole request is ready: take() it.
  request_ready,
  /// The stream broke a framing rule: error() says which. Nothing more is parsed.
  failed,
};
inline constexpr framer_state framer_state_last = framer_state::failed;

/// "reading_head", "head_ready", ...
std::string_view to_string(framer_state s) noexcept;

/// Frames the requests of one connection, in order, from the bytes it sent. Feed what arrives
/// (in pieces of any size: the result does not depend on where the stream was split), advance,
/// and act on the state. Owned by one connection; not thread-safe.
class request_framer {
 public:
  explicit request_framer(framing_limits limits = {});
  ~request_framer();
  request_framer(request_framer&&) noexcept;
  request_framer& operator=(request_framer&&) noexcept;

  /// Appends bytes the connection received. Bytes fed once failed are dropped.
  void feed(std::string_view bytes);
  /// Parses as far as the buffered bytes allow. Returns the state: reading_head or reading_body
  /// mean that more bytes are needed; the others wait for the caller.
  framer_state advance();
  framer_state state() const noexcept { return state_; }

  /// The head; valid from head_ready until take() or skip_head().
  const request_head& head() const;
  /// From head_ready: goes on to the body. A Content-Length beyond max_body_bytes fails
  /// (body_too_large) at once, without waiting for the body; a head without a body is
  /// request_ready at once. Returns the new state (call advance() while it is reading_body).
  framer_state accept_body();
  /// From head_ready, when the caller answers without reading a body: a head without a body
  /// moves to reading_head (the next request may follow) and true is returned. With a body
  /// pending nothing changes and false is returned: the caller must close the connection, as
  /// the body would otherwise be read as the next request.
  [[nodiscard]] bool skip_head();
  /// From request_ready: the request; moves to reading_head.
  framed_request take();

  /// The fault; valid in failed.
  const framing_error& error() const;
  /// Bytes received and not yet part of a taken request or a parsed head.
  std::size_t buffered_bytes() const noexcept;
  /// Bytes that formed the requests taken so far.
  std::uint64_t consumed_bytes() const noexcept { return consumed_; }

 private:
  struct body_reader;
  class line_check;

  // A chunk-size line with its extensions. Default: 4 KiB.
  static constexpr std::size_t max_chunk_line_bytes = 4096;

  bool transition(framer_state to);
  void parse_head();
  void parse_whole_head(std::string_view head);
  void parse_body();
  // Where the CRLF CRLF that ends the section at the read position lies (past it), if within
  // `limit` bytes; resumes the search where the last call stopped.
  std::optional<std::size_t> find_section_end(std::size_t limit);
  void fail(framing_fault fault, std::string message);
  void consume(std::size_t n);
  std::string_view unread() const noexcept;

  framing_limits limits_;
  framer_state state_ = framer_state::reading_head;
  std::string buf_;              // Bytes received; those before pos_ are consumed.
  std::size_t pos_ = 0;
  std::size_t scan_ = 0;         // Where to resume the search for a line's or section's end.
  std::uint64_t consumed_ = 0;   // Of the requests taken.
  std::uint64_t request_bytes_ = 0;  // Of the request being read.
  std::unique_ptr<line_check> line_check_;  // The request line of the head being read.
  std::unique_ptr<body_reader> body_;       // The body of the request in progress.
  request_head head_;
  std::optional<framing_error> error_;
};

/// Frames a whole byte stream as the server would read it from one connection: each request's
/// body is accepted, requests are produced in order until the bytes run out, a request that
/// asks to close (Connection: close, HTTP/1.0 without keep-alive), or the first fault.
struct framing_result {
  std::vector<framed_request> requests;
  /// The fault that ended the stream; no request is ever produced from bytes after it.
  std::optional<framing_error> error;
  /// True after a fault or a request that asked to close: the server closes the connection.
  bool must_close = false;
  /// Bytes after the last request that do not (yet) form one; 0 when must_close (the rest of
  /// the stream is never read).
  std::size_t incomplete_bytes = 0;
  /// Bytes that formed the requests.
  std::uint64_t consumed_bytes = 0;
};
framing_result frame_requests(std::string_view bytes, const framing_limits& limits = {});

} // namespace phalanx::api
