#pragma once

// A small Prometheus metrics registry (text exposition format 0.0.4): counters, gauges and
// histograms, each optionally with labels. The HTTP server records its own metrics here and the
// actor runtime uses the same registry for the scheduler's.
//
// Thread-safety: registering (the *_family, with(), share() and remove calls) takes a mutex;
// recording (inc, set, observe) is lock-free on atomics and safe from any thread. A series lives
// as long as the registry unless it is removed (remove_series_with, for a deleted object's series):
// keep the reference from with() and record through it on hot paths, or, for a series another
// thread may remove, keep the shared pointer from share(), which outlives the removal (recording
// into a removed series is harmless and shows nowhere).

#include <atomic>
#include <cstdint>
#include <functional>
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
  /// The same series, shared: it stays valid for its holder after remove_series_with().
  std::shared_ptr<Metric> share(const label_values& values);

  /// Removes every series whose label `label_name` has the value `value` (a deleted queue's);
  /// they no longer render. Returns how many went. A label the family does not have removes
  /// nothing. A series removed and asked for again by with() or share() starts anew from zero.
  std::size_t remove_series_with(std::string_view label_name, std::string_view value);

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
  std::map<label_values, std::shared_ptr<Metric>> series_;
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

  /// Registers a metric without labels whose value is read when the registry renders, for
  /// values kept elsewhere (the process's CPU time in /proc). `type` is counter or gauge; the
  /// value may have a fraction either way (process_cpu_seconds_total). `read` runs on the
  /// rendering thread with the registry's mutex held: it must not call into this registry.
  /// A name registered before throws std::invalid_argument.
  void add_sampled(std::string_view name, std::string_view help, metric_type type,
                   std::function<double()> read);

  /// Every family in the Prometheus text format, families sorted by name, series by labels.
  std::string render() const;

 private:
  struct sampled {
    std::string name;
    std::string help;
    std::function<double()> read;
  };
  struct entry {
    metric_type type;
    /// metric_family<counter|gauge|histogram>*, or sampled* when `is_sampled`; owned by the
    /// holders below.
    void* family;
    bool is_sampled = false;
  };
  template <class Metric>
  metric_family<Metric>& family(metric_type type, std::string_view name, std::string_view help,
                                std::vector<std::string> label_names, std::vector<double> bounds);

  mutable std::mutex mutex_;
  std::map<std::string, entry, std::less<>> entries_;
  std::vector<std::unique_ptr<metric_family<counter>>> counters_;
  std::vector<std::unique_ptr<metric_family<gauge>>> gauges_;
  std::vector<std::unique_ptr<metric_family<histogram>>> histograms_;
  std::vector<std::unique_ptr<sampled>> sampled_;
};

/// "a\"b" -> a\"b: a label value escaped for the text format.
std::string escape_label_value(std::string_view value);
/// A sample value (or a bucket's `le`) as the text format writes it: integers without a
/// fraction, other finite values in plain decimal notation ("0.0001", never "1e-04": people read
/// these, and a bucket's le label must not change spelling between versions), the shortest that
/// reads back as the same double; "+Inf", "-Inf", "NaN". Values below 1e-9 or from 1e21 on in
/// magnitude, which no metric of ours takes, keep the exponent rather than print dozens of zeros.
std::string format_sample_value(double v);

} // namespace phalanx::api
