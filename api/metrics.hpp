#pragma once

// A small Prometheus metrics registry (text exposition format 0.0.4): counters, gauges and
// histograms, each optionally with labels. The HTTP server records its own metrics here and the
// actor runtime uses the same registry for the scheduler's.
//
// Thread-safety: registering (the *_family and with() calls) takes a mutex; recording (inc, set,
// observe) is lock-free on atomics and safe from any thread. A metric, once registered, lives as
// long as the registry: keep the reference and record through it on hot paths.

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace phalanx::api {

/// Label values of one series, in the order of the family's label names.
using label_values = std::vector<std::string>;

/// A value that only goes up.
class counter {
 public:
  void inc(uint64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

/// A value that goes up and down.
class gauge {
 public:
  void set(double v) noexcept { value_.store(v, std::memory_order_relaxed); }
  void add(double v) noexcept { value_.fetch_add(v, std::memory_order_relaxed); }
  void inc() noexcept { add(1); }
  void dec() noexcept { add(-1); }
  double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

/// Observations counted into buckets with fixed upper bounds, plus their count and sum.
class histogram {
 public:
  /// `upper_bounds` must be strictly increasing; a +Inf bucket is implied.
  explicit histogram(std::vector<double> upper_bounds);

  void observe(double v) noexcept;

  const std::vector<double>& upper_bounds() const noexcept { return bounds_; }
  /// Non-cumulative count of bucket i (i == upper_bounds().size() is the +Inf bucket).
  uint64_t bucket_count(std::size_t i) const noexcept {
    return buckets_[i].load(std::memory_order_relaxed);
  }
  uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
  double sum() const noexcept { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

/// Buckets for request latencies in seconds: 0.5 ms to 10 s.
std::vector<double> default_latency_buckets_seconds();

enum class metric_type { counter, gauge, histogram };
std::string_view to_string(metric_type t) noexcept;  // "counter", "gauge", "histogram"
inline constexpr metric_type metric_type_last = metric_type::histogram;

class metrics_registry;

/// All series of one metric name. Obtained from metrics_registry; never destroyed before it.
template <class Metric>
class metric_family {
 public:
  /// The series with these label values (one per label name), created on first use.
  /// Precondition: values.size() equals the number of label names.
  Metric& with(const label_values& values);
  Metric& with(std::initializer_list<std::string_view> values);

 private:
  friend class metrics_registry;
  metric_family(std::string name, std::string help, std::vector<std::string> label_names,
                std::vector<double> bounds, std::mutex* mutex)
    : name_(std::move(name)), help_(std::move(help)), label_names_(std::move(label_names)),
      bounds_(std::move(bounds)), mutex_(mutex) {}

  std::string name_;
  std::string help_;
  std::vector<std::string> label_names_;
  std::vector<double> bounds_;  // Histograms only.
  std::mutex* mutex_;           // The registry's.
  std::map<label_values, std::unique_ptr<Metric>> series_;
};

class metrics_registry {
 public:
  metrics_registry() = default;
  metrics_registry(const metrics_registry&) = delete;
  metrics_registry& operator=(const metrics_registry&) = delete;

  /// Registers (or returns the already registered) family. Names must match
  /// [a-zA-Z_:][a-zA-Z0-9_:]* and label names [a-zA-Z_][a-zA-Z0-9_]*; a bad name, or a name
  /// registered before with another type or labels, throws std::invalid_argument (a programming
  /// error, found at start-up).
  metric_family<counter>& counter_family(std::string_view name, std::string_view help,
                                         std::vector<std::string> label_names = {});
  metric_family<gauge>& gauge_family(std::string_view name, std::string_view help,
                                     std::vector<std::string> label_names = {});
  metric_family<histogram>& histogram_family(std::string_view name, std::string_view help,
                                             std::vector<double> upper_bounds,
                                             std::vector<std::string> label_names = {});

  /// Shorthands for a metric without labels.
  counter& add_counter(std::string_view name, std::string_view help) {
    return counter_family(name, help).with(label_values{});
  }
  gauge& add_gauge(std::string_view name, std::string_view help) {
    return gauge_family(name, help).with(label_values{});
  }
  histogram& add_histogram(std::string_view name, std::string_view help,
                           std::vector<double> upper_bounds) {
    return histogram_family(name, help, std::move(upper_bounds)).with(label_values{});
  }

  /// Every family in the Prometheus text format, families sorted by name, series by labels.
  std::string render() const;

 private:
  struct entry {
    metric_type type;
    void* family;  // metric_family<counter|gauge|histogram>*, owned by the holders below.
  };
  template <class Metric>
  metric_family<Metric>& family(metric_type type, std::string_view name, std::string_view help,
                                std::vector<std::string> label_names, std::vector<double> bounds);

  mutable std::mutex mutex_;
  std::map<std::string, entry, std::less<>> entries_;
  std::vector<std::unique_ptr<metric_family<counter>>> counters_;
  std::vector<std::unique_ptr<metric_family<gauge>>> gauges_;
  std::vector<std::unique_ptr<metric_family<histogram>>> histograms_;
};

/// "a\"b" -> a\"b: a label value escaped for the text format.
std::string escape_label_value(std::string_view value);
/// A sample value as the text format writes it: integers without a fraction, "+Inf", "NaN".
std::string format_sample_value(double v);

} // namespace phalanx::api
