#include "scheduler/order.hpp"

#include "scheduler/sla.hpp"

#include <algorithm>

namespace phalanx::scheduler {

namespace {

std::strong_ordering compare_times(timestamp a, timestamp b) noexcept {
  return a.time_since_epoch().count() <=> b.time_since_epoch().count();
}

// Volcano's sla plugin: a gang with an sla-waiting-time before one without, the earlier deadline
// first.
std::strong_ordering compare_sla(const pod_group& a, const pod_group& b) noexcept {
  auto deadline_a = sla_deadline(a);
  auto deadline_b = sla_deadline(b);
  if (deadline_a.has_value() != deadline_b.has_value())
    return deadline_a.has_value() ? std::strong_ordering::less : std::strong_ordering::greater;
  if (deadline_a)
    return compare_times(*deadline_a, *deadline_b);
  return std::strong_ordering::equal;
}

} // namespace

std::strong_ordering compare_gangs(const pod_group& a, const pod_group& b) noexcept {
  if (a.priority != b.priority)
    return b.priority <=> a.priority;  // Higher priority first.
  if (auto c = compare_sla(a, b); c != 0)
    return c;
  if (auto c = compare_times(a.meta.creation_time, b.meta.creation_time); c != 0)
    return c;
  return a.meta.uid <=> b.meta.uid;
}

int32_t quantize_share(ratio share) noexcept {
  if (share.den <= 0 || share.num <= 0)
    return 0;
  __int128 steps = __int128{share.num} * ticket_share_steps / share.den;
  return static_cast<int32_t>(std::min<__int128>(steps, ticket_share_max_steps));
}

std::strong_ordering operator<=>(const ticket& a, const ticket& b) noexcept {
  if (a.share_steps != b.share_steps)
    return a.share_steps <=> b.share_steps;
  if (a.priority != b.priority)
    return b.priority <=> a.priority;
  if (auto c = compare_times(a.creation_time, b.creation_time); c != 0)
    return c;
  return a.uid <=> b.uid;
}

std::string ticket::to_string() const {
  std::string out = "share ";
  out += std::to_string(share_steps / ticket_share_steps);
  out += '.';
  auto cents = share_steps % ticket_share_steps;
  if (cents < 10)
    out += '0';
  out += std::to_string(cents);
  out += ", priority ";
  out += std::to_string(priority);
  out += ", created ";
  auto ns = creation_time.time_since_epoch().count();
  // Seconds and nanoseconds since the epoch: exact, and sortable by eye.
  auto secs = ns / 1'000'000'000;
  auto frac = ns % 1'000'000'000;
  if (frac < 0) {
    frac += 1'000'000'000;
    --secs;
  }
  std::string frac_text = std::to_string(frac);
  out += std::to_string(secs);
  out += '.';
  out.append(9 - frac_text.size(), '0');
  out += frac_text;
  out += ", uid ";
  out += uid.str();
  return out;
}

ticket make_ticket(const pod_group& group, ratio queue_share) {
  return ticket{quantize_share(queue_share), group.priority, group.meta.creation_time,
                group.meta.uid};
}

std::strong_ordering operator<=>(const queue_rank& a, const queue_rank& b) noexcept {
  if (a.priority != b.priority)
    return b.priority <=> a.priority;
  if (auto c = a.share <=> b.share; c != 0)
    return c;
  return a.name.compare(b.name) <=> 0;
}

namespace {

queue_rank rank_of(const queue_standing& q) {
  return {q.priority, queue_share(q.allocated, q.deserved), q.name};
}

} // namespace

std::strong_ordering compare_queues(const queue_standing& a, const queue_standing& b) {
  return rank_of(a) <=> rank_of(b);
}

void sort_queues(std::vector<queue_standing>& queues) {
  std::vector<std::pair<queue_rank, std::size_t>> keyed;
  keyed.reserve(queues.size());
  for (std::size_t i = 0; i < queues.size(); ++i)
    keyed.emplace_back(rank_of(queues[i]), i);
  std::sort(keyed.begin(), keyed.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<queue_standing> sorted;
  sorted.reserve(queues.size());
  for (const auto& k : keyed)
    sorted.push_back(std::move(queues[k.second]));
  queues = std::move(sorted);
}

} // namespace phalanx::scheduler
