#include "loadtest/stats.hpp"

#include "loadtest/flags.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace phalanx::loadtest {

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty())
    return 0;
  q = std::clamp(q, 0.0, 1.0);
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  if (rank == 0)
    rank = 1;
  return sorted[std::min(rank, sorted.size()) - 1];
}

latency_summary summarize(std::vector<double> samples) {
  latency_summary s;
  if (samples.empty())
    return s;
  std::sort(samples.begin(), samples.end());
  s.count = samples.size();
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / double(samples.size());
  s.p50 = percentile_sorted(samples, 0.50);
  s.p90 = percentile_sorted(samples, 0.90);
  s.p99 = percentile_sorted(samples, 0.99);
  s.max = samples.back();
  return s;
}

result<std::vector<prom_sample>> parse_prometheus_text(std::string_view text) {
  std::vector<prom_sample> out;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty() || line.front() == '#')
      continue;
    auto bad = [&](const std::string& what) {
      return status{errc::invalid_argument, "metrics line " + std::to_string(line_no) + ": " +
                                                what + ": " + std::string(line.substr(0, 200))};
    };
    prom_sample s;
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ')
      ++i;
    s.name = std::string(line.substr(0, i));
    if (s.name.empty())
      return bad("no metric name");
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        auto eq = line.find('=', i);
        if (eq == std::string_view::npos || eq + 1 >= line.size() || line[eq + 1] != '"')
          return bad("malformed label");
        std::string key(line.substr(i, eq - i));
        std::string value;
        std::size_t j = eq + 2;
        bool closed = false;
        while (j < line.size()) {
          char c = line[j];
          if (c == '\\' && j + 1 < line.size()) {
            char n = line[j + 1];
            value += n == 'n' ? '\n' : n;
            j += 2;
            continue;
          }
          if (c == '"') {
            closed = true;
            ++j;
            break;
          }
          value += c;
          ++j;
        }
        if (!closed)
          return bad("unterminated label value");
        s.labels[key] = value;
        i = j;
        if (i < line.size() && line[i] == ',')
          ++i;
      }
      if (i >= line.size())
        return bad("unterminated label set");
      ++i; // '}'
    }
    while (i < line.size() && line[i] == ' ')
      ++i;
    auto rest = line.substr(i);
    auto space = rest.find(' '); // An optional timestamp follows.
    auto value_text = std::string(rest.substr(0, space));
    if (value_text == "+Inf")
      s.value = std::numeric_limits<double>::infinity();
    else if (value_text == "-Inf")
      s.value = -std::numeric_limits<double>::infinity();
    else if (value_text == "NaN")
      s.value = std::numeric_limits<double>::quiet_NaN();
    else if (auto v = parse_number(value_text))
      s.value = *v;
    else
      return bad("\"" + value_text + "\" is not a number");
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<double> find_sample(const std::vector<prom_sample>& samples, std::string_view name,
                                  const std::map<std::string, std::string>& labels) {
  for (const auto& s : samples) {
    if (s.name != name)
      continue;
    bool match = true;
    for (const auto& [k, v] : labels) {
      auto it = s.labels.find(k);
      if (it == s.labels.end() || it->second != v) {
        match = false;
        break;
      }
    }
    if (match)
      return s.value;
  }
  return std::nullopt;
}

std::optional<histogram_data> find_histogram(const std::vector<prom_sample>& samples,
                                             std::string_view name) {
  std::string bucket = std::string(name) + "_bucket";
  std::vector<std::pair<double, uint64_t>> buckets;
  histogram_data h;
  bool found = false;
  for (const auto& s : samples) {
    if (s.name == bucket) {
      auto le = s.labels.find("le");
      if (le == s.labels.end())
        continue;
      found = true;
      if (le->second == "+Inf")
        continue;
      auto bound = parse_number(le->second);
      if (bound)
        buckets.emplace_back(*bound, static_cast<uint64_t>(s.value));
    } else if (s.name == std::string(name) + "_count") {
      h.count = static_cast<uint64_t>(s.value);
    } else if (s.name == std::string(name) + "_sum") {
      h.sum = s.value;
    }
  }
  if (!found)
    return std::nullopt;
  std::sort(buckets.begin(), buckets.end());
  for (const auto& [b, c] : buckets) {
    h.upper_bounds.push_back(b);
    h.cumulative.push_back(c);
  }
  return h;
}

double histogram_quantile(const histogram_data& h, double q) {
  if (h.count == 0 || h.upper_bounds.empty())
    return 0;
  double rank = std::clamp(q, 0.0, 1.0) * double(h.count);
  for (std::size_t i = 0; i < h.upper_bounds.size(); ++i) {
    if (double(h.cumulative[i]) >= rank) {
      double lower = i == 0 ? 0.0 : h.upper_bounds[i - 1];
      double below = i == 0 ? 0.0 : double(h.cumulative[i - 1]);
      double in_bucket = double(h.cumulative[i]) - below;
      if (in_bucket <= 0)
        return h.upper_bounds[i];
      return lower + (h.upper_bounds[i] - lower) * (rank - below) / in_bucket;
    }
  }
  return h.upper_bounds.back();
}

double histogram_max_bound(const histogram_data& h) {
  if (h.count == 0)
    return 0;
  if (h.upper_bounds.empty() || h.cumulative.back() < h.count)
    return std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < h.upper_bounds.size(); ++i)
    if (h.cumulative[i] == h.count)
      return h.upper_bounds[i];
  return h.upper_bounds.back();
}

} // namespace phalanx::loadtest
