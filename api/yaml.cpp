// YAML <-> JSON values (codec.hpp: parse_yaml, to_yaml), on yaml-cpp.

#include "api/codec.hpp"

#include <boost/json.hpp>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <exception>
#include <optional>
#include <sstream>
#include <unordered_map>

namespace phalanx::api {

namespace json = boost::json;

namespace {

constexpr std::string_view yaml_str_tag = "tag:yaml.org,2002:str";
constexpr std::string_view yaml_int_tag = "tag:yaml.org,2002:int";
constexpr std::string_view yaml_float_tag = "tag:yaml.org,2002:float";
constexpr std::string_view yaml_bool_tag = "tag:yaml.org,2002:bool";
constexpr std::string_view yaml_null_tag = "tag:yaml.org,2002:null";
constexpr std::string_view yaml_map_tag = "tag:yaml.org,2002:map";
constexpr std::string_view yaml_seq_tag = "tag:yaml.org,2002:seq";

bool is_null_text(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

std::optional<bool> bool_of(std::string_view s) {
  static constexpr std::string_view yes[] = {"y",    "Y",    "yes", "Yes", "YES",
                                             "true", "True", "TRUE", "on", "On", "ON"};
  static constexpr std::string_view no[] = {"n",     "N",     "no",  "No",  "NO",
                                            "false", "False", "FALSE", "off", "Off", "OFF"};
  for (auto t : yes)
    if (s == t)
      return true;
  for (auto f : no)
    if (s == f)
      return false;
  return std::nullopt;
}

bool all_digits(std::string_view s, int base) {
  if (s.empty())
    return false;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return false;
    if (d >= base)
      return false;
  }
  return true;
}

enum class number_result { not_a_number, ok, out_of_range };

// Go's strconv.ParseInt(s, 0, 64) syntax, as go-yaml resolves plain integers; beyond int64 a
// non-negative value becomes uint64, then a double.
number_result int_of(std::string_view s, json::value& out) {
  std::string_view body = s;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  int base = 10;
  std::string_view digits = body;
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    base = 16;
    digits = body.substr(2);
  } else if (body.size() > 2 && body[0] == '0' && (body[1] == 'o' || body[1] == 'O')) {
    base = 8;
    digits = body.substr(2);
  } else if (body.size() > 2 && body[0] == '0' && (body[1] == 'b' || body[1] == 'B')) {
    base = 2;
    digits = body.substr(2);
  } else if (body.size() > 1 && body[0] == '0') {
    base = 8;
    digits = body.substr(1);
  }
  if (!all_digits(digits, base))
    return number_result::not_a_number;
  uint64_t magnitude = 0;
  auto r = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  bool overflow = r.ec == std::errc::result_out_of_range;
  if (!overflow) {
    if (!negative) {
      if (magnitude <= uint64_t(INT64_MAX))
        out = int64_t(magnitude);
      else
        out = magnitude;
      return number_result::ok;
    }
    if (magnitude <= uint64_t(INT64_MAX) + 1) {
      out = magnitude == uint64_t(INT64_MAX) + 1 ? INT64_MIN : -int64_t(magnitude);
      return number_result::ok;
    }
  }
  if (base != 10)
    return number_result::out_of_range;
  double d = 0;
  std::string text(s.substr(s[0] == '+' ? 1 : 0));
  auto fr = std::from_chars(text.data(), text.data() + text.size(), d);
  if (fr.ec != std::errc{} || !std::isfinite(d))
    return number_result::out_of_range;
  out = d;
  return number_result::ok;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, go-yaml's float syntax.
number_result float_of(std::string_view s, json::value& out) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-'))
    ++i;
  std::size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    ++i;
    ++int_digits;
  }
  bool dot = false;
  if (i < s.size() && s[i] == '.') {
    dot = true;
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      ++i;
      ++frac_digits;
    }
  }
  if (int_digits == 0 && (!dot || frac_digits == 0))
    return number_result::not_a_number;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-'))
      ++i;
    std::size_t exp_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      ++i;
      ++exp_digits;
    }
    if (exp_digits == 0)
      return number_result::not_a_number;
  }
  if (i != s.size())
    return number_result::not_a_number;
  std::string text(s.substr(s[0] == '+' ? 1 : 0));
  if (!text.empty() && text[0] == '.')
    text.insert(text.begin(), '0');
  if (text.size() > 1 && text[0] == '-' && text[1] == '.')
    text.insert(text.begin() + 1, '0');
  double d = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), d);
  if (r.ec == std::errc::result_out_of_range || !std::isfinite(d))
    return number_result::out_of_range;
  if (r.ec != std::errc{})
    return number_result::not_a_number;
  out = d;
  return number_result::ok;
}

bool is_special_float(std::string_view s) {
  static constexpr std::string_view specials[] = {
    ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
    ".nan", ".NaN", ".NAN"};
  for (auto t : specials)
    if (s == t)
      return true;
  return false;
}

// Builds JSON values straight from yaml-cpp's parser events, with every limit enforced as the
// events come: documents, depth, values and bytes after alias expansion. yaml-cpp's own node
// graph (YAML::LoadAll) is not used: on some malformed inputs its document loop never ends.
class builder final : public YAML::EventHandler {
 public:
  struct failure : std::exception {
    explicit failure(std::string m) : message(std::move(m)) {}
    const char* what() const noexcept override { return message.c_str(); }
    std::string message;
  };

  explicit builder(const parse_limits& limits) : limits_(limits) {}

  std::vector<json::value>& documents() { return docs_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++document_count_ > limits_.max_documents)
      fail(mark, "more than " + std::to_string(limits_.max_documents) + " documents");
    stack_.clear();
    anchors_.clear();
    root_.reset();
  }

  void OnDocumentEnd() override {
    if (root_ && !root_->is_null())
      docs_.push_back(std::move(*root_));
    root_.reset();
  }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (expecting_key()) {
      add_key(mark, "null");
      return;
    }
    add_value(mark, json::value(nullptr), anchor, {1, 0, 0});
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end())
      fail(mark, "an alias refers to an anchor that is not complete (a recursive alias)");
    if (expecting_key()) {
      const auto& v = it->second.value;
      if (v.is_string()) {
        add_key(mark, std::string(v.get_string()));
        return;
      }
      fail(mark, "a mapping key must be a scalar");
    }
    add_value(mark, it->second.value, 0, it->second.size);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    count(mark, {1, value.size(), 0});
    if (expecting_key()) {
      add_key(mark, value);
      if (anchor != 0)
        anchors_[anchor] = {json::value(json::string(value)), {1, value.size(), 0}};
      return;
    }
    json::value v = resolve(mark, tag, value);
    // Counted above; add_value must not count it again.
    place(mark, std::move(v), anchor, {1, value.size(), 0});
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    check_container_tag(mark, tag, yaml_seq_tag, "a sequence");
    open(mark, json::value(json::array{}), anchor);
  }

  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    check_container_tag(mark, tag, yaml_map_tag, "a mapping");
    open(mark, json::value(json::object{}), anchor);
  }

  void OnMapEnd() override { close(); }

 private:
  // What a value costs: values, string bytes, and its height (nesting levels it adds).
  struct cost {
    std::size_t values = 0;
    std::size_t bytes = 0;
    std::size_t height = 0;
  };
  struct frame {
    json::value value;  // An array or an object.
    YAML::anchor_t anchor = 0;
    std::optional<std::string> key;  // Objects: the key waiting for its value.
    cost size{1, 0, 1};
    YAML::Mark mark;
  };
  struct anchored {
    json::value value;
    cost size;
  };

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& message) {
    std::string where;
    if (mark.line >= 0)
      where = "line " + std::to_string(mark.line + 1) + ", column " +
              std::to_string(mark.column + 1) + ": ";
    throw failure(where + message);
  }

  bool expecting_key() const {
    return !stack_.empty() && stack_.back().value.is_object() && !stack_.back().key;
  }

  void add_key(const YAML::Mark& mark, std::string key) {
    auto& f = stack_.back();
    if (f.value.get_object().contains(key))
      fail(mark, "duplicate key " + scheduler::go_quote(key));
    f.key = std::move(key);
  }

  void count(const YAML::Mark& mark, const cost& c) {
    values_ += c.values;
    bytes_ += c.bytes;
    if (values_ > limits_.max_values)
      fail(mark, "the document expands to more than " + std::to_string(limits_.max_values) +
                   " values (aliases included)");
    if (bytes_ > limits_.max_expanded_bytes)
      fail(mark, "the document expands to more than " +
                   std::to_string(limits_.max_expanded_bytes) +
                   " bytes of strings (aliases included)");
  }

  void check_depth(const YAML::Mark& mark, std::size_t height) {
    if (stack_.size() + height > limits_.max_depth)
      fail(mark, "nesting deeper than " + std::to_string(limits_.max_depth) + " levels");
  }

  // A value arriving: counted, then placed.
  void add_value(const YAML::Mark& mark, json::value v, YAML::anchor_t anchor, const cost& c) {
    count(mark, c);
    place(mark, std::move(v), anchor, c);
  }

  void place(const YAML::Mark& mark, json::value v, YAML::anchor_t anchor, const cost& c) {
    check_depth(mark, c.height);
    if (anchor != 0)
      anchors_[anchor] = {v, c};
    if (stack_.empty()) {
      root_ = std::move(v);
      return;
    }
    auto& f = stack_.back();
    f.size.values += c.values;
    f.size.bytes += c.bytes;
    f.size.height = std::max(f.size.height, c.height + 1);
    if (f.value.is_array()) {
      f.value.get_array().push_back(std::move(v));
    } else {
      f.value.get_object().emplace(*f.key, std::move(v));
      f.key.reset();
    }
  }

  void open(const YAML::Mark& mark, json::value container, YAML::anchor_t anchor) {
    if (expecting_key())
      fail(mark, "a mapping key must be a scalar");
    count(mark, {1, 0, 0});
    check_depth(mark, 1);
    stack_.push_back({std::move(container), anchor, std::nullopt, {1, 0, 1}, mark});
  }

  void close() {
    if (stack_.empty())
      return;
    frame f = std::move(stack_.back());
    stack_.pop_back();
    // Already counted (the container itself and its children): place without counting.
    place(f.mark, std::move(f.value), f.anchor, f.size);
  }

  void check_container_tag(const YAML::Mark& mark, const std::string& tag, std::string_view ok,
                           const char* what) {
    if (!tag.empty() && tag != "?" && tag != "!" && tag != ok)
      fail(mark, "unsupported tag " + scheduler::go_quote(tag) + " on " + what);
  }

  json::value resolve(const YAML::Mark& mark, const std::string& tag, const std::string& text) {
    if (tag == "!" || tag == yaml_str_tag)
      return json::value(json::string(text));
    if (tag == yaml_null_tag)
      return json::value(nullptr);
    if (tag == yaml_bool_tag) {
      if (auto b = bool_of(text))
        return json::value(*b);
      fail(mark, scheduler::go_quote(text) + " is not a boolean");
    }
    json::value out;
    if (tag == yaml_int_tag) {
      if (int_of(text, out) == number_result::ok)
        return out;
      fail(mark, scheduler::go_quote(text) + " is not an integer in range");
    }
    if (tag == yaml_float_tag) {
      if (int_of(text, out) == number_result::ok || float_of(text, out) == number_result::ok)
        return out;
      fail(mark, scheduler::go_quote(text) + " is not a finite number");
    }
    if (tag != "?" && !tag.empty())
      fail(mark, "unsupported tag " + scheduler::go_quote(tag));
    // A plain scalar: resolve it.
    if (is_null_text(text))
      return json::value(nullptr);
    if (auto b = bool_of(text))
      return json::value(*b);
    switch (int_of(text, out)) {
      case number_result::ok:
        return out;
      case number_result::out_of_range:
        fail(mark, "the number " + text + " is out of range");
      case number_result::not_a_number:
        break;
    }
    switch (float_of(text, out)) {
      case number_result::ok:
        return out;
      case number_result::out_of_range:
        fail(mark, "the number " + text + " is out of range");
      case number_result::not_a_number:
        break;
    }
    if (is_special_float(text))
      fail(mark, text + " is not a finite number, which JSON cannot represent");
    return json::value(json::string(text));
  }

  const parse_limits& limits_;
  std::vector<json::value> docs_;
  std::vector<frame> stack_;
  std::unordered_map<YAML::anchor_t, anchored> anchors_;
  std::optional<json::value> root_;
  std::size_t document_count_ = 0;
  std::size_t values_ = 0;
  std::size_t bytes_ = 0;
};

api_error too_large(std::size_t size, std::size_t limit) {
  api_error e;
  e.reason = status_reason::request_entity_too_large;
  e.message = "the input is " + std::to_string(size) + " bytes; the limit is " +
              std::to_string(limit) + " bytes";
  return e;
}

// True when a plain scalar `s` would read back as something else than this string.
bool needs_quotes(std::string_view s) {
  if (is_null_text(s) || bool_of(s) || is_special_float(s))
    return true;
  json::value probe;
  if (int_of(s, probe) != number_result::not_a_number ||
      float_of(s, probe) != number_result::not_a_number)
    return true;
  // Document markers would end the document.
  if (s.starts_with("---") || s.starts_with("..."))
    return true;
  // Leading or trailing blanks would be trimmed.
  if (s.front() == ' ' || s.back() == ' ' || s.front() == '\t' || s.back() == '\t')
    return true;
  return false;
}

// Control characters other than newlines do not survive a plain or literal scalar (a trailing
// "\r" is a line ending); such strings are written double-quoted, with escapes.
bool has_control(std::string_view s, bool allow_newline) {
  for (unsigned char c : s) {
    if ((c < 0x20 && !(allow_newline && c == '\n')) || c == 0x7f)
      return true;
  }
  return false;
}

void emit(YAML::Emitter& out, const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      out << YAML::Null;
      break;
    case json::kind::bool_:
      out << v.get_bool();
      break;
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: {
      std::string text = json::serialize(v);
      out << text;
      break;
    }
    case json::kind::string: {
      std::string_view s = v.get_string();
      bool multi_line = s.find('\n') != std::string_view::npos;
      // A literal block ("|", clip chomping) keeps its lines as they are, but not a leading
      // blank or newline, and it always ends with exactly one newline.
      bool literal_ok = multi_line && !has_control(s, true) && s.front() != ' ' &&
                        s.front() != '\n' && s.ends_with('\n') && !s.ends_with("\n\n");
      if (needs_quotes(s) || has_control(s, true) || (multi_line && !literal_ok))
        out << YAML::DoubleQuoted << std::string(s);
      else if (multi_line)
        out << YAML::Literal << std::string(s);
      else
        out << std::string(s);
      break;
    }
    case json::kind::array: {
      const auto& arr = v.get_array();
      if (arr.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        break;
      }
      out << YAML::BeginSeq;
      for (const auto& e : arr)
        emit(out, e);
      out << YAML::EndSeq;
      break;
    }
    case json::kind::object: {
      const auto& obj = v.get_object();
      if (obj.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        break;
      }
      out << YAML::BeginMap;
      for (const auto& kv : obj) {
        out << YAML::Key;
        std::string_view k = kv.key();
        if (needs_quotes(k) || has_control(k, false))
          out << YAML::DoubleQuoted;
        out << std::string(k);
        out << YAML::Value;
        emit(out, kv.value());
      }
      out << YAML::EndMap;
      break;
    }
  }
}

} // namespace

outcome<std::vector<json::value>> parse_yaml(std::string_view text, const parse_limits& limits) {
  if (text.size() > limits.max_bytes)
    return too_large(text.size(), limits.max_bytes);
  if (!is_valid_utf8(text))
    return api_error::bad_request("invalid YAML: the input is not valid UTF-8");
  if (text.find('\0') != std::string_view::npos)
    return api_error::bad_request("invalid YAML: the input contains a NUL byte");
  builder b{limits};
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser{in};
    while (parser.HandleNextDocument(b)) {
    }
  } catch (const builder::failure& e) {
    return api_error::bad_request("invalid YAML: " + e.message);
  } catch (const YAML::Exception& e) {
    std::string where;
    if (e.mark.line >= 0)
      where = " at line " + std::to_string(e.mark.line + 1) + ", column " +
              std::to_string(e.mark.column + 1);
    return api_error::bad_request("invalid YAML" + where + ": " + e.msg);
  } catch (const std::exception& e) {
    return api_error::bad_request(std::string("invalid YAML: ") + e.what());
  }
  return std::move(b.documents());
}

std::string to_yaml(const json::value& v) {
  YAML::Emitter out;
  out.SetNullFormat(YAML::LowerNull);
  out.SetIndent(2);
  emit(out, v);
  std::string text = out.c_str();
  if (!text.empty() && text.back() != '\n')
    text += '\n';
  return text;
}

} // namespace phalanx::api
