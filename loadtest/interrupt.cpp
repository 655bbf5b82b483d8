#include "loadtest/interrupt.hpp"

#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

namespace phalanx::loadtest {

namespace {

std::atomic<int> caught{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler stores into it");

struct sigaction previous_int {};
struct sigaction previous_term {};

extern "C" void on_interrupt(int sig) {
  caught.store(sig);
  // write() is async-signal-safe; the run may take a moment to reach its next check.
  static constexpr char message[] =
      "\nphalanx-loadtest: stopping: its daemons and temporary files go, what was measured is "
      "reported (again to quit at once)\n";
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, message, sizeof message - 1);
}

} // namespace

interrupt_guard::interrupt_guard() {
  caught.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  ::sigaction(SIGINT, &sa, &previous_int);
  ::sigaction(SIGTERM, &sa, &previous_term);
}

interrupt_guard::~interrupt_guard() {
  caught.store(0); // The run that was interrupted has ended; the next one starts clean.
  ::sigaction(SIGINT, &previous_int, nullptr);
  ::sigaction(SIGTERM, &previous_term, nullptr);
}

int interrupt_signal() noexcept {
  return caught.load();
}

const char* signal_name(int sig) noexcept {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "a signal";
  }
}

bool sleep_unless_interrupted(std::chrono::milliseconds pause) {
  // In slices, so a long pause ends soon after the signal.
  const auto until = std::chrono::steady_clock::now() + pause;
  while (caught.load() == 0) {
    const auto left = until - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero())
      return true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(20)));
  }
  return false;
}

status interrupted_while(std::string_view doing) {
  return status{errc::unavailable,
                std::string("interrupted by ") + signal_name(caught.load()) + " while " +
                    std::string(doing)};
}

void simulate_interrupt(int sig) noexcept {
  caught.store(sig);
}

} // namespace phalanx::loadtest
