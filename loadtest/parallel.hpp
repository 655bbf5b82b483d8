#pragma once

// Work spread over threads, for the load tester's set-up and creations against an apiserver.

#include "scheduler/result.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace phalanx::loadtest {

/// Runs `work(i)` for every i in [0, n) on `threads` threads, each taking the next i; the first
/// error wins, and the threads stop taking work once one failed.
inline status in_parallel(int64_t n, int64_t threads,
                          const std::function<status(int64_t)>& work) {
  std::atomic<int64_t> next{0};
  std::mutex mutex;
  status first;
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (auto i = next++; i < n; i = next++) {
        auto s = work(i);
        if (!s.ok()) {
          std::lock_guard lock(mutex);
          if (first.ok())
            first = s;
          next = n;
        }
      }
    });
  for (auto& t : pool)
    t.join();
  return first;
}

} // namespace phalanx::loadtest
