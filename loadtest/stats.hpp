#pragma once

// Figures of a run: percentiles of exact samples, quantiles of Prometheus histograms (the
// runtime's gang decision latency is one), and a reader of the Prometheus text format that the
// runtime and phalanxd's /metrics produce.
//
// Pure functions; thread-safe.

#include "scheduler/result.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::loadtest {

/// Nearest-rank percentile (q in [0, 1]) of `sorted` (ascending); 0 when empty.
double percentile_sorted(const std::vector<double>& sorted, double q);

struct latency_summary {
  uint64_t count = 0;
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
};
/// Summarises samples (any order); all zero when empty.
latency_summary summarize(std::vector<double> samples);

/// One sample of the text format: name{labels} value.
struct prom_sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

/// Parses the Prometheus text exposition format 0.0.4 (comments and blank lines skipped). Errors
/// name the line and what is wrong.
result<std::vector<prom_sample>> parse_prometheus_text(std::string_view text);

/// The value of the sample with this name whose labels include `labels`; nullopt when none.
std::optional<double> find_sample(const std::vector<prom_sample>& samples, std::string_view name,
                                  const std::map<std::string, std::string>& labels = {});

/// A histogram read back from its _bucket, _sum and _count samples.
struct histogram_data {
  std::vector<double> upper_bounds; // Finite bounds, ascending.
  std::vector<uint64_t> cumulative; // Per finite bound, cumulative counts.
  uint64_t count = 0;               // Including the +Inf bucket.
  double sum = 0;
};
/// nullopt when the histogram is not in `samples`.
std::optional<histogram_data> find_histogram(const std::vector<prom_sample>& samples,
                                             std::string_view name);
/// The q-quantile as Prometheus' histogram_quantile computes it: linear interpolation inside the
/// bucket that holds the rank (from 0 for the first bucket); the largest finite bound when the
/// rank falls in the +Inf bucket; 0 when empty.
double histogram_quantile(const histogram_data& h, double q);
/// The upper bound of the highest non-empty bucket: an upper bound of the largest observation
/// (+infinity when some observation exceeded every finite bound); 0 when empty.
double histogram_max_bound(const histogram_data& h);

} // namespace phalanx::loadtest
