#pragma once

// Command-line flags of phalanx-loadtest's modes: each mode declares its flags with a target
// variable, bounds and a help line; parse() fills the targets and fails with a message that names
// the flag, the value and the rule ("--podgroups: \"ten\" is not an integer",
// "--podgroups: 0 is out of range: must be between 1 and 1000000"). Flags take their value as
// "--name VALUE" or "--name=VALUE"; booleans take none. Boost.Program_options splits the
// arguments (api/flags/split.hpp); the rules and the messages are this class's.
//
// Not thread-safe; one flag_set per parse.

#include "scheduler/result.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::loadtest {

class flag_set {
 public:
  /// `command` is shown in the usage ("phalanx-loadtest push").
  explicit flag_set(std::string command, std::string summary = {});

  /// An integer within [min, max].
  void add_int(std::string name, int64_t* target, int64_t min, int64_t max, std::string help);
  /// A number within [min, max] (decimal text, no exponent required).
  void add_double(std::string name, double* target, double min, double max, std::string help);
  /// Any text; `required` flags must be given.
  void add_string(std::string name, std::string* target, std::string help, bool required = false);
  /// A flag without a value: present sets it to true.
  void add_bool(std::string name, bool* target, std::string help);
  /// A Go-style duration ("500ms", "2m", "1h30m") in nanoseconds, within [min_ns, max_ns].
  void add_duration(std::string name, int64_t* target_ns, int64_t min_ns, int64_t max_ns,
                    std::string help);
  /// One of `choices`.
  void add_choice(std::string name, std::string* target, std::vector<std::string> choices,
                  std::string help);
  /// A flag whose value a custom parser checks: it returns an error message (without the flag
  /// name), or nullopt when the value is good.
  void add_custom(std::string name, std::string metavar,
                  std::function<std::optional<std::string>(const std::string&)> parse,
                  std::string help);

  /// Parses `args` (without the program and mode names). Errors (errc::invalid_argument) name
  /// the flag and the rule: an unknown flag, a missing value, a bad value, a missing required
  /// flag, a flag given twice, or a positional argument. What is not a flag of the set (an
  /// unknown flag, a positional argument) and a missing value are refused first; then each flag
  /// in command-line order; a missing required flag last. "--" ends the flags: any argument
  /// after it is a positional one.
  status parse(std::span<const std::string> args);

  /// True when the flag was on the command line.
  bool was_set(std::string_view name) const;

  /// The usage text: the command, its summary, then one line per flag with its help.
  std::string usage() const;

  /// The flags as given, for the report's parameters ("--nodes" -> "5000").
  const std::vector<std::pair<std::string, std::string>>& given() const noexcept { return given_; }

 private:
  struct flag {
    std::string name; // Without the leading "--".
    std::string metavar;
    std::string help;
    bool takes_value = true;
    bool required = false;
    std::function<std::optional<std::string>(const std::string&)> parse;
  };
  const flag* find(std::string_view name) const;
  void add(flag f);

  std::string command_;
  std::string summary_;
  std::vector<flag> flags_;
  std::vector<std::pair<std::string, std::string>> given_;
};

/// Parses a decimal integer (optional sign, digits only, no spaces); nullopt otherwise.
std::optional<int64_t> parse_int(std::string_view text) noexcept;
/// Parses a plain decimal number ("0.5", "2", "-1.25", "1e3"); nullopt otherwise.
std::optional<double> parse_number(std::string_view text) noexcept;

} // namespace phalanx::loadtest
