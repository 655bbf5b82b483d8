// How a preemption is planned:
//
// 1. Eligible: the candidates on live nodes whose gang's priority is below the preemptor's
//    and, for reclaim, whose gang's queues are all given. They are grouped into units, each
//    evicted at once: a single pod (one of its own, or one of the first `spare` of its gang) or
//    the rest of a gang (the whole gang then goes).
// 2. The minimum is planned on the view as is. If it fits, nothing is evicted; if the planner
//    calls it unresolvable, evictions cannot help either (they free room, not allocatable).
// 3. A binary search finds the shortest prefix of the units, in preference order, whose room
//    (added to their nodes' free amounts by an overlay view) lets the planner place the
//    minimum. This improves on planning once with the room of every eligible pod: the planner
//    then lands where the preferred victims are, across nodes (a priority-1 pod on one node
//    before a priority-5 pod on another), instead of wherever its score liked lower-priority
//    room. More room never makes the planner fail where it succeeded, so the search finds the
//    shortest prefix up to the planner's own heuristics. It runs for two orders, both by
//    priority and single pods before whole gangs: by start time (most recent first) and by the
//    room a unit frees (largest first, so that one big pod on another node beats two small
//    ones); the plan with the lower highest victim priority, then fewer victims, wins, and the
//    start-time order on a tie.
//    Queue limits (reclaim): each order is first walked once with every queue's books open: a
//    unit whose queue could not lose its pods at that point is passed over (a whole gang counts
//    every pod of it not taken yet, its passed-over spare ones too, so it still goes whole), and
//    the search runs over the units left. A shorter prefix is the same walk cut short, so every
//    prefix is within the limits in its order. The two orders may then keep different units,
//    so each gets its own plan with all of them.
// 4. Cover: on each node of a plan, victims among the pods of at most the prefix's highest
//    priority until what the plan puts there fits, always at the lowest priority that helps: a
//    single pod (within its gang's spare) that alone makes room, else a whole gang that alone
//    does (the fewest new victims), else the first single pod, else the first whole gang. A
//    whole gang's room on other nodes counts there. The prefix's own pods always suffice, so a
//    cover only fails if the planner broke its promise; that is reported, not asserted.
//    Queue limits: a pod or gang its queue cannot lose at that point, in the order the cover
//    chooses, is passed over. A pod the prefix did not have may thus spend a queue's budget that
//    the prefix's own pod on a later node needed; if the cover fails, the prefix itself is
//    chosen instead, in its order, which is within the limits and makes room.
// 5. Prune: victims not needed after all are dropped, the most preferred to keep first: whole
//    gangs, then single pods. This keeps the queue limits: with a victim dropped, its queue
//    holds more before each later one, which only helps both conditions.

#include "scheduler/preemption.hpp"

#include <algorithm>
#include <tuple>

namespace phalanx::scheduler {

std::size_t preemption_plan::victim_count() const {
  std::size_t n = 0;
  for (const auto& [node, pods] : victims_by_node)
    n += pods.size();
  return n;
}

namespace {

constexpr std::size_t none = static_cast<std::size_t>(-1);

using victim_list = std::vector<std::pair<uint32_t, std::vector<uint64_t>>>;

// By how much `demand` exceeds `available`, in the dimensions `demand` uses (as fits() counts
// them): zero exactly when fits(demand, available).
resources short_of(const resources& demand, const resources& available) {
  auto missing = [](int64_t d, int64_t a) { return d > 0 && d > a ? saturating_sub(d, a) : 0; };
  resources out;
  out.cpu_milli = missing(demand.cpu_milli, available.cpu_milli);
  out.memory_bytes = missing(demand.memory_bytes, available.memory_bytes);
  out.ephemeral_bytes = missing(demand.ephemeral_bytes, available.ephemeral_bytes);
  out.pods = missing(demand.pods, available.pods);
  for (const auto& e : demand.extended())
    if (int64_t m = missing(e.amount, available.get(e.name)); m > 0)
      out.set(e.name, m);
  return out;
}

// True when some dimension is positive in both: evicting `room` helps with `missing`.
bool overlaps(const resources& missing, const resources& room) noexcept {
  if ((missing.cpu_milli > 0 && room.cpu_milli > 0) ||
      (missing.memory_bytes > 0 && room.memory_bytes > 0) ||
      (missing.ephemeral_bytes > 0 && room.ephemeral_bytes > 0) ||
      (missing.pods > 0 && room.pods > 0))
    return true;
  for (const auto& e : missing.extended())
    if (e.amount > 0 && room.get(e.name) > 0)
      return true;
  return false;
}

// "1 bound pod has", "2 bound pods have".
std::string counted(std::size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// The view with room added on some nodes: what their free amounts would be once some pods are
// gone. Lives for one plan_preemption call.
class room_overlay final : public node_view {
 public:
  // `nodes`: sorted, unique; the only nodes room may be added to.
  room_overlay(const node_view& base, std::vector<uint32_t> nodes)
      : base_(base), nodes_(std::move(nodes)), room_(nodes_.size()) {}

  std::size_t size() const noexcept override { return base_.size(); }
  const node& at(std::size_t index) const noexcept override { return base_.at(index); }
  bool is_live(std::size_t index) const noexcept override { return base_.is_live(index); }
  namespace_directory_ptr namespaces() const override { return base_.namespaces(); }
  void read_free(std::size_t index, resources& out) const override {
    base_.read_free(index, out);
    auto it = std::lower_bound(nodes_.begin(), nodes_.end(), index,
                               [](uint32_t n, std::size_t i) { return n < i; });
    if (it != nodes_.end() && *it == index)
      out += room_[std::size_t(it - nodes_.begin())];
  }

  void clear() noexcept {
    for (auto& r : room_)
      r.reset();
  }
  // Precondition: `node` is one of the nodes given to the constructor.
  void add(uint32_t node, const resources& room) {
    auto it = std::lower_bound(nodes_.begin(), nodes_.end(), node);
    room_[std::size_t(it - nodes_.begin())] += room;
  }

 private:
  const node_view& base_;
  std::vector<uint32_t> nodes_;
  std::vector<resources> room_;  // Parallel to nodes_.
};

// An eligible candidate.
struct victim_pod {
  const preemption_candidate* candidate = nullptr;
  int32_t priority = 0;      // Its gang's (see preemption_candidate::priority).
  std::size_t group = none;  // Index into victim_search::groups_; none for a gang of its own.
  std::size_t queue = none;  // Index into request.queues; none without queue limits.
  std::size_t order = 0;     // When the cover chose it (1, 2, ...); 0 while not chosen.
};

// A gang that owns eligible pods.
struct victim_group {
  uint64_t id = 0;
  int32_t priority = 0;              // The highest of its candidates'.
  timestamp latest_start{};          // Of its eligible pods.
  int64_t spare = 0;                 // Pods it may lose one by one: ready - min_member, >= 0.
  std::vector<std::size_t> members;  // Indices into pods_, in the order they would go.

  // Cover state.
  int64_t singles = 0;  // Members evicted one by one.
  bool whole = false;   // Evicted as a whole: every member is chosen.
};

// Pods evicted at once, as the binary search sees them.
struct victim_unit {
  int32_t priority = 0;
  bool whole = false;   // The rest of a gang beyond its spare; else a single pod.
  timestamp start{};    // The most recent start among its pods.
  uint64_t id = 0;      // The pod's id, or the gang's.
  ratio share;          // Its room's dominant share of the cluster's allocatable.
  std::vector<std::size_t> pods;  // Indices into pods_.
};

// A node of a plan: what the plan puts there against what is free now.
struct plan_node {
  uint32_t node = 0;
  resources need;                   // short_of(placed, free now): what victims must free here.
  resources freed;                  // What the victims chosen so far free here.
  std::vector<std::size_t> pods;    // Pods here the cover may evict, in the order they would go.
  std::vector<std::size_t> groups;  // Their gangs, in the order they would go.

  bool covered() const noexcept { return fits(need, freed); }
};

// The victims a cover chose for one plan.
struct cover_result {
  bool ok = false;
  int32_t top_priority = 0;  // The highest priority among the victims.
  std::size_t count = 0;
  victim_list victims;
  std::string detail;  // When not ok.

  // True when this is the better choice: a lower highest priority, then fewer victims.
  bool better_than(const cover_result& other) const noexcept {
    if (ok != other.ok)
      return ok;
    return std::tie(top_priority, count) < std::tie(other.top_priority, other.count);
  }
};

// Volcano's proportion rule plus the guarantee: a queue that holds `holds` may lose a pod of
// `request` only while it holds more than its deserved share in some dimension, and only if it
// then still holds its guarantee in every dimension.
bool may_lose(const victim_queue& queue, const resources& holds, const resources& request) {
  return !fits(holds, queue.deserved) && fits(queue.guarantee, holds - request);
}

// True when both are the same units in the same order (a unit is known by its pods).
bool same_units(const std::vector<victim_unit>& a, const std::vector<victim_unit>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const victim_unit& x, const victim_unit& y) { return x.pods == y.pods; });
}

// True when both evict the same pods, in whatever order.
bool same_pods(const std::vector<victim_unit>& a, const std::vector<victim_unit>& b) {
  auto pods = [](const std::vector<victim_unit>& units) {
    std::vector<std::size_t> out;
    for (const auto& u : units)
      out.insert(out.end(), u.pods.begin(), u.pods.end());
    std::sort(out.begin(), out.end());
    return out;
  };
  return pods(a) == pods(b);
}

class victim_search {
 public:
  victim_search(const node_view& view, const preemption_request& request)
      : view_(view), request_(request) {
    collect();
    make_units();
  }

  bool empty() const noexcept { return pods_.empty(); }
  std::size_t eligible() const noexcept { return pods_.size(); }
  const preemption_candidate& candidate(std::size_t pod) const { return *pods_[pod].candidate; }

  // The units by priority, single pods before whole gangs, then the most recent first.
  std::vector<std::size_t> order_by_start() const {
    return sorted_units([](const victim_unit& a, const victim_unit& b) {
      return std::tie(a.priority, a.whole, b.start, b.id) <
             std::tie(b.priority, b.whole, a.start, a.id);
    });
  }
  // The same, the units freeing the most room first within a priority.
  std::vector<std::size_t> order_by_room() const {
    return sorted_units([](const victim_unit& a, const victim_unit& b) {
      return std::tie(a.priority, a.whole, b.share, b.start, b.id) <
             std::tie(b.priority, b.whole, a.share, a.start, a.id);
    });
  }

  // The units of `order` the queue limits let go, walked in that order from what the queues
  // hold now: a unit is passed over when a queue could not lose its pods at that point. A whole
  // gang stands for every pod of it not taken yet (spare pods passed over too), so that it still
  // goes whole. Without queue limits: every unit, as it is.
  std::vector<victim_unit> admissible(const std::vector<std::size_t>& order) {
    std::vector<victim_unit> out;
    out.reserve(order.size());
    open_books();
    std::vector<bool> taken(pods_.size(), false);
    for (std::size_t u : order) {
      victim_unit unit = units_[u];
      if (unit.whole) {
        unit.pods.clear();
        for (std::size_t m : groups_[pods_[units_[u].pods.front()].group].members)
          if (!taken[m])
            unit.pods.push_back(m);
      }
      if (!may_take(unit.pods))
        continue;
      for (std::size_t p : unit.pods) {
        charge(p);
        taken[p] = true;
      }
      out.push_back(std::move(unit));
    }
    return out;
  }

  // Nodes of the eligible pods, sorted and unique.
  std::vector<uint32_t> nodes() const {
    std::vector<uint32_t> out;
    for (const auto& p : pods_)
      out.push_back(p.candidate->node);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  // Why no pod may go; `held`: the eligible pods the queue limits keep.
  std::string why_none(std::size_t held) const {
    const bool reclaim = !request_.queues.empty();
    std::string out = reclaim ? "no pods of queues over their deserved share can make room: "
                              : "no lower-priority pods of the queue can make room: ";
    const std::size_t total = request_.candidates.size();
    if (total == 0)
      return out + (reclaim ? "they have no bound pods" : "it has no bound pods");
    out += (reclaim ? "of their " : "of its ") + counted(total, "bound pod", "bound pods") + ", ";
    std::vector<std::string> reasons;
    auto add = [&](std::size_t n, std::string_view one, std::string_view many) {
      if (n > 0)
        reasons.push_back(counted(n, one, many));
    };
    add(not_lower_, "has priority " + std::to_string(request_.priority) + " or higher",
        "have priority " + std::to_string(request_.priority) + " or higher");
    add(on_removed_, "is on a removed node", "are on a removed node");
    add(not_listed_, "is of a queue not given", "are of queues not given");
    add(held, "is kept by its queue's deserved share or guarantee",
        "are kept by their queues' deserved shares or guarantees");
    for (std::size_t i = 0; i < reasons.size(); ++i)
      out += (i == 0 ? "" : i + 1 == reasons.size() ? " and " : ", ") + reasons[i];
    return out;
  }

  // Chooses victims of at most priority `top` so that `placements` fit, then prunes. `prefix`:
  // the units (from admissible()) whose room the planner placed them with.
  cover_result cover(int32_t top, const std::vector<placement>& placements,
                     std::span<const victim_unit> prefix) {
    cover_result out;
    if (!cover_nodes(top, placements, out.detail)) {
      if (request_.queues.empty())
        return out;
      // A victim outside the prefix may have spent the budget of a queue that the prefix's pod
      // on a later node needed; the prefix itself is within the limits in its order.
      prepare(top, placements);
      for (const auto& u : prefix) {
        if (u.whole)
          evict_whole(pods_[u.pods.front()].group);
        else
          evict_alone(u.pods.front());
      }
      if (!all_covered())
        return out;
      out.detail.clear();
    }
    prune();
    out.ok = true;
    out.victims = victims();
    for (const auto& p : pods_) {
      if (p.order == 0)
        continue;
      out.top_priority = out.count == 0 ? p.priority : std::max(out.top_priority, p.priority);
      ++out.count;
    }
    return out;
  }

 private:
  // Covers each node of `placements` in turn; false, with why, when a node cannot be covered.
  bool cover_nodes(int32_t top, const std::vector<placement>& placements, std::string& detail) {
    prepare(top, placements);
    for (auto& n : nodes_) {
      for (;;) {
        resources missing = short_of(n.need, n.freed);
        if (missing.is_zero())
          break;
        if (!evict_next(n, missing)) {
          detail = "node " + std::to_string(n.node) + " (" + view_.at(n.node).meta.name.str() +
                   ") would still lack " + missing.to_string() +
                   " with every lower-priority pod of the queue on it evicted";
          return false;
        }
      }
    }
    return true;
  }

  // The index in request.queues of queue `id`, or none.
  std::size_t queue_index(uint32_t id) const {
    auto it = std::lower_bound(queue_ids_.begin(), queue_ids_.end(), id,
                               [](const auto& q, uint32_t v) { return q.first < v; });
    return it != queue_ids_.end() && it->first == id ? it->second : none;
  }

  // Every queue holds what it is allocated: no victim taken yet.
  void open_books() {
    holds_.clear();
    for (const auto& q : request_.queues)
      holds_.push_back(q.allocated);
  }

  // Whether their queues could lose `pods`, one after the other, from what they hold now.
  bool may_take(std::span<const std::size_t> pods) {
    if (request_.queues.empty())
      return true;
    trial_.clear();
    for (std::size_t p : pods) {
      const std::size_t q = pods_[p].queue;
      std::size_t t = 0;
      while (t < trial_.size() && trial_[t].first != q)
        ++t;
      if (t == trial_.size())
        trial_.emplace_back(q, holds_[q]);
      if (!may_lose(request_.queues[q], trial_[t].second, request_of(p)))
        return false;
      trial_[t].second -= request_of(p);
    }
    return true;
  }

  // Takes `pod` from what its queue holds.
  void charge(std::size_t pod) {
    if (!request_.queues.empty())
      holds_[pods_[pod].queue] -= request_of(pod);
  }

  // Finds the eligible pods and their gangs, and sorts the pods into the order they would go.
  void collect() {
    const auto& candidates = request_.candidates;
    // Gangs: ids sorted, each with the highest priority any of its candidates has.
    std::vector<std::pair<uint64_t, int32_t>> gang_priority;
    for (const auto& c : candidates)
      if (c.gang != 0)
        gang_priority.emplace_back(c.gang, c.priority);
    // By id, the highest priority first, so that unique() keeps it.
    std::sort(gang_priority.begin(), gang_priority.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    auto same_gang = [](const auto& a, const auto& b) { return a.first == b.first; };
    gang_priority.erase(std::unique(gang_priority.begin(), gang_priority.end(), same_gang),
                        gang_priority.end());
    auto gang_index = [&](uint64_t id) {
      auto it = std::lower_bound(gang_priority.begin(), gang_priority.end(), id,
                                 [](const auto& g, uint64_t v) { return g.first < v; });
      return std::size_t(it - gang_priority.begin());
    };
    // How many pods each gang may lose one by one; 0 for a gang missing from request.gangs.
    std::vector<int64_t> spare(gang_priority.size(), 0);
    for (const auto& g : request_.gangs) {
      const std::size_t i = gang_index(g.gang);
      if (g.gang != 0 && i < gang_priority.size() && gang_priority[i].first == g.gang)
        spare[i] = std::max<int64_t>(0, int64_t(g.ready) - int64_t(g.min_member));
    }

    // Queues: ids sorted, each with its first index in request.queues. A gang with a candidate
    // of a queue not given is not eligible, so that eligibility never splits a gang.
    const bool limited = !request_.queues.empty();
    for (std::size_t i = 0; i < request_.queues.size(); ++i)
      queue_ids_.emplace_back(request_.queues[i].queue, i);
    std::sort(queue_ids_.begin(), queue_ids_.end());
    std::vector<bool> gang_unlisted(gang_priority.size(), false);
    if (limited)
      for (const auto& c : candidates)
        if (c.gang != 0 && queue_index(c.queue) == none)
          gang_unlisted[gang_index(c.gang)] = true;

    std::vector<std::size_t> group_of_gang(gang_priority.size(), none);
    for (const auto& c : candidates) {
      const std::size_t gi = c.gang == 0 ? none : gang_index(c.gang);
      const int32_t priority = gi == none ? c.priority : gang_priority[gi].second;
      if (priority >= request_.priority) {
        ++not_lower_;
        continue;
      }
      if (c.node >= view_.size() || !view_.is_live(c.node)) {
        ++on_removed_;
        continue;
      }
      const std::size_t queue = limited ? queue_index(c.queue) : none;
      if (limited && (queue == none || (gi != none && gang_unlisted[gi]))) {
        ++not_listed_;
        continue;
      }
      victim_pod p;
      p.candidate = &c;
      p.priority = priority;
      p.queue = queue;
      if (gi != none) {
        std::size_t& g = group_of_gang[gi];
        if (g == none) {
          g = groups_.size();
          victim_group group;
          group.id = c.gang;
          group.priority = priority;
          group.spare = spare[gi];
          groups_.push_back(std::move(group));
        }
        p.group = g;
        groups_[g].latest_start = std::max(groups_[g].latest_start, c.start_time);
      }
      pods_.push_back(p);
    }

    // The order they would go; pod ids break ties (and the position, should ids repeat).
    std::sort(pods_.begin(), pods_.end(), [&](const victim_pod& a, const victim_pod& b) {
      const auto& x = *a.candidate;
      const auto& y = *b.candidate;
      if (a.priority != b.priority)
        return a.priority < b.priority;
      if (x.start_time != y.start_time)
        return x.start_time > y.start_time;
      if (x.pod_id != y.pod_id)
        return x.pod_id > y.pod_id;
      return &x - candidates.data() < &y - candidates.data();
    });
    for (std::size_t i = 0; i < pods_.size(); ++i)
      if (pods_[i].group != none)
        groups_[pods_[i].group].members.push_back(i);
  }

  // A unit per pod of its own and per pod within its gang's spare (the most recently started),
  // and one per gang for the rest of its pods.
  void make_units() {
    resources total;
    for (std::size_t i = 0; i < view_.size(); ++i)
      if (view_.is_live(i))
        total += view_.at(i).allocatable;
    auto add = [&](bool whole, uint64_t id, std::span<const std::size_t> pods) {
      victim_unit u;
      u.priority = pods_[pods.front()].priority;
      u.whole = whole;
      u.start = pods_[pods.front()].candidate->start_time;  // pods_ is by start within priority.
      u.id = id;
      resources room;
      for (std::size_t p : pods)
        room += pods_[p].candidate->request;
      u.share = dominant_share(room, total);
      u.pods.assign(pods.begin(), pods.end());
      units_.push_back(std::move(u));
    };
    for (std::size_t i = 0; i < pods_.size(); ++i)
      if (pods_[i].group == none)
        add(false, pods_[i].candidate->pod_id, std::span<const std::size_t>(&i, 1));
    for (const auto& g : groups_) {
      const std::size_t singles =
          std::size_t(std::min<int64_t>(g.spare, int64_t(g.members.size())));
      for (std::size_t k = 0; k < singles; ++k)
        add(false, pods_[g.members[k]].candidate->pod_id,
            std::span<const std::size_t>(&g.members[k], 1));
      if (singles < g.members.size())
        add(true, g.id, std::span<const std::size_t>(g.members).subspan(singles));
    }
  }

  template <class Less>
  std::vector<std::size_t> sorted_units(Less less) const {
    std::vector<std::size_t> out(units_.size());
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = i;
    std::sort(out.begin(), out.end(),
              [&](std::size_t a, std::size_t b) { return less(units_[a], units_[b]); });
    return out;
  }

  // True when gang a goes before gang b: lower priority, later started, larger id.
  bool group_before(std::size_t a, std::size_t b) const {
    const auto& x = groups_[a];
    const auto& y = groups_[b];
    return std::tie(x.priority, y.latest_start, y.id) < std::tie(y.priority, x.latest_start, x.id);
  }

  const resources& request_of(std::size_t pod) const { return pods_[pod].candidate->request; }

  plan_node* node_of(std::size_t pod) {
    const uint32_t node = pods_[pod].candidate->node;
    auto it = std::lower_bound(nodes_.begin(), nodes_.end(), node,
                               [](const plan_node& n, uint32_t v) { return n.node < v; });
    return it != nodes_.end() && it->node == node ? &*it : nullptr;
  }

  // Sets up a cover: the plan's nodes with their needs, and the pods it may evict there.
  void prepare(int32_t top, const std::vector<placement>& placements) {
    for (auto& p : pods_)
      p.order = 0;
    for (auto& g : groups_) {
      g.singles = 0;
      g.whole = false;
    }
    chosen_ = 0;
    nodes_.clear();
    open_books();

    std::vector<std::pair<uint32_t, const resources*>> placed;
    for (const auto& pl : placements)
      placed.emplace_back(uint32_t(pl.node), &request_.gang.pods[pl.pod]->requests);
    std::sort(placed.begin(), placed.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    resources free;
    for (std::size_t i = 0; i < placed.size();) {
      plan_node n;
      n.node = placed[i].first;
      resources demand;
      for (; i < placed.size() && placed[i].first == n.node; ++i)
        demand += *placed[i].second;
      view_.read_free(n.node, free);
      n.need = short_of(demand, free);
      nodes_.push_back(std::move(n));
    }

    // Not only the prefix's pods: another of the same priority may make room alone where
    // several of the prefix would.
    for (std::size_t i = 0; i < pods_.size() && pods_[i].priority <= top; ++i) {
      plan_node* n = node_of(i);
      if (n == nullptr)
        continue;
      n->pods.push_back(i);
      if (pods_[i].group != none)
        n->groups.push_back(pods_[i].group);
    }
    for (auto& n : nodes_) {
      std::sort(n.groups.begin(), n.groups.end(),
                [this](std::size_t a, std::size_t b) { return group_before(a, b); });
      n.groups.erase(std::unique(n.groups.begin(), n.groups.end()), n.groups.end());
    }
  }

  bool may_go_alone(std::size_t pod) const {
    const std::size_t g = pods_[pod].group;
    return g == none || (!groups_[g].whole && groups_[g].singles < groups_[g].spare);
  }

  // Marks `pod` chosen as the `order`-th victim and counts its room on its node.
  void choose(std::size_t pod, std::size_t order) {
    pods_[pod].order = order;
    if (plan_node* n = node_of(pod))
      n->freed += request_of(pod);
  }
  void choose(std::size_t pod) { choose(pod, ++chosen_); }

  void unchoose(std::size_t pod) {
    pods_[pod].order = 0;
    if (plan_node* n = node_of(pod))
      n->freed -= request_of(pod);
  }

  void evict_alone(std::size_t pod) {
    choose(pod);
    charge(pod);
    if (pods_[pod].group != none)
      ++groups_[pods_[pod].group].singles;
  }

  void evict_whole(std::size_t group) {
    groups_[group].whole = true;
    for (std::size_t m : groups_[group].members) {
      if (pods_[m].order == 0) {
        choose(m);
        charge(m);
      }
    }
  }

  // Chooses the next victim (a pod or a whole gang) for node `n`, which still misses `missing`.
  // False when nothing left there helps.
  // How many single pods of `priority` on node `n`, in the order they would go and within their
  // gangs' spares and their queues' limits, together make `missing`; SIZE_MAX when they cannot.
  std::size_t singles_needed(const plan_node& n, const resources& missing, int32_t priority) {
    resources freed;
    std::size_t count = 0;
    spent_.clear();
    taken_.clear();
    for (std::size_t i : n.pods) {
      if (pods_[i].order != 0 || pods_[i].priority != priority ||
          !overlaps(missing, request_of(i)))
        continue;
      const std::size_t g = pods_[i].group;
      auto used = std::find_if(spent_.begin(), spent_.end(),
                               [&](const auto& s) { return s.first == g; });
      if (g != none && (groups_[g].whole ||
                        groups_[g].singles + (used == spent_.end() ? 0 : used->second) >=
                            groups_[g].spare))
        continue;
      taken_.push_back(i);
      if (!may_take(taken_)) {
        taken_.pop_back();
        continue;
      }
      if (g != none) {
        if (used == spent_.end())
          spent_.emplace_back(g, 1);
        else
          ++used->second;
      }
      freed += request_of(i);
      ++count;
      if (fits(missing, freed))
        return count;
    }
    return SIZE_MAX;
  }

  bool evict_next(plan_node& n, const resources& missing) {
    // Single pods at the lowest priority that helps; the first that makes room alone.
    std::size_t first_pod = none;
    std::size_t room_pod = none;
    for (std::size_t i : n.pods) {
      if (pods_[i].order != 0 || !may_go_alone(i) || !overlaps(missing, request_of(i)) ||
          !may_take(std::span<const std::size_t>(&i, 1)))
        continue;
      if (first_pod == none)
        first_pod = i;
      else if (pods_[i].priority != pods_[first_pod].priority)
        break;
      if (fits(missing, request_of(i))) {
        room_pod = i;
        break;
      }
    }
    // Whole gangs likewise; of those that make room alone, the fewest new victims.
    std::size_t first_group = none;
    std::size_t room_group = none;
    std::size_t room_group_cost = 0;
    resources room;
    for (std::size_t g : n.groups) {
      if (groups_[g].whole)
        continue;
      room.reset();
      rest_.clear();
      for (std::size_t m : groups_[g].members) {
        if (pods_[m].order != 0)
          continue;
        rest_.push_back(m);
        if (pods_[m].candidate->node == n.node)
          room += request_of(m);
      }
      const std::size_t cost = rest_.size();
      if (!overlaps(missing, room) || !may_take(rest_))
        continue;
      if (first_group == none)
        first_group = g;
      else if (groups_[g].priority != groups_[first_group].priority)
        break;
      if (fits(missing, room) && (room_group == none || cost < room_group_cost)) {
        room_group = g;
        room_group_cost = cost;
      }
    }
    if (first_pod == none && first_group == none)
      return false;
    // Only what is at the lowest priority that helps.
    if (first_pod != none && first_group != none) {
      if (pods_[first_pod].priority < groups_[first_group].priority)
        first_group = room_group = none;
      else if (groups_[first_group].priority < pods_[first_pod].priority)
        first_pod = room_pod = none;
    }
    // A whole gang that alone makes room is taken over single pods only when it is no more
    // victims than the single pods of this priority that together make it (a gang of 8 with 4
    // to spare must not go whole for room that 4 of its pods make).
    if (room_pod == none && room_group != none && first_pod != none &&
        singles_needed(n, missing, pods_[first_pod].priority) <= room_group_cost)
      room_group = none;
    if (room_pod != none)
      evict_alone(room_pod);
    else if (room_group != none)
      evict_whole(room_group);
    else if (first_pod != none)
      evict_alone(first_pod);
    else
      evict_whole(first_group);
    return true;
  }

  bool all_covered() const {
    return std::all_of(nodes_.begin(), nodes_.end(),
                       [](const plan_node& n) { return n.covered(); });
  }

  // Drops the victims that are not needed, the most preferred to keep first: whole gangs (a
  // later one may have made an earlier one unnecessary), then single pods.
  void prune() {
    std::vector<std::size_t> whole;
    for (std::size_t g = 0; g < groups_.size(); ++g)
      if (groups_[g].whole)
        whole.push_back(g);
    std::sort(whole.begin(), whole.end(),
              [this](std::size_t a, std::size_t b) { return group_before(b, a); });
    std::vector<std::size_t> orders;
    for (std::size_t g : whole) {
      orders.clear();
      for (std::size_t m : groups_[g].members) {
        orders.push_back(pods_[m].order);
        unchoose(m);
      }
      if (all_covered()) {
        groups_[g].whole = false;
        groups_[g].singles = 0;
        continue;
      }
      // Still needed: put it back as it was chosen.
      for (std::size_t k = 0; k < orders.size(); ++k)
        choose(groups_[g].members[k], orders[k]);
    }

    // Single pods: pods_ is in the order they would go, so walk it backwards.
    for (std::size_t i = pods_.size(); i-- > 0;) {
      const std::size_t g = pods_[i].group;
      if (pods_[i].order == 0 || (g != none && groups_[g].whole))
        continue;
      // A pod off the plan's nodes (only the fallback chooses one) frees nothing needed there.
      plan_node* n = node_of(i);
      if (n != nullptr && !fits(n->need, n->freed - request_of(i)))
        continue;
      unchoose(i);
      if (g != none)
        --groups_[g].singles;
    }
  }

  // The chosen victims: per node ascending, in the order chosen.
  victim_list victims() const {
    std::vector<const victim_pod*> chosen;
    for (const auto& p : pods_)
      if (p.order != 0)
        chosen.push_back(&p);
    std::sort(chosen.begin(), chosen.end(), [](const victim_pod* a, const victim_pod* b) {
      return std::tie(a->candidate->node, a->order) < std::tie(b->candidate->node, b->order);
    });
    victim_list out;
    for (const victim_pod* p : chosen) {
      if (out.empty() || out.back().first != p->candidate->node)
        out.emplace_back(p->candidate->node, std::vector<uint64_t>{});
      out.back().second.push_back(p->candidate->pod_id);
    }
    return out;
  }

  const node_view& view_;
  const preemption_request& request_;
  std::vector<victim_pod> pods_;      // Eligible pods, in the order they would go.
  std::vector<victim_group> groups_;  // Gangs of eligible pods.
  std::vector<victim_unit> units_;
  std::size_t not_lower_ = 0;   // Candidates of the preemptor's priority or higher.
  std::size_t on_removed_ = 0;  // Lower-priority candidates on removed nodes.
  std::size_t not_listed_ = 0;  // The rest whose queue, or a gang mate's, is not given.
  std::vector<std::pair<uint32_t, std::size_t>> queue_ids_;  // Queue id, index; by id.

  // Queue books, parallel to request.queues: what each holds with the victims taken so far gone.
  std::vector<resources> holds_;
  std::vector<std::pair<std::size_t, resources>> trial_;  // may_take()'s scratch.
  std::vector<std::size_t> rest_;                          // evict_next()'s scratch.
  std::vector<std::pair<std::size_t, int64_t>> spent_;     // singles_needed()'s: per gang.
  std::vector<std::size_t> taken_;                         // singles_needed()'s: the pods.

  // Cover state.
  std::vector<plan_node> nodes_;  // The plan's nodes, ascending.
  std::size_t chosen_ = 0;        // The last order handed out.
};

} // namespace

preemption_plan plan_preemption(gang_planner& planner, const node_view& view,
                                const preemption_request& request, rng& random) {
  preemption_plan out;
  gang_request minimum = request.gang;
  minimum.place_extra = false;

  plan_result now;
  planner.plan(view, minimum, random, now);
  if (now.code == plan_code::success) {
    out.found = true;
    out.placements = std::move(now.placements);
    return out;
  }
  if (now.code == plan_code::unresolvable) {
    out.detail = std::move(now.detail);
    return out;
  }

  victim_search search(view, request);
  if (search.empty()) {
    out.detail = search.why_none(0);
    return out;
  }
  const auto by_start = search.admissible(search.order_by_start());
  if (by_start.empty()) {
    // Every unit breaks its queue's limit on its own, so in any order.
    out.detail = search.why_none(search.eligible());
    return out;
  }

  // Plans with the room of the first `prefix` of `units`.
  room_overlay overlay(view, search.nodes());
  auto plan_with = [&](const std::vector<victim_unit>& units, std::size_t prefix,
                       plan_result& result) {
    overlay.clear();
    for (std::size_t k = 0; k < prefix; ++k)
      for (std::size_t pod : units[k].pods)
        overlay.add(search.candidate(pod).node, search.candidate(pod).request);
    planner.plan(overlay, minimum, random, result);
    return result.code == plan_code::success;
  };

  // The shortest prefix of `units` that makes room, and its cover. Precondition: `best` is a
  // successful plan with the room of all of them.
  plan_result attempt;
  auto search_and_cover = [&](const std::vector<victim_unit>& units, plan_result best) {
    // Invariant: the planner fails with the room of `fails` units and succeeds with `succeeds`.
    std::size_t fails = 0;
    std::size_t succeeds = units.size();
    while (succeeds - fails > 1) {
      const std::size_t mid = fails + (succeeds - fails) / 2;
      if (plan_with(units, mid, attempt)) {
        succeeds = mid;
        std::swap(best, attempt);
      } else {
        fails = mid;
      }
    }
    auto cover = search.cover(units[succeeds - 1].priority, best.placements,
                              std::span<const victim_unit>(units).first(succeeds));
    return std::make_pair(std::move(best.placements), std::move(cover));
  };

  std::pair<std::vector<placement>, cover_result> chosen;
  plan_result all;  // With the room of every unit of by_start.
  if (plan_with(by_start, by_start.size(), all))
    chosen = search_and_cover(by_start, all);
  else
    chosen.second.detail = all.detail;
  if (auto by_room = search.admissible(search.order_by_room()); !same_units(by_room, by_start)) {
    // Without queue limits both orders keep every unit, and so share `all`.
    plan_result own;
    const bool shared = same_pods(by_room, by_start);
    if (shared || plan_with(by_room, by_room.size(), own)) {
      const plan_result& full = shared ? all : own;
      if (full.code == plan_code::success) {
        auto other = search_and_cover(by_room, full);
        if (other.second.better_than(chosen.second))
          chosen = std::move(other);
      }
    }
  }
  if (!chosen.second.ok) {
    out.detail = std::move(chosen.second.detail);
    return out;
  }
  out.found = true;
  out.placements = std::move(chosen.first);
  out.victims_by_node = std::move(chosen.second.victims);
  return out;
}

} // namespace phalanx::scheduler
