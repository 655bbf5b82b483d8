#include "scheduler/enqueue_gate.hpp"

#include "scheduler/sla.hpp"

#include "scheduler/quantity.hpp"

#include <algorithm>
#include <numeric>

namespace phalanx::scheduler {

namespace {

constexpr int max_integer_digits = 6;
constexpr int max_fraction_digits = 9;

std::string quoted(std::string_view text) {
  std::string out = "\"";
  out += text;
  out += '"';
  return out;
}

// Appends "needs cpu 4" for one short dimension.
void append_need(std::string& out, const shortfall& s) {
  out += "needs ";
  out += s.resource;
  out += ' ';
  out += format_resource_amount(s.resource, s.requested);
}

} // namespace

result<ratio> parse_overcommit_factor(std::string_view text) {
  auto malformed = [&] {
    return result<ratio>(errc::invalid_argument,
                         "overcommit factor " + quoted(text) +
                             ": not a decimal number like \"1.2\" (digits, optionally a point and "
                             "up to 9 more digits)");
  };
  std::size_t i = 0;
  int64_t integer = 0;
  int integer_digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (++integer_digits > max_integer_digits)
      return malformed();
    integer = integer * 10 + (text[i] - '0');
    ++i;
  }
  if (integer_digits == 0)
    return malformed();
  int64_t fraction = 0;
  int64_t scale = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    int fraction_digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (++fraction_digits > max_fraction_digits)
        return malformed();
      fraction = fraction * 10 + (text[i] - '0');
      scale *= 10;
      ++i;
    }
    if (fraction_digits == 0)
      return malformed();
  }
  if (i != text.size())
    return malformed();
  int64_t num = integer * scale + fraction;
  int64_t den = scale;
  if (num < den)
    return result<ratio>(errc::invalid_argument,
                         "overcommit factor " + quoted(text) +
                             ": must be >= 1.0 (below 1 the gate would admit less than the "
                             "cluster holds)");
  int64_t g = std::gcd(num, den);
  return ratio{num / g, den / g};
}

std::string format_factor(ratio factor) {
  if (factor.den <= 0)
    return "invalid";
  int64_t rest = factor.den;
  while (rest % 2 == 0)
    rest /= 2;
  while (rest % 5 == 0)
    rest /= 5;
  if (rest != 1 || factor.num < 0)
    return std::to_string(factor.num) + "/" + std::to_string(factor.den);
  // The smallest power of ten the denominator divides.
  int digits = 0;
  __int128 power = 1;
  while (power % factor.den != 0) {
    power *= 10;
    ++digits;
  }
  __int128 scaled = __int128{factor.num} * (power / factor.den);
  std::string text;
  if (scaled == 0)
    text = "0";
  while (scaled > 0) {
    text.insert(text.begin(), static_cast<char>('0' + static_cast<int>(scaled % 10)));
    scaled /= 10;
  }
  if (digits == 0)
    return text;
  if (static_cast<int>(text.size()) <= digits)
    text.insert(0, static_cast<std::size_t>(digits + 1 - static_cast<int>(text.size())), '0');
  text.insert(text.end() - digits, '.');
  return text;
}

std::string_view to_string(admission_code c) noexcept {
  switch (c) {
    case admission_code::admitted:
      return "Admitted";
    case admission_code::queue_not_open:
      return "QueueNotOpen";
    case admission_code::queue_capability:
      return "QueueCapability";
    case admission_code::cluster_overcommit:
      return "ClusterOvercommit";
  }
  return "Unknown";
}

enqueue_gate::enqueue_gate(enqueue_config config, const resources& allocatable,
                           const resources& used, const resources& inqueue, timestamp now)
    : config_(config),
      now_(now),
      scaled_allocatable_(allocatable.scaled(config.overcommit_factor.num,
                                             config.overcommit_factor.den)),
      used_(used),
      inqueue_(inqueue) {}

resources enqueue_gate::cluster_room() const {
  return scaled_allocatable_ - used_ - inqueue_;
}

resources gate_claim(const pod_group& group, bool started, int64_t holding,
                     const resources& allocated) {
  if (started && holding < group.min_member)
    return {};
  return (group.min_resources - allocated).clamped_at_zero();
}

admission_decision enqueue_gate::check(const pod_group& group, const queue_usage& queue) const {
  admission_decision out;
  if (queue.state != queue_state::open) {
    out.code = admission_code::queue_not_open;
    out.reason = "queue " + quoted(queue.name) + " is " + std::string(to_string(queue.state)) +
                 ": only an Open queue admits gangs";
    return out;
  }
  const resources& need = group.min_resources;
  if (need.is_zero())
    return out;
  // Volcano's sla plugin permits a gang that waited past its sla-waiting-time, and a permit in
  // its tier keeps the later tiers (overcommit, proportion) from being asked.
  if (sla_due(group, now_)) {
    out.waited_past_sla = true;
    return out;
  }

  // Queue capability, in the dimensions the gang asks for. Uncapped dimensions never fall short:
  // they get the gang's own amount as "left".
  resources queue_left;
  need.for_each([&](std::string_view name, int64_t amount) {
    if (amount <= 0)
      return;
    auto cap = queue.capability.get(name);
    if (!cap) {
      queue_left.set(name, amount);
      return;
    }
    int64_t left = saturating_sub(saturating_sub(*cap, queue.allocated.get(name)),
                                  queue.inqueue.get(name));
    queue_left.set(name, std::max<int64_t>(0, left));
  });
  if (auto short_dims = shortfalls(need, queue_left); !short_dims.empty()) {
    out.code = admission_code::queue_capability;
    out.reason = "queue " + quoted(queue.name) + " capability: ";
    for (std::size_t i = 0; i < short_dims.size(); ++i) {
      const auto& s = short_dims[i];
      if (i > 0)
        out.reason += "; ";
      append_need(out.reason, s);
      out.reason += ", has " + format_resource_amount(s.resource, s.available) + " of " +
                    format_resource_amount(s.resource, *queue.capability.get(s.resource)) +
                    " left";
    }
    out.missing = std::move(short_dims);
    return out;
  }

  // Cluster overcommit, in the dimensions the gang asks for.
  const resources room = cluster_room();
  resources cluster_left;
  need.for_each([&](std::string_view name, int64_t amount) {
    if (amount > 0)
      cluster_left.set(name, std::max<int64_t>(0, room.get(name)));
  });
  if (auto short_dims = shortfalls(need, cluster_left); !short_dims.empty()) {
    out.code = admission_code::cluster_overcommit;
    out.reason = "cluster overcommit: ";
    const std::string factor = format_factor(config_.overcommit_factor);
    for (std::size_t i = 0; i < short_dims.size(); ++i) {
      const auto& s = short_dims[i];
      if (i > 0)
        out.reason += "; ";
      append_need(out.reason, s);
      out.reason += ", " + format_resource_amount(s.resource, s.available) + " left of " +
                    factor + " x allocatable";
    }
    out.missing = std::move(short_dims);
  }
  return out;
}

admission_decision enqueue_gate::admit(const pod_group& group, queue_usage& queue) {
  auto decision = check(group, queue);
  if (decision.admitted() && !group.min_resources.is_zero()) {
    inqueue_ += group.min_resources;
    queue.inqueue += group.min_resources;
  }
  return decision;
}

} // namespace phalanx::scheduler
