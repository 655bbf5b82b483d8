#pragma once

// The live progress display: on a terminal one line redrawn in place with a bar, the rate and the
// ETA; elsewhere (a pipe, a log file, CI) plain lines at most once a second, so logs stay readable.
//
//   scheduled [##########----------]  50.0%  54,210/108,420 pods  21,532/s  ETA 2.5s
//
// Not thread-safe: one thread updates a meter.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace phalanx::loadtest {

/// "1,234,567".
std::string format_count(int64_t n);
/// A rate with a thousands separator and no decimals above 100 ("21,532/s", "12.5/s").
std::string format_rate(double per_second);
/// "850ms", "2.5s", "1m05s", "2h03m", or "--" when unknown (negative or not finite).
std::string format_eta(double seconds);

struct progress_snapshot {
  std::string label; // "scheduled"
  std::string unit;  // "pods"
  int64_t done = 0;
  int64_t total = 0; // 0: unknown (no bar, no ETA).
  double elapsed_seconds = 0;
  /// Seconds since `done` last changed. From 5 s on, the line says "no progress for 12s" where
  /// the ETA was: a rate averaged from the start would promise an end that is not coming.
  double idle_seconds = 0;
};

/// One progress line without a line end. `bar_width` cells of bar (0: none).
std::string format_progress_line(const progress_snapshot& s, int bar_width = 20);

/// True when stdout is a terminal.
bool stdout_is_tty();

class progress_meter {
 public:
  /// `out` receives the display; `tty` chooses in-place redraws or plain lines.
  progress_meter(std::FILE* out, bool tty, std::string label, std::string unit, int64_t total);

  /// Reports progress; draws when due (terminal: every 100 ms; plain: every second).
  void update(int64_t done);
  /// Draws the final state and ends the line. Idempotent.
  void finish(int64_t done);

 private:
  void draw(int64_t done, bool final);
  std::FILE* out_;
  bool tty_;
  progress_snapshot snap_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
  std::chrono::steady_clock::time_point last_change_{};
  int64_t last_done_ = -1;
  bool finished_ = false;
  int64_t last_drawn_ = -1;
  std::size_t last_width_ = 0;
};

} // namespace phalanx::loadtest
