#include "api/ctl/jsonpath.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>

namespace phalanx::api::ctl {

namespace json = boost::json;

namespace jsonpath_detail {

enum class step_kind {
  field,        // .name (name "*" is the wildcard)
  recursive,    // ..
  slice,        // [start:end:step] and [index]
  filter,       // [?(left op right)]
  union_of,     // [a,b]: each branch applied to all values, one after the other
  current,      // @ and $
  literal,      // "text", 12, 1.5, true
  identifier,   // any other word: an error when executed, as in kubectl
};

struct step;
using path = std::vector<step>;

struct filter_operand {
  bool is_path = false;
  path steps;           // When is_path: relative to the element.
  json::value literal;  // Otherwise.
};

struct step {
  step_kind kind = step_kind::current;
  std::string name;  // field, identifier
  // slice
  std::optional<int64_t> start, end, stride;
  bool is_range = false;  // A colon was given: a slice, not one index.
  // filter
  filter_operand left, right;
  std::string op;  // "" for an existence test.
  // union
  std::vector<path> branches;
  // literal
  json::value literal;
};

enum class node_kind { text, action, range, end };

struct node {
  node_kind kind = node_kind::text;
  std::string text;
  path steps;
};

} // namespace jsonpath_detail

using namespace jsonpath_detail;

namespace {

status parse_error(std::string message) {
  return status{errc::invalid_argument, std::move(message)};
}

std::string code_point_text(char c) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "U+%04X '%c'", static_cast<unsigned>(static_cast<unsigned char>(c)),
                c);
  return buf;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool ends_field(char c) {
  return is_space(c) || std::string_view(".[](){}=!<>\"',&|").find(c) != std::string_view::npos;
}

bool is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Go's strconv.Unquote of a double-quoted literal (quotes included); nullopt when invalid.
std::optional<std::string> unquote(std::string_view q) {
  std::string out;
  for (std::size_t i = 1; i + 1 < q.size(); ++i) {
    char c = q[i];
    if (c != '\\') {
      if (c == '"')
        return std::nullopt;
      out += c;
      continue;
    }
    if (i + 2 >= q.size())
      return std::nullopt;
    char e = q[++i];
    auto hex = [&](std::size_t digits) -> std::optional<uint32_t> {
      if (i + digits >= q.size())
        return std::nullopt;
      uint32_t v = 0;
      auto r = std::from_chars(q.data() + i + 1, q.data() + i + 1 + digits, v, 16);
      if (r.ec != std::errc{} || r.ptr != q.data() + i + 1 + digits)
        return std::nullopt;
      i += digits;
      return v;
    };
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '\\': out += '\\'; break;
      case '"': out += '"'; break;
      case 'x': {
        auto v = hex(2);
        if (!v)
          return std::nullopt;
        out += static_cast<char>(*v);
        break;
      }
      case 'u':
      case 'U': {
        auto v = hex(e == 'u' ? 4 : 8);
        if (!v || *v > 0x10FFFF)
          return std::nullopt;
        append_utf8(out, *v);
        break;
      }
      default:
        return std::nullopt;
    }
  }
  return out;
}

class parser {
 public:
  explicit parser(std::string_view text) : text_(text) {}

  result<std::vector<node>> parse_template() {
    std::vector<node> nodes;
    std::size_t i = 0;
    while (i < text_.size()) {
      auto open = text_.find('{', i);
      if (open == std::string_view::npos) {
        nodes.push_back({node_kind::text, std::string(text_.substr(i)), {}});
        break;
      }
      if (open > i)
        nodes.push_back({node_kind::text, std::string(text_.substr(i, open - i)), {}});
      // The action ends at the first '}' outside a double-quoted string.
      std::size_t j = open + 1;
      bool quoted = false;
      for (; j < text_.size(); ++j) {
        if (quoted && text_[j] == '\\') {
          ++j;
          continue;
        }
        if (text_[j] == '"')
          quoted = !quoted;
        else if (!quoted && text_[j] == '}')
          break;
      }
      if (j >= text_.size()) {
        if (!quoted)
          return parse_error("unclosed action");
        // A quote left open: what the action's own parser says about the rest (an open filter).
        if (auto n = parse_action(text_.substr(open + 1)); !n)
          return n.error();
        return parse_error("unterminated quoted string");
      }
      auto n = parse_action(text_.substr(open + 1, j - open - 1));
      if (!n)
        return n.error();
      nodes.push_back(std::move(*n));
      i = j + 1;
    }
    return nodes;
  }

  static result<node> parse_action(std::string_view body) {
    std::size_t i = 0;
    while (i < body.size() && is_space(body[i]))
      ++i;
    std::string_view rest = body.substr(i);
    auto keyword = [&](std::string_view word) {
      return rest.starts_with(word) &&
             (rest.size() == word.size() || is_space(rest[word.size()]));
    };
    node n;
    if (keyword("range")) {
      n.kind = node_kind::range;
      rest.remove_prefix(5);
    } else if (keyword("end")) {
      n.kind = node_kind::end;
      return n;
    } else {
      n.kind = node_kind::action;
    }
    auto steps = parse_path(rest, false);
    if (!steps)
      return steps.error();
    n.steps = std::move(*steps);
    return n;
  }

  // The steps of a path. `in_brackets`: the text of a quoted key ('a.b'), where spaces and
  // literals have no place.
  static result<path> parse_path(std::string_view s, bool in_brackets) {
    path steps;
    std::size_t i = 0;
    while (i < s.size()) {
      char c = s[i];
      if (is_space(c)) {
        ++i;
        continue;
      }
      if (c == '@' || c == '$') {
        steps.push_back({});
        ++i;
        continue;
      }
      if (c == '.') {
        if (i + 1 < s.size() && s[i + 1] == '.') {
          step r;
          r.kind = step_kind::recursive;
          steps.push_back(std::move(r));
          ++i;  // The second dot starts the field that follows, if any.
          if (i + 1 >= s.size() || (ends_field(s[i + 1]) && s[i + 1] != '.'))
            ++i;
          continue;
        }
        ++i;
        std::string name;
        if (i < s.size() && s[i] == '*') {
          name = "*";
          ++i;
        }
        while (i < s.size() && !name.starts_with("*")) {
          if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '.') {
            name += '.';
            i += 2;
            continue;
          }
          if (ends_field(s[i]))
            break;
          name += s[i++];
        }
        step f;
        f.kind = step_kind::field;
        f.name = std::move(name);
        steps.push_back(std::move(f));
        continue;
      }
      if (c == '[') {
        auto b = parse_brackets(s, i);
        if (!b)
          return b.error();
        for (auto& x : *b)
          steps.push_back(std::move(x));
        continue;
      }
      if (in_brackets)
        return parse_error("unrecognized character in action: " + code_point_text(c));
      if (c == '"' || c == '\'') {
        std::size_t j = i + 1;
        while (j < s.size() && s[j] != c) {
          if (c == '"' && s[j] == '\\')
            ++j;
          ++j;
        }
        if (j >= s.size())
          return parse_error("unterminated quoted string");
        step lit;
        lit.kind = step_kind::literal;
        if (c == '"') {
          auto u = unquote(s.substr(i, j - i + 1));
          if (!u)
            return parse_error("unquote string " + std::string(s.substr(i, j - i + 1)) +
                               " error invalid syntax");
          lit.literal = json::string(*u);
        } else {
          lit.literal = json::string(s.substr(i + 1, j - i - 1));
        }
        steps.push_back(std::move(lit));
        i = j + 1;
        continue;
      }
      if (is_digit(c) || (c == '-' && i + 1 < s.size() && is_digit(s[i + 1]))) {
        auto lit = parse_number(s, i);
        if (!lit)
          return lit.error();
        steps.push_back(std::move(*lit));
        continue;
      }
      if (is_letter(c)) {
        std::size_t j = i;
        while (j < s.size() && (is_letter(s[j]) || is_digit(s[j])))
          ++j;
        std::string word(s.substr(i, j - i));
        step w;
        if (word == "true" || word == "false") {
          w.kind = step_kind::literal;
          w.literal = word == "true";
        } else {
          w.kind = step_kind::identifier;
          w.name = word;
        }
        steps.push_back(std::move(w));
        i = j;
        continue;
      }
      return parse_error("unrecognized character in action: " + code_point_text(c));
    }
    return steps;
  }

  static result<step> parse_number(std::string_view s, std::size_t& i) {
    std::size_t j = i;
    if (s[j] == '-')
      ++j;
    bool is_float = false;
    while (j < s.size() && (is_digit(s[j]) || s[j] == '.')) {
      if (s[j] == '.') {
        if (is_float || j + 1 >= s.size() || !is_digit(s[j + 1]))
          break;
        is_float = true;
      }
      ++j;
    }
    std::string_view digits = s.substr(i, j - i);
    step lit;
    lit.kind = step_kind::literal;
    if (is_float) {
      double d = 0;
      std::from_chars(digits.data(), digits.data() + digits.size(), d);
      lit.literal = d;
    } else {
      int64_t v = 0;
      auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (r.ec != std::errc{})
        return parse_error("cannot parse number " + std::string(digits));
      lit.literal = v;
    }
    i = j;
    return lit;
  }

  // "[...]" at s[i]: a filter, a union, quoted keys or a slice. Advances i past it.
  static result<path> parse_brackets(std::string_view s, std::size_t& i) {
    if (s.substr(i).starts_with("[?(")) {
      std::size_t j = i + 3;
      char quote = 0;
      for (; j < s.size(); ++j) {
        if (quote != 0) {
          if (s[j] == quote)
            quote = 0;
          continue;
        }
        if (s[j] == '"' || s[j] == '\'')
          quote = s[j];
        else if (s[j] == ')')
          break;
      }
      if (j >= s.size())
        return parse_error("unterminated filter");
      if (j + 1 >= s.size() || s[j + 1] != ']')
        return parse_error("unclosed array expect ]");
      auto f = parse_filter(s.substr(i + 3, j - i - 3));
      if (!f)
        return f.error();
      i = j + 2;
      return path{std::move(*f)};
    }
    std::size_t j = i + 1;
    bool quoted = false;
    for (; j < s.size(); ++j) {
      if (s[j] == '\'')
        quoted = !quoted;
      else if (!quoted && s[j] == ']')
        break;
    }
    if (j >= s.size())
      return parse_error("unterminated array");
    std::string_view inside = s.substr(i + 1, j - i - 1);
    i = j + 1;
    return parse_subscript(inside);
  }

  static std::string_view trim(std::string_view t) {
    while (!t.empty() && is_space(t.front()))
      t.remove_prefix(1);
    while (!t.empty() && is_space(t.back()))
      t.remove_suffix(1);
    return t;
  }

  // What is between the brackets of a subscript that is not a filter.
  static result<path> parse_subscript(std::string_view inside) {
    if (inside.find(',') != std::string_view::npos) {
      step u;
      u.kind = step_kind::union_of;
      std::size_t start = 0;
      while (true) {
        auto comma = inside.find(',', start);
        auto part = trim(inside.substr(start, comma == std::string_view::npos
                                                  ? std::string_view::npos
                                                  : comma - start));
        auto branch = parse_subscript(part);
        if (!branch)
          return branch.error();
        u.branches.push_back(std::move(*branch));
        if (comma == std::string_view::npos)
          break;
        start = comma + 1;
      }
      return path{std::move(u)};
    }
    if (inside.size() >= 2 && inside.front() == '\'' && inside.back() == '\'' &&
        inside.substr(1, inside.size() - 2).find('\'') == std::string_view::npos) {
      // kubectl reads ['a.b'] as .a.b; a dot inside a key is written \. here too.
      return parse_path("." + std::string(inside.substr(1, inside.size() - 2)), true);
    }
    if (inside == "*")
      inside = ":";
    // [start][:end][:step], each an optional signed integer.
    step sl;
    sl.kind = step_kind::slice;
    std::optional<int64_t>* parts[3] = {&sl.start, &sl.end, &sl.stride};
    std::size_t part = 0;
    std::size_t k = 0;
    auto invalid = [&] { return parse_error("invalid array index " + std::string(inside)); };
    while (true) {
      std::size_t begin = k;
      if (k < inside.size() && inside[k] == '-')
        ++k;
      while (k < inside.size() && is_digit(inside[k]))
        ++k;
      std::string_view number = inside.substr(begin, k - begin);
      if (number == "-")
        return invalid();
      if (!number.empty()) {
        int64_t v = 0;
        auto r = std::from_chars(number.data(), number.data() + number.size(), v);
        if (r.ec != std::errc{})
          return invalid();
        *parts[part] = v;
      }
      if (k == inside.size())
        break;
      if (inside[k] != ':' || part == 2)
        return invalid();
      sl.is_range = true;
      ++part;
      ++k;
    }
    return path{std::move(sl)};
  }

  static result<filter_operand> parse_operand(std::string_view t) {
    filter_operand o;
    t = trim(t);
    if (t.empty())
      return parse_error("empty filter operand");
    if (t.front() == '@' || t.front() == '$') {
      auto p = parse_path(t, true);
      if (!p)
        return p.error();
      o.is_path = true;
      o.steps = std::move(*p);
      return o;
    }
    auto p = parse_path(t, false);
    if (!p)
      return p.error();
    if (p->size() == 1 && (*p)[0].kind == step_kind::identifier) {
      o.is_path = true;  // kubectl's "unrecognized identifier X" when the filter runs.
      o.steps = std::move(*p);
      return o;
    }
    if (p->size() != 1 || (*p)[0].kind != step_kind::literal)
      return parse_error("unrecognized filter operand " + std::string(t));
    o.literal = (*p)[0].literal;
    return o;
  }

  static result<step> parse_filter(std::string_view body) {
    // The operator: the first of = ! < > outside quotes.
    std::size_t op_at = std::string_view::npos;
    char quote = 0;
    for (std::size_t k = 0; k < body.size(); ++k) {
      char c = body[k];
      if (quote != 0) {
        if (c == quote)
          quote = 0;
        continue;
      }
      if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '=' || c == '!' || c == '<' || c == '>') {
        op_at = k;
        break;
      }
    }
    step f;
    f.kind = step_kind::filter;
    if (op_at == std::string_view::npos) {
      auto l = parse_operand(body);
      if (!l)
        return l.error();
      f.left = std::move(*l);
      return f;
    }
    std::size_t op_end = op_at;
    while (op_end < body.size() && std::string_view("=!<>").find(body[op_end]) != std::string_view::npos)
      ++op_end;
    // An operator kubectl does not know ("=", "<>") is an error when the filter runs.
    f.op = std::string(body.substr(op_at, op_end - op_at));
    if (trim(body.substr(op_end)).empty())
      return parse_error("unrecognized character in action: " +
                         code_point_text(body[op_end - 1]));
    auto l = parse_operand(body.substr(0, op_at));
    if (!l)
      return l.error();
    auto r = parse_operand(body.substr(op_end));
    if (!r)
      return r.error();
    f.left = std::move(*l);
    f.right = std::move(*r);
    return f;
  }

 private:
  std::string_view text_;
};

// ---- Printing as Go does

// The shortest digits of d and its decimal exponent: d = 0.DIGITS x 10^point.
struct decimal_digits {
  bool negative = false;
  std::string digits;
  int point = 0;
};

decimal_digits shortest(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view s(buf, static_cast<std::size_t>(r.ptr - buf));
  decimal_digits out;
  if (!s.empty() && s.front() == '-') {
    out.negative = true;
    s.remove_prefix(1);
  }
  auto e = s.find('e');
  std::string_view mantissa = s.substr(0, e);
  int exponent = 0;
  std::string_view exp_text = s.substr(e + 1);
  if (!exp_text.empty() && exp_text.front() == '+')
    exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  for (char c : mantissa)
    if (c != '.')
      out.digits += c;
  while (out.digits.size() > 1 && out.digits.back() == '0')
    out.digits.pop_back();
  out.point = exponent + 1;
  if (out.digits == "0")
    out.point = 1;
  return out;
}

std::string format_e(const decimal_digits& d, int min_exp_digits) {
  std::string out = d.negative ? "-" : "";
  out += d.digits[0];
  if (d.digits.size() > 1)
    out += "." + d.digits.substr(1);
  int exp = d.digits == "0" ? 0 : d.point - 1;
  out += exp < 0 ? "e-" : "e+";
  std::string e = std::to_string(exp < 0 ? -exp : exp);
  while (static_cast<int>(e.size()) < min_exp_digits)
    e = "0" + e;
  return out + e;
}

std::string format_f(const decimal_digits& d) {
  std::string out = d.negative ? "-" : "";
  if (d.point <= 0) {
    out += "0." + std::string(static_cast<std::size_t>(-d.point), '0') + d.digits;
  } else if (static_cast<std::size_t>(d.point) >= d.digits.size()) {
    out += d.digits + std::string(static_cast<std::size_t>(d.point) - d.digits.size(), '0');
  } else {
    out += d.digits.substr(0, static_cast<std::size_t>(d.point)) + "." +
           d.digits.substr(static_cast<std::size_t>(d.point));
  }
  return out;
}

// fmt's %v of a float64 (strconv 'g' with the shortest digits).
std::string go_float_text(double v) {
  auto d = shortest(v);
  int exp = d.point - 1;
  if (exp < -4 || exp >= 6)
    return format_e(d, 2);
  return format_f(d);
}

// encoding/json's float64.
std::string go_float_json(double v) {
  double a = v < 0 ? -v : v;
  auto d = shortest(v);
  if (a != 0 && (a < 1e-6 || a >= 1e21))
    return format_e(d, 1);
  return format_f(d);
}

// Whether a JSON number is one kubectl holds as an int64 (others it holds as float64).
bool is_int(const json::value& v) {
  return v.is_int64() ||
         (v.is_uint64() && v.get_uint64() <= static_cast<uint64_t>(INT64_MAX));
}

int64_t int_of(const json::value& v) {
  return v.is_int64() ? v.get_int64() : static_cast<int64_t>(v.get_uint64());
}

double float_of(const json::value& v) {
  if (v.is_double())
    return v.get_double();
  if (v.is_uint64())
    return static_cast<double>(v.get_uint64());
  return static_cast<double>(v.get_int64());
}

void go_string(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
      continue;
    }
    // U+2028 and U+2029 (E2 80 A8/A9), which JavaScript reads as line ends.
    if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
         static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
      continue;
    }
    out += static_cast<char>(c);
  }
  out += '"';
}

void write_go_json(std::string& out, const json::value& v, int indent, int depth) {
  auto newline = [&](int level) {
    if (indent > 0) {
      out += '\n';
      out.append(static_cast<std::size_t>(indent * level), ' ');
    }
  };
  switch (v.kind()) {
    case json::kind::null:
      out += "null";
      return;
    case json::kind::bool_:
      out += v.get_bool() ? "true" : "false";
      return;
    case json::kind::int64:
    case json::kind::uint64:
      out += is_int(v) ? std::to_string(int_of(v)) : go_float_json(float_of(v));
      return;
    case json::kind::double_:
      out += go_float_json(v.get_double());
      return;
    case json::kind::string:
      go_string(out, v.get_string());
      return;
    case json::kind::array: {
      const auto& a = v.get_array();
      out += '[';
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (i > 0)
          out += ',';
        newline(depth + 1);
        write_go_json(out, a[i], indent, depth + 1);
      }
      if (!a.empty())
        newline(depth);
      out += ']';
      return;
    }
    case json::kind::object: {
      const auto& o = v.get_object();
      std::vector<const json::key_value_pair*> members;
      for (const auto& kv : o)
        members.push_back(&kv);
      std::sort(members.begin(), members.end(),
                [](const auto* a, const auto* b) { return a->key() < b->key(); });
      out += '{';
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (i > 0)
          out += ',';
        newline(depth + 1);
        go_string(out, members[i]->key());
        out += indent > 0 ? ": " : ":";
        write_go_json(out, members[i]->value(), indent, depth + 1);
      }
      if (!members.empty())
        newline(depth);
      out += '}';
      return;
    }
  }
}

std::string go_value_text_impl(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return "<nil>";
    case json::kind::array: {
      std::string out = "[";
      bool first = true;
      for (const auto& x : v.get_array()) {
        out += (first ? "" : " ") + go_value_text_impl(x);
        first = false;
      }
      return out + "]";
    }
    case json::kind::object: {
      std::vector<const json::key_value_pair*> members;
      for (const auto& kv : v.get_object())
        members.push_back(&kv);
      std::sort(members.begin(), members.end(),
                [](const auto* a, const auto* b) { return a->key() < b->key(); });
      std::string out = "map[";
      bool first = true;
      for (const auto* m : members) {
        out += (first ? "" : " ") + std::string(m->key()) + ":" + go_value_text_impl(m->value());
        first = false;
      }
      return out + "]";
    }
    default:
      return jsonpath_text(v);
  }
}

// The Go type kubectl names in "... is not array or slice".
std::string go_type(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return "interface {}";
    case json::kind::bool_:
      return "bool";
    case json::kind::int64:
    case json::kind::uint64:
      return is_int(v) ? "int64" : "float64";
    case json::kind::double_:
      return "float64";
    case json::kind::string:
      return "string";
    case json::kind::array:
      return "[]interface {}";
    case json::kind::object:
      return "map[string]interface {}";
  }
  return "interface {}";
}

// ---- Execution

using values = std::vector<json::value>;

status exec_error(std::string message) {
  return status{errc::invalid_argument, std::move(message)};
}

class executor {
 public:
  explicit executor(bool allow_missing) : allow_missing_(allow_missing) {}

  result<values> evaluate(const path& steps, values current) const {
    for (const auto& s : steps) {
      auto next = apply(s, current);
      if (!next)
        return next.error();
      current = std::move(*next);
    }
    return current;
  }

 private:
  result<values> apply(const step& s, const values& in) const {
    values out;
    switch (s.kind) {
      case step_kind::current:
        return in;
      case step_kind::literal:
        return values{s.literal};
      case step_kind::identifier:
        return exec_error("unrecognized identifier " + s.name);
      case step_kind::field:
        for (const auto& v : in) {
          if (s.name == "*") {
            if (v.is_object())
              for (const auto& kv : v.get_object())
                out.push_back(kv.value());
            else if (v.is_array())
              for (const auto& x : v.get_array())
                out.push_back(x);
            continue;
          }
          const json::value* found = v.is_object() ? v.get_object().if_contains(s.name) : nullptr;
          if (found != nullptr)
            out.push_back(*found);
          else if (!allow_missing_)
            return exec_error(s.name + " is not found");
        }
        return out;
      case step_kind::recursive:
        for (const auto& v : in)
          descend(v, out);
        return out;
      case step_kind::slice:
        for (const auto& v : in) {
          if (v.is_null())
            continue;
          if (!v.is_array())
            return exec_error(go_type(v) + " is not array or slice");
          if (auto st = slice(s, v.get_array(), out); !st)
            return st;
        }
        return out;
      case step_kind::filter:
        for (const auto& v : in) {
          if (v.is_null())
            continue;
          if (!v.is_array())
            return exec_error(go_value_text_impl(v) +
                              " is not array or slice and cannot be filtered");
          for (const auto& x : v.get_array()) {
            auto keep = matches(s, x);
            if (!keep)
              return keep.error();
            if (*keep)
              out.push_back(x);
          }
        }
        return out;
      case step_kind::union_of:
        for (const auto& b : s.branches) {
          auto r = evaluate(b, in);
          if (!r)
            return r.error();
          for (auto& x : *r)
            out.push_back(std::move(x));
        }
        return out;
    }
    return out;
  }

  // Every value under v, v first; as kubectl's, numbers, booleans and nulls are not among them.
  static void descend(const json::value& v, values& out) {
    if (v.is_object() || v.is_array() || v.is_string())
      out.push_back(v);
    if (v.is_object())
      for (const auto& kv : v.get_object())
        descend(kv.value(), out);
    else if (v.is_array())
      for (const auto& x : v.get_array())
        descend(x, out);
  }

  static status slice(const step& s, const json::array& a, values& out) {
    const auto length = static_cast<int64_t>(a.size());
    int64_t stride = s.stride.value_or(1);
    if (stride <= 0)
      return exec_error("step must be > 0");
    int64_t start = s.start.value_or(0);
    if (start < 0)
      start += length;
    int64_t end = s.is_range ? s.end.value_or(length) : start + 1;
    if (s.is_range && s.end && *s.end < 0)
      end += length;
    auto out_of_bounds = [&](int64_t index) {
      return exec_error("array index out of bounds: index " + std::to_string(index) +
                        ", length " + std::to_string(length));
    };
    if (start == end)
      return status::ok_status();
    if (start < 0 || start >= length)
      return out_of_bounds(start);
    if (end > length)
      return out_of_bounds(end - 1);
    if (start > end)
      return exec_error("starting index " + std::to_string(start) +
                        " is greater than ending index " + std::to_string(end));
    for (int64_t i = start; i < end; i += stride)
      out.push_back(a[static_cast<std::size_t>(i)]);
    return status::ok_status();
  }

  // One operand of a filter on element x: nullopt when it finds nothing.
  result<std::optional<json::value>> operand(const filter_operand& o, const json::value& x) const {
    if (!o.is_path)
      return std::optional<json::value>(o.literal);
    executor lenient(true);
    auto r = lenient.evaluate(o.steps, values{x});
    if (!r)
      return r.error();
    if (r->empty())
      return std::optional<json::value>();
    if (r->size() > 1)
      return exec_error("can only compare one element at a time");
    return std::optional<json::value>(std::move(r->front()));
  }

  enum class basic { boolean, integer, floating, string, invalid };

  static basic basic_kind(const json::value& v) {
    if (v.is_bool())
      return basic::boolean;
    if (v.is_number())
      return is_int(v) ? basic::integer : basic::floating;
    if (v.is_string())
      return basic::string;
    return basic::invalid;
  }

  // Go's text/template comparisons, as kubectl's filters use them.
  static result<bool> compare(const json::value& a, std::string_view op, const json::value& b) {
    basic ka = basic_kind(a);
    basic kb = basic_kind(b);
    if (op != "==" && op != "!=" && op != "<" && op != "<=" && op != ">" && op != ">=")
      return exec_error("unrecognized filter operator " + std::string(op));
    const bool ordering = op != "==" && op != "!=";
    if (ka == basic::invalid || kb == basic::invalid ||
        (ordering && (ka == basic::boolean || kb == basic::boolean)))
      return exec_error("invalid type for comparison");
    if (ka != kb)
      return exec_error("incompatible types for comparison");
    int c = 0;  // <0, 0, >0
    switch (ka) {
      case basic::boolean:
        c = a.get_bool() == b.get_bool() ? 0 : 1;
        break;
      case basic::integer:
        c = int_of(a) < int_of(b) ? -1 : int_of(a) > int_of(b) ? 1 : 0;
        break;
      case basic::floating:
        c = float_of(a) < float_of(b) ? -1 : float_of(a) > float_of(b) ? 1 : 0;
        break;
      case basic::string: {
        auto x = a.get_string().compare(b.get_string());
        c = x < 0 ? -1 : x > 0 ? 1 : 0;
        break;
      }
      case basic::invalid:
        break;
    }
    if (op == "==")
      return c == 0;
    if (op == "!=")
      return c != 0;
    if (op == "<")
      return c < 0;
    if (op == "<=")
      return c <= 0;
    if (op == ">")
      return c > 0;
    return c >= 0;  // ">="
  }

  result<bool> matches(const step& f, const json::value& x) const {
    auto left = operand(f.left, x);
    // kubectl keeps an element whose path fails ([5] beyond the end) in an existence test.
    if (f.op.empty())
      return !left || left->has_value();
    if (!left)
      return left.error();
    auto right = operand(f.right, x);
    if (!right)
      return right.error();
    if (!*left || !*right)
      return false;
    return compare(**left, f.op, **right);
  }

  bool allow_missing_;
};

std::size_t skip_range(const std::vector<node>& nodes, std::size_t from);

// Runs nodes[from, to) on `current`, calling `emit` with each text and action's results.
// Returns the index after the range's {end} (or `to`).
template <class Emit>
result<std::size_t> run_nodes(const std::vector<node>& nodes, std::size_t from, bool in_range,
                              const json::value& current, const executor& ex, Emit& emit) {
  std::size_t i = from;
  while (i < nodes.size()) {
    const node& n = nodes[i];
    switch (n.kind) {
      case node_kind::text:
        emit(values{json::value(json::string(n.text))}, true);
        ++i;
        break;
      case node_kind::action: {
        auto r = ex.evaluate(n.steps, values{current});
        if (!r)
          return r.error();
        emit(*r, false);
        ++i;
        break;
      }
      case node_kind::end:
        if (!in_range)
          return exec_error("not in range, nothing to end");
        return i + 1;
      case node_kind::range: {
        auto r = ex.evaluate(n.steps, values{current});
        if (!r)
          return r.error();
        // With nothing to range on, the body is skipped up to its {end}.
        std::size_t after = r->empty() ? skip_range(nodes, i + 1) : nodes.size();
        for (const auto& item : *r) {
          auto next = run_nodes(nodes, i + 1, true, item, ex, emit);
          if (!next)
            return next.error();
          after = *next;
        }
        i = after;
        break;
      }
    }
  }
  return i;
}

// The index after the {end} that closes the range whose body starts at `from`.
std::size_t skip_range(const std::vector<node>& nodes, std::size_t from) {
  int depth = 1;
  for (std::size_t i = from; i < nodes.size(); ++i) {
    if (nodes[i].kind == node_kind::range)
      ++depth;
    else if (nodes[i].kind == node_kind::end && --depth == 0)
      return i + 1;
  }
  return nodes.size();
}

} // namespace

result<jsonpath> jsonpath::parse(std::string_view text) {
  parser p(text);
  auto nodes = p.parse_template();
  if (!nodes)
    return nodes.error();
  jsonpath t;
  t.text_ = std::string(text);
  t.nodes_ = std::make_shared<const std::vector<node>>(std::move(*nodes));
  return t;
}

result<std::string> jsonpath::execute(const json::value& data, bool allow_missing_keys) const {
  std::string out;
  auto emit = [&](const values& results, bool) {
    bool first = true;
    for (const auto& v : results) {
      if (!first)
        out += ' ';
      out += jsonpath_text(v);
      first = false;
    }
  };
  executor ex(allow_missing_keys);
  auto r = run_nodes(*nodes_, 0, false, data, ex, emit);
  if (!r)
    return r.error();
  return out;
}

result<std::string> jsonpath::execute_as_json(const json::value& data,
                                              bool allow_missing_keys) const {
  std::string out;
  auto emit = [&](const values& results, bool) {
    json::array a(results.begin(), results.end());
    out += go_json(a, 4) + "\n";
  };
  executor ex(allow_missing_keys);
  auto r = run_nodes(*nodes_, 0, false, data, ex, emit);
  if (!r)
    return r.error();
  return out;
}

result<std::vector<std::vector<json::value>>> jsonpath::find_results(
    const json::value& data) const {
  std::vector<std::vector<json::value>> out;
  auto emit = [&](const values& results, bool is_text) {
    if (!is_text)
      out.push_back(results);
  };
  executor ex(true);
  auto r = run_nodes(*nodes_, 0, false, data, ex, emit);
  if (!r)
    return r.error();
  return out;
}

std::string jsonpath_text(const json::value& v) {
  switch (v.kind()) {
    case json::kind::string:
      return std::string(v.get_string());
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return v.get_bool() ? "true" : "false";
    case json::kind::int64:
    case json::kind::uint64:
      return is_int(v) ? std::to_string(int_of(v)) : go_float_text(float_of(v));
    case json::kind::double_:
      return go_float_text(v.get_double());
    case json::kind::array:
    case json::kind::object:
      return go_json(v);
  }
  return {};
}

std::string go_json(const json::value& v, int indent) {
  std::string out;
  write_go_json(out, v, indent, 0);
  return out;
}

result<std::string> relaxed_jsonpath(std::string_view path) {
  std::string_view inner = path;
  if (inner.starts_with("{")) {
    if (!inner.ends_with("}") || inner.size() < 2)
      inner = "{";  // Refused below.
    else
      inner = inner.substr(1, inner.size() - 2);
  }
  if (inner.find_first_of("{}") != std::string_view::npos)
    return status{errc::invalid_argument,
                  "unexpected path string, expected a 'name1.name2' or '.name1.name2' or "
                  "'{name1.name2}' or '{.name1.name2}'"};
  std::string p(inner);
  if (!p.starts_with("."))
    p = "." + p;
  return "{" + p + "}";
}

std::string go_value_text(const json::value& v) {
  return go_value_text_impl(v);
}

} // namespace phalanx::api::ctl
