#include "api/flags/split.hpp"

#include <boost/program_options/cmdline.hpp>
#include <boost/program_options/errors.hpp>
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>
#include <boost/program_options/value_semantic.hpp>

#include <algorithm>
#include <cassert>

namespace phalanx::api::flags {

std::string_view to_string(split_failure f) noexcept {
  switch (f) {
    case split_failure::unknown_flag:
      return "unknown_flag";
    case split_failure::unknown_shorthand:
      return "unknown_shorthand";
    case split_failure::missing_value:
      return "missing_value";
    case split_failure::malformed:
      return "malformed";
  }
  return "malformed";
}

namespace {

namespace po = boost::program_options;

// The keys program_options reports an option under. A shorthand is a description of its own, so
// that its key ("-n") tells which spelling was typed, which every message names. A switch given
// "=VALUE" is reported under "name=" (a name no argument can reach, since program_options splits
// "--name=..." at the "="): program_options gives a switch no value at all.
std::string shorthand_key(char letter) {
  return std::string("-") + letter;
}
std::string explicit_value_key(const std::string& name) {
  return name + "=";
}
bool is_shorthand_key(const std::string& key) {
  return key.size() == 2 && key[0] == '-';
}

class flag_table {
 public:
  explicit flag_table(std::span<const flag_spec> specs) : specs_(specs) {
    for ([[maybe_unused]] const auto& s : specs_) {
      assert(s.name.size() >= 2 && s.name.front() != '-');
      assert(s.name.find_first_of("=,") == std::string::npos);
      assert(std::count_if(specs_.begin(), specs_.end(),
                           [&](const flag_spec& o) { return o.name == s.name; }) == 1);
      assert(s.shorthand == 0 || by_shorthand(s.shorthand) == &s);
    }
  }

  const flag_spec* by_name(std::string_view name) const {
    auto it = std::find_if(specs_.begin(), specs_.end(),
                           [&](const flag_spec& s) { return s.name == name; });
    return it == specs_.end() ? nullptr : &*it;
  }

  const flag_spec* by_shorthand(char letter) const {
    auto it = std::find_if(specs_.begin(), specs_.end(),
                           [&](const flag_spec& s) { return s.shorthand == letter; });
    return it == specs_.end() ? nullptr : &*it;
  }

  bool has_shorthands() const {
    return std::any_of(specs_.begin(), specs_.end(),
                       [](const flag_spec& s) { return s.shorthand != 0; });
  }

  // Values stay text: each program checks its own with the messages it always gave
  // (program_options' typed values would word them, and accept " 12" or "1e3" as an integer).
  po::options_description describe() const {
    po::options_description description;
    auto add = description.add_options();
    for (const auto& s : specs_) {
      auto semantic = [&]() -> const po::value_semantic* {
        if (s.takes_value)
          return po::value<std::string>();
        return po::bool_switch();
      };
      add(s.name.c_str(), semantic());
      if (s.shorthand != 0)
        add((std::string(",") + s.shorthand).c_str(), semantic());
      if (!s.takes_value)
        add(explicit_value_key(s.name).c_str(), po::value<std::string>());
    }
    return description;
  }

  // The style of kubectl's flags. Not program_options' default (unix_style), which guesses a
  // flag from a prefix of its name (--name for --namespace).
  int style() const {
    namespace cs = po::command_line_style;
    int style = cs::allow_long | cs::long_allow_adjacent | cs::long_allow_next;
    if (has_shorthands())
      style |= cs::allow_short | cs::allow_dash_for_short | cs::short_allow_adjacent |
               cs::short_allow_next | cs::allow_sticky;
    return style;
  }

 private:
  std::span<const flag_spec> specs_;
};

// The spellings with "=" that program_options reads otherwise than kubectl, taken before its
// own parsers see them: "--name=" (it refuses an empty value as a syntax error; here the flag's
// rule judges ""), "--switch=VALUE" and "-s=VALUE" (it gives a switch no value), and "-n=VALUE"
// (it reads the value "=VALUE"). Any other argument is left to program_options.
std::vector<po::option> read_explicit_value(std::vector<std::string>& args,
                                            const flag_table& table) {
  const std::string& argument = args.front();
  const auto equals = argument.find('=');
  if (equals == std::string::npos || argument.size() < 3 || argument[0] != '-')
    return {};
  std::string key;
  if (argument[1] == '-') {
    const std::string name = argument.substr(2, equals - 2);
    const flag_spec* spec = table.by_name(name);
    if (name.empty())
      key = argument.substr(2);  // "--=x": an unknown flag, named by all of it.
    else if (spec != nullptr && !spec->takes_value)
      key = explicit_value_key(name);
    else if (equals + 1 == argument.size())
      key = name;  // Known or not: an unknown one is reported as such.
    else
      return {};
  } else {
    const flag_spec* spec = equals == 2 ? table.by_shorthand(argument[1]) : nullptr;
    if (spec == nullptr)
      return {};
    key = spec->takes_value ? shorthand_key(argument[1]) : explicit_value_key(spec->name);
  }
  po::option option(key, {argument.substr(equals + 1)});
  option.original_tokens.push_back(argument);
  args.erase(args.begin());
  return {std::move(option)};
}

split_error unknown(const po::option& option) {
  const std::string& argument =
      option.original_tokens.empty() ? option.string_key : option.original_tokens.front();
  if (!argument.starts_with("--") && is_shorthand_key(option.string_key))
    return {split_failure::unknown_shorthand, option.string_key, argument, {}};
  return {split_failure::unknown_flag, "--" + option.string_key, argument, {}};
}

given_flag given(const po::option& option, const flag_table& table) {
  given_flag g;
  if (!option.value.empty())
    g.value = option.value.front();
  const std::string& key = option.string_key;
  if (key.ends_with('=')) {
    g.name = key.substr(0, key.size() - 1);
    const std::string& argument = option.original_tokens.front();
    g.spelling = argument.starts_with("--") ? "--" + g.name : argument.substr(0, 2);
  } else if (is_shorthand_key(key)) {
    g.name = table.by_shorthand(key[1])->name;
    g.spelling = key;
  } else {
    g.name = key;
    g.spelling = "--" + key;
  }
  return g;
}

// program_options names the flag of an error with the long prefix whatever was typed (it takes
// the prefix from the style): "--n" is the shorthand -n, since long names have two letters or
// more.
std::string typed_spelling(const std::string& reported) {
  if (reported.size() == 3 && reported.starts_with("--"))
    return reported.substr(1);
  return reported;
}

} // namespace

split_arguments split(std::span<const std::string> args, std::span<const flag_spec> specs) {
  const flag_table table(specs);
  const po::options_description description = table.describe();
  split_arguments out;
  try {
    // Unknown flags are collected rather than thrown: program_options' exception names neither
    // the argument nor, for a shorthand, the letter as typed.
    const po::parsed_options parsed =
        po::command_line_parser(std::vector<std::string>(args.begin(), args.end()))
            .options(description)
            .style(table.style())
            .extra_style_parser([&table](std::vector<std::string>& rest) {
              return read_explicit_value(rest, table);
            })
            .allow_unregistered()
            .run();
    for (const auto& option : parsed.options) {
      if (option.string_key.empty()) {
        out.words.push_back(option.value.front());
      } else if (option.unregistered) {
        if (!out.error)
          out.error = unknown(option);
      } else {
        out.flags.push_back(given(option, table));
      }
    }
  } catch (const po::invalid_command_line_syntax& e) {
    if (e.kind() == po::invalid_syntax::missing_parameter) {
      auto spelling = typed_spelling(e.get_option_name());
      out.error = split_error{split_failure::missing_value, spelling, spelling, {}};
    } else {
      out.error = split_error{split_failure::malformed, {}, {}, e.what()};
    }
  } catch (const po::error& e) {
    // Not expected with this table and style; kept so that a spelling program_options refuses
    // some day is a usage error rather than a crash.
    out.error = split_error{split_failure::malformed, {}, {}, e.what()};
  }
  if (out.error) {
    out.flags.clear();
    out.words.clear();
  }
  return out;
}

} // namespace phalanx::api::flags
