#pragma once

// The command lines of phalanxctl, phalanxd, phalanx-loadtest and storage_load_bench are split
// into flags and words by Boost.Program_options; this is the one place that talks to it. Each
// program keeps what its flags mean: their values' rules, defaults, environment variables, help
// texts and the wording of every message, including the ones for the failures reported here.
//
// Spellings accepted, as kubectl's (and as the hand-written parsers before, docs/NOTES.md "One
// flag library"):
//   --name VALUE, --name=VALUE, --name= (an empty value, which the flag's own rule judges);
//   -n VALUE, -nVALUE, -n=VALUE for a flag with a shorthand;
//   --switch, -s, bundles of switches (-Aw), and an explicit value only after "=" (--watch=false,
//   -w=false): a switch never takes the next argument, which stays a word;
//   "--" ends the flags: every later argument is a word, whatever it looks like.
// A value may start with "-" ("--grace-period -1"), but not be a shorthand the table knows
// ("-n -w" is -n without a value).
//
// Without a shorthand in the table, a single-dash argument ("-x") is a word.
//
// Stateless and thread-safe; nothing here throws.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::api::flags {

/// A flag a program knows.
struct flag_spec {
  /// The long name, without "--": at least two characters, no "=" or ",".
  std::string name;
  /// The one-letter spelling ('n' for -n); 0: none.
  char shorthand = 0;
  /// false: a switch, present or not, unless given "=VALUE". Default: true.
  bool takes_value = true;
};

/// A flag as it was given, in command-line order; a flag given twice is listed twice.
struct given_flag {
  /// The spec's long name.
  std::string name;
  /// As typed, for messages: "--watch" or "-w".
  std::string spelling;
  /// The value; nullopt only for a switch given without "=VALUE".
  std::optional<std::string> value;
};

enum class split_failure {
  unknown_flag,       // --bogus, --bogus=1
  unknown_shorthand,  // -x, or the x of -Axw
  missing_value,      // a flag that takes a value ends the command line, or a shorthand follows
  malformed,          // anything else Boost.Program_options refuses (its message in `detail`)
};
std::string_view to_string(split_failure f) noexcept;
inline constexpr split_failure split_failure_last = split_failure::malformed;

/// Why a command line could not be split.
struct split_error {
  split_failure failure = split_failure::malformed;
  /// The flag as typed: "--bogus", "-x" (for unknown_shorthand, the dash and the letter), "-n".
  std::string spelling;
  /// The whole argument the flag was found in: "--bogus=1", "-Axw"; the spelling for
  /// missing_value.
  std::string argument;
  /// malformed only: Boost.Program_options' own message.
  std::string detail;
};

struct split_arguments {
  /// Every flag, in command-line order.
  std::vector<given_flag> flags;
  /// Every other argument, in order (after "--" too).
  std::vector<std::string> words;
  /// Set when the command line could not be split; flags and words are then empty. Of several
  /// unknown flags, the first is reported; a missing value is reported before any of them.
  std::optional<split_error> error;
};

/// Splits `args` (without the program's name) by the flags of `specs`.
/// Precondition: the names and shorthands of `specs` are unique and follow flag_spec's rules.
[[nodiscard]] split_arguments split(std::span<const std::string> args,
                                    std::span<const flag_spec> specs);

} // namespace phalanx::api::flags
