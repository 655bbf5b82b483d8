#include "loadtest/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace phalanx::loadtest {

std::string format_count(int64_t n) {
  bool negative = n < 0;
  uint64_t v = negative ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  std::string digits = std::to_string(v);
  std::string out;
  int k = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (k > 0 && k % 3 == 0)
      out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++k;
  }
  return negative ? "-" + out : out;
}

std::string format_rate(double per_second) {
  if (!std::isfinite(per_second) || per_second < 0)
    return "--/s";
  if (per_second >= 100)
    return format_count(static_cast<int64_t>(std::llround(per_second))) + "/s";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f/s", per_second);
  return buf;
}

std::string format_eta(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "--";
  char buf[32];
  if (seconds < 1) {
    std::snprintf(buf, sizeof buf, "%dms", static_cast<int>(seconds * 1000));
  } else if (seconds < 60) {
    std::snprintf(buf, sizeof buf, "%.1fs", seconds);
  } else if (seconds < 3600) {
    auto s = static_cast<int64_t>(seconds);
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else {
    auto m = static_cast<int64_t>(seconds / 60);
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(m / 60),
                  static_cast<long long>(m % 60));
  }
  return buf;
}

std::string format_progress_line(const progress_snapshot& s, int bar_width) {
  std::string line = s.label;
  double rate = s.elapsed_seconds > 0 ? double(s.done) / s.elapsed_seconds : 0;
  if (s.total > 0) {
    double fraction = std::clamp(double(s.done) / double(s.total), 0.0, 1.0);
    if (bar_width > 0) {
      int filled = static_cast<int>(fraction * bar_width);
      line += " [" + std::string(static_cast<std::size_t>(filled), '#') +
              std::string(static_cast<std::size_t>(bar_width - filled), '-') + "]";
    }
    char pct[16];
    std::snprintf(pct, sizeof pct, " %5.1f%%", fraction * 100);
    line += pct;
    line += "  " + format_count(s.done) + "/" + format_count(s.total) + " " + s.unit;
  } else {
    line += "  " + format_count(s.done) + " " + s.unit;
  }
  line += "  " + format_rate(rate);
  if (s.total > 0 && s.done < s.total && s.idle_seconds >= 5) {
    line += "  no progress for " + format_eta(s.idle_seconds);
  } else if (s.total > 0) {
    double eta = s.done >= s.total ? 0 : (rate > 0 ? double(s.total - s.done) / rate : -1);
    line += "  ETA " + format_eta(eta);
  }
  return line;
}

bool stdout_is_tty() {
  return ::isatty(STDOUT_FILENO) == 1;
}

progress_meter::progress_meter(std::FILE* out, bool tty, std::string label, std::string unit,
                               int64_t total)
    : out_(out), tty_(tty), start_(std::chrono::steady_clock::now()) {
  snap_.label = std::move(label);
  snap_.unit = std::move(unit);
  snap_.total = total;
}

void progress_meter::update(int64_t done) {
  if (finished_)
    return;
  auto now = std::chrono::steady_clock::now();
  if (done != last_done_) {
    last_done_ = done;
    last_change_ = now;
  }
  auto every = tty_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(1000);
  if (last_draw_ != std::chrono::steady_clock::time_point{} && now - last_draw_ < every)
    return;
  draw(done, false);
}

void progress_meter::finish(int64_t done) {
  if (finished_)
    return;
  finished_ = true;
  if (!tty_ && last_drawn_ == done && last_draw_ != std::chrono::steady_clock::time_point{})
    return; // The last plain line already shows it.
  draw(done, true);
}

void progress_meter::draw(int64_t done, bool final) {
  auto now = std::chrono::steady_clock::now();
  last_draw_ = now;
  last_drawn_ = done;
  snap_.done = done;
  snap_.elapsed_seconds = std::chrono::duration<double>(now - start_).count();
  snap_.idle_seconds = last_done_ == done
                           ? std::chrono::duration<double>(now - last_change_).count()
                           : 0;
  auto line = format_progress_line(snap_, tty_ ? 20 : 0);
  if (tty_) {
    std::string padded = line;
    if (padded.size() < last_width_)
      padded += std::string(last_width_ - padded.size(), ' ');
    last_width_ = line.size();
    std::fprintf(out_, "\r%s%s", padded.c_str(), final ? "\n" : "");
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

} // namespace phalanx::loadtest
