#include "api/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace phalanx::api {

namespace {

bool valid_metric_name(std::string_view name) {
  if (name.empty())
    return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && digit)))
      return false;
  }
  return true;
}

bool valid_label_name(std::string_view name) {
  if (name.empty() || name.starts_with("__"))
    return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && digit)))
      return false;
  }
  return true;
}

std::string escape_help(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// {a="x",b="y"} plus an optional extra label (le for histogram buckets).
std::string label_text(const std::vector<std::string>& names, const label_values& values,
                       std::string_view extra_name = {}, std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty())
    return {};
  std::string out = "{";
  bool first = true;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!first)
      out += ',';
    first = false;
    out += names[i];
    out += "=\"";
    out += escape_label_value(values[i]);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!first)
      out += ',';
    out += extra_name;
    out += "=\"";
    out += extra_value;
    out += '"';
  }
  out += '}';
  return out;
}

template <class Metric>
void render_family(std::string& out, const std::string& name, const std::string& help,
                   metric_type type, const std::vector<std::string>& label_names,
                   const std::map<label_values, std::shared_ptr<Metric>>& series) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += escape_help(help);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += to_string(type);
  out += '\n';
  for (const auto& [values, metric] : series) {
    if constexpr (std::is_same_v<Metric, counter>) {
      out += name + label_text(label_names, values) + ' ' + std::to_string(metric->value()) + '\n';
    } else if constexpr (std::is_same_v<Metric, gauge>) {
      out += name + label_text(label_names, values) + ' ' + format_sample_value(metric->value()) +
             '\n';
    } else {
      uint64_t cumulative = 0;
      const auto& bounds = metric->upper_bounds();
      for (std::size_t i = 0; i <= bounds.size(); ++i) {
        cumulative += metric->bucket_count(i);
        std::string le = i < bounds.size() ? format_sample_value(bounds[i]) : "+Inf";
        out += name + "_bucket" + label_text(label_names, values, "le", le) + ' ' +
               std::to_string(cumulative) + '\n';
      }
      out += name + "_sum" + label_text(label_names, values) + ' ' +
             format_sample_value(metric->sum()) + '\n';
      out += name + "_count" + label_text(label_names, values) + ' ' +
             std::to_string(metric->count()) + '\n';
    }
  }
}

} // namespace

std::string_view to_string(metric_type t) noexcept {
  switch (t) {
    case metric_type::counter:
      return "counter";
    case metric_type::gauge:
      return "gauge";
    case metric_type::histogram:
      return "histogram";
  }
  return "untyped";
}

histogram::histogram(std::vector<double> upper_bounds) : bounds_(std::move(upper_bounds)) {
  for (std::size_t i = 1; i < bounds_.size(); ++i) {
    if (!(bounds_[i - 1] < bounds_[i]))
      throw std::invalid_argument("histogram bounds must be strictly increasing");
  }
  buckets_ = std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1);
  for (std::size_t i = 0; i <= bounds_.size(); ++i)
    buckets_[i].store(0, std::memory_order_relaxed);
}

void histogram::observe(double v) noexcept {
  auto it = std::lower_bound(bounds_.begin(), bounds_.end(), v);
  buckets_[static_cast<std::size_t>(it - bounds_.begin())].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

std::vector<double> default_latency_buckets_seconds() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

template <class Metric>
std::shared_ptr<Metric> metric_family<Metric>::share(const label_values& values) {
  if (values.size() != label_names_.size())
    throw std::invalid_argument("metric " + name_ + ": wrong number of label values");
  std::lock_guard lock{*mutex_};
  auto it = series_.find(values);
  if (it == series_.end()) {
    std::shared_ptr<Metric> m;
    if constexpr (std::is_same_v<Metric, histogram>)
      m = std::make_shared<histogram>(bounds_);
    else
      m = std::make_shared<Metric>();
    it = series_.emplace(values, std::move(m)).first;
  }
  return it->second;
}

template <class Metric>
Metric& metric_family<Metric>::with(const label_values& values) {
  // The family keeps a reference until the series is removed: the caller's reference is as
  // valid as that.
  return *share(values);
}

template <class Metric>
std::size_t metric_family<Metric>::remove_series_with(std::string_view label_name,
                                                      std::string_view value) {
  auto label = std::find(label_names_.begin(), label_names_.end(), label_name);
  if (label == label_names_.end())
    return 0;
  const auto index = static_cast<std::size_t>(label - label_names_.begin());
  std::lock_guard lock{*mutex_};
  return std::erase_if(series_, [&](const auto& s) { return s.first[index] == value; });
}

template <class Metric>
Metric& metric_family<Metric>::with(std::initializer_list<std::string_view> values) {
  label_values v;
  v.reserve(values.size());
  for (auto s : values)
    v.emplace_back(s);
  return with(v);
}

template class metric_family<counter>;
template class metric_family<gauge>;
template class metric_family<histogram>;

template <class Metric>
metric_family<Metric>& metrics_registry::family(metric_type type, std::string_view name,
                                                std::string_view help,
                                                std::vector<std::string> label_names,
                                                std::vector<double> bounds) {
  if (!valid_metric_name(name))
    throw std::invalid_argument("invalid metric name: " + std::string(name));
  for (const auto& l : label_names) {
    if (!valid_label_name(l) || l == "le")
      throw std::invalid_argument("invalid label name " + l + " for metric " + std::string(name));
  }
  std::lock_guard lock{mutex_};
  if (auto it = entries_.find(name); it != entries_.end()) {
    if (it->second.type != type || it->second.is_sampled)
      throw std::invalid_argument("metric " + std::string(name) + " registered with another type");
    auto* f = static_cast<metric_family<Metric>*>(it->second.family);
    if (f->label_names_ != label_names)
      throw std::invalid_argument("metric " + std::string(name) +
                                  " registered with other label names");
    return *f;
  }
  std::unique_ptr<metric_family<Metric>> f{new metric_family<Metric>(
    std::string(name), std::string(help), std::move(label_names), std::move(bounds), &mutex_)};
  auto* raw = f.get();
  if constexpr (std::is_same_v<Metric, counter>)
    counters_.push_back(std::move(f));
  else if constexpr (std::is_same_v<Metric, gauge>)
    gauges_.push_back(std::move(f));
  else
    histograms_.push_back(std::move(f));
  entries_.emplace(std::string(name), entry{type, raw});
  return *raw;
}

metric_family<counter>& metrics_registry::counter_family(std::string_view name,
                                                         std::string_view help,
                                                         std::vector<std::string> label_names) {
  return family<counter>(metric_type::counter, name, help, std::move(label_names), {});
}

metric_family<gauge>& metrics_registry::gauge_family(std::string_view name, std::string_view help,
                                                     std::vector<std::string> label_names) {
  return family<gauge>(metric_type::gauge, name, help, std::move(label_names), {});
}

metric_family<histogram>& metrics_registry::histogram_family(
  std::string_view name, std::string_view help, std::vector<double> upper_bounds,
  std::vector<std::string> label_names) {
  // Validate the bounds now rather than at the first series.
  histogram probe{upper_bounds};
  (void)probe;
  return family<histogram>(metric_type::histogram, name, help, std::move(label_names),
                           std::move(upper_bounds));
}

void metrics_registry::add_sampled(std::string_view name, std::string_view help,
                                   metric_type type, std::function<double()> read) {
  if (!valid_metric_name(name))
    throw std::invalid_argument("invalid metric name: " + std::string(name));
  if (type == metric_type::histogram)
    throw std::invalid_argument("metric " + std::string(name) + ": a sampled metric is a counter "
                                "or a gauge");
  std::lock_guard lock{mutex_};
  if (entries_.count(name) != 0)
    throw std::invalid_argument("metric " + std::string(name) + " registered twice");
  sampled_.push_back(
      std::make_unique<sampled>(sampled{std::string(name), std::string(help), std::move(read)}));
  entries_.emplace(std::string(name), entry{type, sampled_.back().get(), true});
}

std::string metrics_registry::render() const {
  std::string out;
  std::lock_guard lock{mutex_};
  for (const auto& [name, e] : entries_) {
    if (e.is_sampled) {
      const auto* s = static_cast<const sampled*>(e.family);
      out += "# HELP " + s->name + ' ' + escape_help(s->help) + "\n# TYPE " + s->name + ' ' +
             std::string(to_string(e.type)) + '\n' + s->name + ' ' +
             format_sample_value(s->read()) + '\n';
      continue;
    }
    switch (e.type) {
      case metric_type::counter: {
        auto* f = static_cast<metric_family<counter>*>(e.family);
        render_family(out, f->name_, f->help_, e.type, f->label_names_, f->series_);
        break;
      }
      case metric_type::gauge: {
        auto* f = static_cast<metric_family<gauge>*>(e.family);
        render_family(out, f->name_, f->help_, e.type, f->label_names_, f->series_);
        break;
      }
      case metric_type::histogram: {
        auto* f = static_cast<metric_family<histogram>*>(e.family);
        render_family(out, f->name_, f->help_, e.type, f->label_names_, f->series_);
        break;
      }
    }
  }
  return out;
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string format_sample_value(double v) {
  if (std::isnan(v))
    return "NaN";
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    return std::to_string(static_cast<int64_t>(v));
  // std::to_chars without a format picks the shorter of plain and scientific: "1e-04" for
  // 0.0001. Plain notation with the shortest round-trip digits reads "0.0001".
  const double magnitude = std::fabs(v);
  const auto format = magnitude >= 1e-9 && magnitude < 1e21 ? std::chars_format::fixed
                                                            : std::chars_format::general;
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, format);
  return std::string(buf, r.ptr);
}

} // namespace phalanx::api
