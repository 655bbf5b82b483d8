#include "api/label_selector.hpp"

#include "scheduler/validation.hpp"

#include <algorithm>

namespace phalanx::api {

bool label_selector::matches(const scheduler::label_set& labels) const {
  for (const auto& r : requirements) {
    auto v = labels.find(r.key);
    bool ok = false;
    switch (r.operation) {
      case label_requirement::op::equals:
        ok = v.has_value() && !r.values.empty() && *v == r.values.front();
        break;
      case label_requirement::op::not_equals:
        ok = !v.has_value() || r.values.empty() || *v != r.values.front();
        break;
      case label_requirement::op::in:
        ok = v.has_value() && std::find(r.values.begin(), r.values.end(), *v) != r.values.end();
        break;
      case label_requirement::op::not_in:
        ok = !v.has_value() || std::find(r.values.begin(), r.values.end(), *v) == r.values.end();
        break;
      case label_requirement::op::exists:
        ok = v.has_value();
        break;
      case label_requirement::op::does_not_exist:
        ok = !v.has_value();
        break;
    }
    if (!ok)
      return false;
  }
  return true;
}

std::string_view to_string(label_requirement::op op) noexcept {
  switch (op) {
    case label_requirement::op::equals:
      return "=";
    case label_requirement::op::not_equals:
      return "!=";
    case label_requirement::op::in:
      return "in";
    case label_requirement::op::not_in:
      return "notin";
    case label_requirement::op::exists:
      return "";
    case label_requirement::op::does_not_exist:
      return "!";
  }
  return "";
}

namespace {

enum class token_type { ident, bang, eq, double_eq, not_eq_, open, close, comma, end, bad };

struct token {
  token_type type = token_type::end;
  std::string text;
  std::size_t pos = 0;
};

bool is_special(char c) {
  return c == '!' || c == '=' || c == '(' || c == ')' || c == ',' || c == '<' || c == '>' ||
         c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

class lexer {
 public:
  explicit lexer(std::string_view s) : s_(s) {}

  token next() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
    token t;
    t.pos = i_;
    if (i_ >= s_.size()) {
      t.type = token_type::end;
      return t;
    }
    char c = s_[i_];
    auto take = [&](token_type type, std::size_t n) {
      t.type = type;
      t.text = std::string(s_.substr(i_, n));
      i_ += n;
      return t;
    };
    switch (c) {
      case '!':
        if (i_ + 1 < s_.size() && s_[i_ + 1] == '=')
          return take(token_type::not_eq_, 2);
        return take(token_type::bang, 1);
      case '=':
        if (i_ + 1 < s_.size() && s_[i_ + 1] == '=')
          return take(token_type::double_eq, 2);
        return take(token_type::eq, 1);
      case '(':
        return take(token_type::open, 1);
      case ')':
        return take(token_type::close, 1);
      case ',':
        return take(token_type::comma, 1);
      case '<':
      case '>':
        return take(token_type::bad, 1);
      default:
        break;
    }
    std::size_t start = i_;
    while (i_ < s_.size() && !is_special(s_[i_]))
      ++i_;
    t.type = token_type::ident;
    t.text = std::string(s_.substr(start, i_ - start));
    return t;
  }

  token peek() {
    std::size_t saved = i_;
    token t = next();
    i_ = saved;
    return t;
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

std::string describe(const token& t) {
  if (t.type == token_type::end)
    return "the end";
  return scheduler::go_quote(t.text);
}

} // namespace

result<label_selector> parse_label_selector(std::string_view text) {
  label_selector out;
  lexer lx{text};
  auto fail = [&](const std::string& detail, std::size_t pos) -> result<label_selector> {
    return status{errc::invalid_argument, "unable to parse label selector " +
                                            scheduler::go_quote(text) + ": " + detail +
                                            " at position " + std::to_string(pos)};
  };
  if (lx.peek().type == token_type::end)
    return out;
  while (true) {
    token t = lx.next();
    label_requirement req;
    std::size_t key_pos = t.pos;
    if (t.type == token_type::bang) {
      token k = lx.next();
      if (k.type != token_type::ident)
        return fail("expected a label key after \"!\", found " + describe(k), k.pos);
      req.key = k.text;
      key_pos = k.pos;
      req.operation = label_requirement::op::does_not_exist;
    } else if (t.type == token_type::ident) {
      req.key = t.text;
      token op = lx.peek();
      if (op.type == token_type::comma || op.type == token_type::end) {
        req.operation = label_requirement::op::exists;
      } else if (op.type == token_type::eq || op.type == token_type::double_eq ||
                 op.type == token_type::not_eq_) {
        lx.next();
        req.operation = op.type == token_type::not_eq_ ? label_requirement::op::not_equals
                                                       : label_requirement::op::equals;
        token v = lx.peek();
        if (v.type == token_type::ident) {
          lx.next();
          req.values.push_back(v.text);
        } else if (v.type == token_type::comma || v.type == token_type::end) {
          req.values.emplace_back();  // "a=" selects an empty value.
        } else {
          return fail("expected a value after " + scheduler::go_quote(op.text) + ", found " +
                        describe(v),
                      v.pos);
        }
      } else if (op.type == token_type::ident && (op.text == "in" || op.text == "notin")) {
        lx.next();
        req.operation =
          op.text == "in" ? label_requirement::op::in : label_requirement::op::not_in;
        token open = lx.next();
        if (open.type != token_type::open)
          return fail("expected \"(\" after " + scheduler::go_quote(op.text) + ", found " +
                        describe(open),
                      open.pos);
        while (true) {
          token v = lx.next();
          if (v.type == token_type::close && req.values.empty())
            return fail("the values of " + scheduler::go_quote(op.text) + " must not be empty",
                        v.pos);
          if (v.type != token_type::ident)
            return fail("expected a value, found " + describe(v), v.pos);
          req.values.push_back(v.text);
          token sep = lx.next();
          if (sep.type == token_type::close)
            break;
          if (sep.type != token_type::comma)
            return fail("expected \",\" or \")\" after value " + scheduler::go_quote(v.text) +
                          ", found " + describe(sep),
                        sep.pos);
        }
      } else if (op.type == token_type::bad) {
        return fail("the operator " + scheduler::go_quote(op.text) +
                      " is not supported: use =, ==, !=, in, notin, or a key alone",
                    op.pos);
      } else {
        return fail("expected an operator (=, ==, !=, in, notin), \",\" or the end after key " +
                      scheduler::go_quote(req.key) + ", found " + describe(op),
                    op.pos);
      }
    } else {
      return fail("expected a label key or \"!\", found " + describe(t), t.pos);
    }
    auto key_errors = scheduler::is_qualified_name(req.key);
    if (!key_errors.empty())
      return fail("key " + scheduler::go_quote(req.key) + ": " + key_errors.front(), key_pos);
    for (const auto& v : req.values) {
      auto value_errors = scheduler::is_label_value(v);
      if (!value_errors.empty())
        return fail("value " + scheduler::go_quote(v) + " of key " + scheduler::go_quote(req.key) +
                      ": " + value_errors.front(),
                    key_pos);
    }
    out.requirements.push_back(std::move(req));
    token sep = lx.next();
    if (sep.type == token_type::end)
      break;
    if (sep.type != token_type::comma)
      return fail("expected \",\" or the end after the requirement on " +
                    scheduler::go_quote(out.requirements.back().key) + ", found " + describe(sep),
                  sep.pos);
  }
  return out;
}

std::string to_string(const label_selector& selector) {
  std::string out;
  for (const auto& r : selector.requirements) {
    if (!out.empty())
      out += ',';
    switch (r.operation) {
      case label_requirement::op::equals:
      case label_requirement::op::not_equals:
        out += r.key;
        out += to_string(r.operation);
        if (!r.values.empty())
          out += r.values.front();
        break;
      case label_requirement::op::in:
      case label_requirement::op::not_in: {
        out += r.key;
        out += ' ';
        out += to_string(r.operation);
        out += " (";
        for (std::size_t i = 0; i < r.values.size(); ++i) {
          if (i > 0)
            out += ',';
          out += r.values[i];
        }
        out += ')';
        break;
      }
      case label_requirement::op::exists:
        out += r.key;
        break;
      case label_requirement::op::does_not_exist:
        out += '!';
        out += r.key;
        break;
    }
  }
  return out;
}

} // namespace phalanx::api
