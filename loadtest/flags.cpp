#include "loadtest/flags.hpp"

#include "api/flags/split.hpp"
#include "scheduler/quantity.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

namespace phalanx::loadtest {

std::optional<int64_t> parse_int(std::string_view text) noexcept {
  if (text.empty())
    return std::nullopt;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (*first == '+')
    ++first;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec != std::errc{} || ptr != last || first == last)
    return std::nullopt;
  return v;
}

std::optional<double> parse_number(std::string_view text) noexcept {
  if (text.empty())
    return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || ptr != text.data() + text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

flag_set::flag_set(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {}

void flag_set::add(flag f) {
  flags_.push_back(std::move(f));
}

void flag_set::add_int(std::string name, int64_t* target, int64_t min, int64_t max,
                       std::string help) {
  help += " (default " + std::to_string(*target) + ")";
  add({std::move(name), "N", std::move(help), true, false,
       [target, min, max](const std::string& v) -> std::optional<std::string> {
         auto n = parse_int(v);
         if (!n)
           return "\"" + v + "\" is not an integer";
         if (*n < min || *n > max)
           return v + " is out of range: must be between " + std::to_string(min) + " and " +
                  std::to_string(max);
         *target = *n;
         return std::nullopt;
       }});
}

void flag_set::add_double(std::string name, double* target, double min, double max,
                          std::string help) {
  std::ostringstream def;
  def << *target;
  help += " (default " + def.str() + ")";
  add({std::move(name), "X", std::move(help), true, false,
       [target, min, max](const std::string& v) -> std::optional<std::string> {
         auto n = parse_number(v);
         if (!n)
           return "\"" + v + "\" is not a number";
         if (*n < min || *n > max) {
           std::ostringstream s;
           s << v << " is out of range: must be between " << min << " and " << max;
           return s.str();
         }
         *target = *n;
         return std::nullopt;
       }});
}

void flag_set::add_string(std::string name, std::string* target, std::string help, bool required) {
  if (!required && !target->empty())
    help += " (default " + *target + ")";
  add({std::move(name), "VALUE", std::move(help), true, required,
       [target](const std::string& v) -> std::optional<std::string> {
         if (v.empty())
           return std::string("must not be empty");
         *target = v;
         return std::nullopt;
       }});
}

void flag_set::add_bool(std::string name, bool* target, std::string help) {
  add({std::move(name), "", std::move(help), false, false,
       [target](const std::string&) -> std::optional<std::string> {
         *target = true;
         return std::nullopt;
       }});
}

void flag_set::add_duration(std::string name, int64_t* target_ns, int64_t min_ns, int64_t max_ns,
                            std::string help) {
  help += " (default " + scheduler::format_duration_ns(*target_ns) + ")";
  add({std::move(name), "DURATION", std::move(help), true, false,
       [target_ns, min_ns, max_ns](const std::string& v) -> std::optional<std::string> {
         auto d = scheduler::parse_duration_ns(v);
         if (!d)
           return "\"" + v +
                  "\" is not a duration (examples: 500ms, 30s, 2m, 1h30m): " + d.error().message();
         if (*d < min_ns || *d > max_ns)
           return v + " is out of range: must be between " + scheduler::format_duration_ns(min_ns) +
                  " and " + scheduler::format_duration_ns(max_ns);
         *target_ns = *d;
         return std::nullopt;
       }});
}

void flag_set::add_choice(std::string name, std::string* target, std::vector<std::string> choices,
                          std::string help) {
  std::string list;
  for (const auto& c : choices)
    list += (list.empty() ? "" : ", ") + c;
  help += " (" + list + "; default " + *target + ")";
  add({std::move(name), "CHOICE", std::move(help), true, false,
       [target, choices, list](const std::string& v) -> std::optional<std::string> {
         for (const auto& c : choices)
           if (c == v) {
             *target = v;
             return std::nullopt;
           }
         return "\"" + v + "\" is not one of: " + list;
       }});
}

void flag_set::add_custom(std::string name, std::string metavar,
                          std::function<std::optional<std::string>(const std::string&)> parse,
                          std::string help) {
  add({std::move(name), std::move(metavar), std::move(help), true, false, std::move(parse)});
}

const flag_set::flag* flag_set::find(std::string_view name) const {
  for (const auto& f : flags_)
    if (f.name == name)
      return &f;
  return nullptr;
}

bool flag_set::was_set(std::string_view name) const {
  for (const auto& [n, v] : given_)
    if (n == name)
      return true;
  return false;
}

status flag_set::parse(std::span<const std::string> args) {
  std::vector<api::flags::flag_spec> table;
  for (const auto& f : flags_)
    table.push_back({f.name, 0, f.takes_value});
  const auto split = api::flags::split(args, table);
  if (split.error) {
    const auto& e = *split.error;
    switch (e.failure) {
      case api::flags::split_failure::unknown_flag:
        return {errc::invalid_argument,
                "unknown flag " + e.spelling + " for " + command_ + " (see --help)"};
      case api::flags::split_failure::missing_value:
        return {errc::invalid_argument,
                e.spelling + ": needs a value (" + find(e.spelling.substr(2))->metavar + ")"};
      case api::flags::split_failure::unknown_shorthand:  // None here: "-x" is a word.
        return {errc::invalid_argument,
                "unknown flag " + e.argument + " for " + command_ + " (see --help)"};
      case api::flags::split_failure::malformed:
        return {errc::invalid_argument, e.detail};
    }
  }
  if (!split.words.empty())
    return {errc::invalid_argument, "unexpected argument \"" + split.words.front() +
                                        "\": flags start with --, and " + command_ +
                                        " takes no positional arguments"};
  for (const auto& g : split.flags) {
    const flag* f = find(g.name);
    if (was_set(g.name))
      return {errc::invalid_argument, g.spelling + ": given twice"};
    if (!f->takes_value && g.value)
      return {errc::invalid_argument, g.spelling + ": takes no value"};
    const std::string value = g.value.value_or("true");
    if (auto error = f->parse(value))
      return {errc::invalid_argument, g.spelling + ": " + *error};
    given_.emplace_back(g.name, value);
  }
  for (const auto& f : flags_)
    if (f.required && !was_set(f.name))
      return {errc::invalid_argument, "--" + f.name + " is required"};
  return {};
}

std::string flag_set::usage() const {
  std::ostringstream out;
  out << "usage: " << command_ << " [flags]\n";
  if (!summary_.empty())
    out << "\n" << summary_ << "\n";
  out << "\nflags:\n";
  for (const auto& f : flags_) {
    std::string left = "  --" + f.name + (f.metavar.empty() ? "" : " " + f.metavar);
    out << left;
    if (left.size() < 28)
      out << std::string(28 - left.size(), ' ');
    else
      out << "\n" << std::string(28, ' ');
    out << f.help << (f.required ? " [required]" : "") << "\n";
  }
  return out.str();
}

} // namespace phalanx::loadtest
