// How a plan runs, and what it costs:
//
// 1. Classes: pods with the same constraints pointer, role and requests are one class; every
//    predicate, fit and score below is computed per class, not per pod.
// 2. Scan: from a random node, each live node becomes a slot: its static verdict per class
//    (cached for the plan), its allocatable and free amounts projected onto the few dimensions
//    the gang requests, and, for each class it fits now, a scored candidate. The scan stops once
//    every class has its sample of feasible nodes (kube-scheduler's percentageOfNodesToScore).
//    This is most of the time: a few virtual calls (is_live, at, read_free), a short
//    predicate check and two integer divisions per node.
// 3. Greedy: role minimums first, then up to min_pods, then extras; each pod on its class's
//    best candidate (a lazily refreshed max-heap over the best few candidates), charged to the
//    slot's free amounts (the overlay) and recorded in the undo log.
// 4. If the sample cannot hold the gang: undo, scan every node, greedy again; then the
//    unresolvable check; then a bounded backtracking search over the same overlay and log.
//
// Scores beyond resources (scores.hpp, kube-scheduler's score plugins) come in two kinds. The
// taint and node affinity preferences do not change as the gang is placed: the heap keys of a
// class that has some include them, normalized over its candidates when the heaps are
// prepared. Inter-pod affinity and ScheduleAnyway spread scores move with every pod placed,
// so a class whose scores depend on pods (`by_pods`) skips the heap: each of its picks scores
// every candidate that passes the filters then, as kube-scheduler scores each pod. Classes
// without preferences, in a cluster where no pod's terms select them, pay nothing for either.
//
// The view is only read; the overlay lives in the scratch and is reset before returning.

#include "scheduler/planner.hpp"

#include "scheduler/pod_neighbourhood.hpp"
#include "scheduler/pod_preferences.hpp"
#include "scheduler/quantity.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace phalanx::scheduler {

std::string_view to_string(plan_code c) noexcept {
  switch (c) {
    case plan_code::success:
      return "Success";
    case plan_code::unschedulable:
      return "Unschedulable";
    case plan_code::unresolvable:
      // kube-scheduler's name for the code that tells the caller not to retry as is.
      return "UnschedulableAndUnresolvable";
  }
  return "unknown";
}

namespace {

// The four standard dimensions sit at fixed positions of a projected amount; extended ones the
// gang requests follow.
constexpr std::size_t dim_cpu = 0;
constexpr std::size_t dim_memory = 1;
constexpr std::size_t dim_ephemeral = 2;
constexpr std::size_t dim_pods = 3;
constexpr std::size_t std_dims = 4;

constexpr std::string_view std_dim_names[std_dims] = {cpu_resource, memory_resource,
                                                      ephemeral_storage_resource, pods_resource};

// Static verdicts cached per (slot, class); values of predicate_failure.
constexpr uint8_t verdict_ok = uint8_t(predicate_failure::none);

// The rules between pods, in the order their reasons are listed.
constexpr predicate_failure neighbour_failures[] = {
    predicate_failure::host_ports,          predicate_failure::topology_spread_label,
    predicate_failure::topology_spread,     predicate_failure::existing_pod_anti_affinity,
    predicate_failure::pod_affinity,        predicate_failure::pod_anti_affinity};

// kube-scheduler's numFeasibleNodesToFind.
int64_t feasible_nodes_to_find(int64_t nodes, int32_t percentage, int32_t min_feasible) {
  if (nodes < min_feasible || percentage >= 100)
    return nodes;
  int64_t pct = percentage;
  if (pct <= 0)
    pct = std::max<int64_t>(5, 50 - nodes / 125);
  int64_t n = nodes * pct / 100;
  return std::max<int64_t>(n, min_feasible);
}

int64_t sub_saturating(int64_t a, int64_t b) noexcept {
  int64_t out;
  if (__builtin_sub_overflow(a, b, &out))
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return out;
}

} // namespace

struct gang_planner::scratch {
  // A candidate node of one class. The key orders by score, then by earlier slot: on equal
  // scores the node met first in the scan wins, so ties spread with the random start instead
  // of piling onto low node indices. One integer compare per heap step keeps heap building
  // (the planner's second cost after the scan) cheap.
  struct heap_entry {
    uint64_t key = 0;     // score << 32 | (0xffffffff - slot).
    uint32_t version = 0; // slot_version[slot] when scored.
    uint32_t slot() const noexcept { return 0xffffffffu - uint32_t(key); }
  };
  static heap_entry make_entry(int64_t score, uint32_t slot, uint32_t version) noexcept {
    // Scores lie in [0, max_combined_score], so they fit the upper half.
    return {uint64_t(score) << 32 | (0xffffffffu - slot), version};
  }
  struct heap_less_t {
    bool operator()(const heap_entry& a, const heap_entry& b) const noexcept {
      return a.key < b.key;
    }
  };
  static constexpr heap_less_t heap_less{};

  struct pod_class {
    const placement_constraints* constraints = nullptr;
    const pod* first = nullptr;
    int32_t role = -1;                // Index into request.min_per_role; -1: no minimum.
    uint32_t constraint_leader = 0;   // The first class with the same constraints pointer.
    std::vector<uint32_t> pods;       // Indices into request.pods, in preference order.
    std::vector<uint16_t> fit_dims;   // Dimensions with a positive request.
    std::vector<uint16_t> score_dims; // Dimensions the strategy scores, with a positive weight.
    bool unconstrained = true;        // No selector, affinity or tolerations.
    int64_t target = 0;               // Feasible nodes to find before the scan may stop.
    int64_t feasible = 0;             // Feasible nodes found by the scan.
    bool possible = false;            // Passes the static predicates on some scanned node.
    int32_t placed = 0;
    bool dead = false;                // Greedy: fits no candidate any more.
    std::vector<heap_entry> heap;     // The candidates in play, a max-heap once greedy starts.
    std::vector<heap_entry> reserve;  // Candidates ranked below every fresh entry of `heap`.
    uint64_t reserve_max = 0;         // The largest key in `reserve`.
    std::size_t touched_seen = 0;     // Prefix of `touched` already re-offered to `heap`.
    std::vector<uint32_t> candidates; // Search: slots passing the static predicates.
    int64_t room = 0;                 // Search: pods of this class the free nodes hold, alone.
    uint32_t kind = 0;                // Its handle in `neighbourhood`, when rules are active.
    bool has_rules = false;           // Its pods have inter-pod terms, host ports or spread.
    // Scores beyond resources.
    bool prefers_nodes = false;       // It has preferred node affinity terms.
    bool static_bonus = false;        // Heap keys include its taint and node preferences.
    int64_t most_preferred_taints = 0;   // Normalizers of those, over its candidates.
    int64_t most_node_preference = 0;
    bool by_pods = false;             // Its scores depend on pods: picked by a full pass.
    uint32_t preference_kind = 0;     // Its handle in `preferences`, when by_pods.
    // A full pass's verdicts of the rules between pods per candidate (its position in
    // `candidates`; unchecked: not yet asked), valid while the neighbourhood's generation is
    // `verdicts_generation`: a member placed in a domain already counted changes none.
    std::vector<uint8_t> neighbour_verdicts;
    uint64_t verdicts_generation = std::numeric_limits<uint64_t>::max();
  };
  static constexpr uint8_t unchecked = 0xFF;

  struct undo_entry {
    uint32_t slot;
    uint32_t cls;
    uint32_t pod;
  };

  struct failure_info {
    bool failed = false;
    std::size_t pod = 0;
    uint32_t cls = 0;
    int64_t pods_needed = 0;
  };

  // Per call.
  const node_view* view = nullptr;
  const gang_request* request = nullptr;
  const planner_config* config = nullptr;
  std::size_t dims = std_dims;
  std::vector<resource_name> ext;
  std::vector<int64_t> weight; // Per dimension.
  std::size_t class_count = 0;
  std::vector<pod_class> classes; // Only the first class_count are in use; the rest keep storage.
  std::vector<int64_t> class_req; // class * dims + d.
  std::vector<int32_t> pod_class_of;
  std::vector<uint8_t> pod_placed;
  std::vector<int64_t> role_placed; // Per request.min_per_role entry.
  int64_t total_placed = 0;
  int64_t required_total = 0;

  // Slots: the scanned nodes, in scan order.
  std::size_t slot_count = 0;
  std::vector<uint32_t> slot_node;
  std::vector<uint8_t> slot_static;   // slot * class_count + class.
  std::vector<int64_t> slot_free;     // slot * dims + d; the overlay of tentative placements.
  std::vector<int64_t> slot_alloc;    // slot * dims + d.
  std::vector<uint32_t> slot_version; // Bumped on every change of slot_free.
  // Some scanned node has a PreferNoSchedule taint: only then can TaintToleration rank nodes
  // apart, so only then do classes look at taints beyond the filter's.
  bool preferred_taints_seen = false;

  std::vector<undo_entry> log;
  // Slots changed by greedy placements since the heaps were prepared, in order. Every class
  // re-scores them before it picks, so an entry whose node changed is never trusted.
  std::vector<uint32_t> touched;
  std::vector<uint32_t> histogram; // prepare_heap's score buckets.
  resources free_buf;

  std::size_t node_slots = 0; // view.size().
  std::size_t scan_start = 0;
  std::size_t scan_pos = 0; // Nodes visited from scan_start.
  std::size_t classes_at_target = 0;

  failure_info failure;
  int64_t steps = 0;
  bool exhausted = false;

  // Rules between pods (pod_neighbourhood.hpp): active when a pod of the gang has some, or some
  // pod in the cluster keeps others away. Inactive, a plan looks at no pod and pays nothing.
  bool neighbours_active = false;
  pod_neighbourhood neighbourhood;
  // The namespaces' labels this plan's rules and scores read (null: names alone).
  namespace_directory_ptr namespaces;
  std::vector<heap_entry> parked; // place_best: candidates the rules refuse for this pick.

  // Scores that depend on pods (pod_preferences.hpp): active when a pod of the gang has
  // preferences or scoring terms, or some pod in the cluster has scoring terms. `any_by_pods`
  // once some class turned out to depend on them; only then do placements update them.
  bool preferences_active = false;
  bool any_by_pods = false;
  pod_preferences preferences;
  // place_by_full_pass's scratch, one entry per node it scores.
  std::vector<uint32_t> pass_slots;
  std::vector<scored_node> pass_nodes;
  std::vector<int64_t> pass_taints;
  std::vector<int64_t> pass_node_preference;
  std::vector<int64_t> pass_inter_pod;
  std::vector<int64_t> pass_spread;
  std::vector<uint8_t> pass_unspread;  // The node lacks a key of the spread constraints.
  std::vector<int64_t> topology_weights;

  // ---------------------------------------------------------------------------------------
  // Setup

  // Groups pods into classes: pods of one template (same constraints pointer), role and
  // requests are interchangeable, so predicates, fit and scores are computed once per class.
  // The role is part of the key because role minimums count pods by role.
  void build_classes() {
    const auto& pods = request->pods;
    class_count = 0;
    ext.clear();
    pod_class_of.assign(pods.size(), -1);
    pod_placed.assign(pods.size(), 0);
    for (std::size_t i = 0; i < pods.size(); ++i) {
      const pod& p = *pods[i];
      const placement_constraints* c = p.constraints.get();
      std::size_t k = 0;
      for (; k < class_count; ++k) {
        const pod_class& pc = classes[k];
        if (pc.constraints == c && pc.first->role == p.role && pc.first->requests == p.requests &&
            ((!neighbours_active && !preferences_active) ||
             (pc.first->meta.labels == p.meta.labels &&
              pc.first->meta.namespace_name == p.meta.namespace_name)))
          break;  // With rules or preferences between pods, labels and namespace decide too.
      }
      if (k == class_count) {
        if (classes.size() <= k)
          classes.emplace_back();
        pod_class& pc = classes[k];
        pc.constraints = c;
        pc.unconstrained = c == nullptr || c->empty();
        pc.has_rules = has_neighbour_rules(p);
        pc.prefers_nodes = c != nullptr && !c->preferred_node_affinity.empty();
        pc.static_bonus = false;
        pc.by_pods = false;
        pc.first = &p;
        pc.role = -1;
        for (std::size_t r = 0; r < request->min_per_role.size(); ++r) {
          if (request->min_per_role[r].min > 0 && request->min_per_role[r].role == p.role) {
            pc.role = int32_t(r);
            break;
          }
        }
        pc.constraint_leader = uint32_t(k);
        for (std::size_t j = 0; j < k; ++j) {
          if (classes[j].constraints == c) {
            pc.constraint_leader = uint32_t(j);
            break;
          }
        }
        pc.pods.clear();
        pc.feasible = 0;
        pc.possible = false;
        pc.placed = 0;
        pc.dead = false;
        pc.heap.clear();
        pc.reserve.clear();
        clear_candidates(pc);
        ++class_count;
        for (const auto& e : p.requests.extended())
          if (e.amount > 0 && std::find(ext.begin(), ext.end(), e.name) == ext.end())
            ext.push_back(e.name);
      }
      classes[k].pods.push_back(uint32_t(i));
      pod_class_of[i] = int32_t(k);
    }
    std::sort(ext.begin(), ext.end());
    dims = std_dims + ext.size();

    const auto& w = config->weights;
    weight.resize(dims);
    weight[dim_cpu] = w.cpu;
    weight[dim_memory] = w.memory;
    weight[dim_ephemeral] = w.ephemeral_storage;
    weight[dim_pods] = w.pods;
    for (std::size_t e = 0; e < ext.size(); ++e)
      weight[std_dims + e] = w.weight_of(ext[e].str());

    class_req.resize(class_count * dims);
    bool spread = config->strategy == score_strategy::spread;
    for (std::size_t k = 0; k < class_count; ++k) {
      pod_class& pc = classes[k];
      int64_t* r = &class_req[k * dims];
      project(pc.first->requests, r);
      pc.fit_dims.clear();
      pc.score_dims.clear();
      for (std::size_t d = 0; d < dims; ++d) {
        if (r[d] > 0)
          pc.fit_dims.push_back(uint16_t(d));
        // Binpack (Volcano) scores what the pod requests; spread (kube-scheduler) always
        // scores cpu and memory.
        bool scored = r[d] > 0 || (spread && (d == dim_cpu || d == dim_memory));
        if (scored && weight[d] > 0)
          pc.score_dims.push_back(uint16_t(d));
      }
    }
    role_placed.assign(request->min_per_role.size(), 0);
    total_placed = 0;
  }

  void project(const resources& r, int64_t* out) const {
    out[dim_cpu] = r.cpu_milli;
    out[dim_memory] = r.memory_bytes;
    out[dim_ephemeral] = r.ephemeral_bytes;
    out[dim_pods] = r.pods;
    for (std::size_t e = 0; e < ext.size(); ++e)
      out[std_dims + e] = r.get(ext[e]);
  }

  void reset_slots() {
    slot_count = 0;
    preferred_taints_seen = false;
    log.clear();
  }

  // Sizes the slot arrays for every node once, so the scan writes by index and a warm planner
  // never allocates; the arrays only grow.
  void reserve_slots(std::size_t nodes) {
    auto grow = [](auto& v, std::size_t n) {
      if (v.size() < n)
        v.resize(n);
    };
    grow(slot_node, nodes);
    grow(slot_version, nodes);
    grow(slot_alloc, nodes * dims);
    grow(slot_free, nodes * dims);
    grow(slot_static, nodes * class_count);
  }

  std::string_view dim_name(std::size_t d) const {
    return d < std_dims ? std_dim_names[d] : ext[d - std_dims].str();
  }

  // ---------------------------------------------------------------------------------------
  // Overlay

  bool fits(std::size_t c, std::size_t s) const noexcept {
    const int64_t* f = &slot_free[s * dims];
    const int64_t* r = &class_req[c * dims];
    for (uint16_t d : classes[c].fit_dims)
      if (f[d] < r[d])
        return false;
    return true;
  }

  int64_t score(std::size_t c, std::size_t s) const noexcept {
    const int64_t* f = &slot_free[s * dims];
    const int64_t* a = &slot_alloc[s * dims];
    const int64_t* r = &class_req[c * dims];
    int64_t sum = 0;
    int64_t weight_sum = 0;
    for (uint16_t d : classes[c].score_dims) {
      if (a[d] <= 0)
        continue; // A resource the node lacks is skipped.
      int64_t used_after = sub_saturating(a[d], f[d]) + r[d];
      sum += weight[d] * dimension_score(config->strategy, used_after, a[d]);
      weight_sum += weight[d];
    }
    if (weight_sum == 0)
      return 0;
    // The same floor(sum / weight_sum) as node_score; the default weights sum to a power of
    // two, and a shift is much cheaper than a division in the per-node loop.
    if ((weight_sum & (weight_sum - 1)) == 0)
      return sum >> __builtin_ctzll(uint64_t(weight_sum));
    return sum / weight_sum;
  }

  // The raw TaintToleration score of class c on slot s: 0 unless some node has a
  // PreferNoSchedule taint.
  int64_t preferred_taints(std::size_t c, std::size_t s) const noexcept {
    if (!preferred_taints_seen)
      return 0;
    const node& n = view->at(slot_node[s]);
    if (n.taints.empty())
      return 0;
    const auto* constraints = classes[c].constraints;
    return intolerable_preferred_taints(n, constraints ? constraints->tolerations
                                                       : std::span<const toleration>());
  }

  // The raw NodeAffinity score of class c on slot s.
  int64_t node_preference(std::size_t c, std::size_t s) const noexcept {
    const pod_class& pc = classes[c];
    return pc.prefers_nodes ? preferred_node_affinity_score(view->at(slot_node[s]),
                                                            pc.constraints->preferred_node_affinity)
                            : 0;
  }

  // The resource score plus the static preferences, as the heap keys rank class c's slots.
  int64_t ranked_score(std::size_t c, std::size_t s) const noexcept {
    int64_t resources = score(c, s);
    const pod_class& pc = classes[c];
    if (!pc.static_bonus)
      return resources;
    plugin_scores scores;
    scores.resources = resources;
    // With no untolerated PreferNoSchedule taint among the candidates every node gets the
    // maximum: a constant, left out like the other plugins' uniform scores.
    if (pc.most_preferred_taints > 0)
      scores.taint_toleration =
          default_normalized(preferred_taints(c, s), pc.most_preferred_taints, true);
    if (pc.prefers_nodes)
      scores.node_affinity =
          default_normalized(node_preference(c, s), pc.most_node_preference, false);
    return combined_score(scores);
  }

  void place(uint32_t s, uint32_t c, uint32_t p) {
    int64_t* f = &slot_free[std::size_t(s) * dims];
    const int64_t* r = &class_req[std::size_t(c) * dims];
    for (uint16_t d : classes[c].fit_dims)
      f[d] -= r[d];
    ++slot_version[s];
    log.push_back({s, c, p});
    touched.push_back(s);
    pod_class& pc = classes[c];
    ++pc.placed;
    pod_placed[p] = 1;
    if (pc.role >= 0)
      ++role_placed[std::size_t(pc.role)];
    ++total_placed;
    if (neighbours_active)
      neighbourhood.add(slot_node[s], view->at(slot_node[s]), *request->pods[p]);
    if (any_by_pods)
      preferences.add(slot_node[s], view->at(slot_node[s]), *request->pods[p]);
  }

  void undo_to(std::size_t mark) {
    while (log.size() > mark) {
      undo_entry e = log.back();
      log.pop_back();
      int64_t* f = &slot_free[std::size_t(e.slot) * dims];
      const int64_t* r = &class_req[std::size_t(e.cls) * dims];
      for (uint16_t d : classes[e.cls].fit_dims)
        f[d] += r[d];
      ++slot_version[e.slot];
      pod_class& pc = classes[e.cls];
      --pc.placed;
      pod_placed[e.pod] = 0;
      if (pc.role >= 0)
        --role_placed[std::size_t(pc.role)];
      --total_placed;
      if (neighbours_active)
        neighbourhood.remove(slot_node[e.slot], view->at(slot_node[e.slot]), *request->pods[e.pod]);
      if (any_by_pods)
        preferences.remove(slot_node[e.slot], view->at(slot_node[e.slot]), *request->pods[e.pod]);
    }
  }

  bool requirements_met() const noexcept {
    if (total_placed < required_total)
      return false;
    for (std::size_t r = 0; r < role_placed.size(); ++r)
      if (role_placed[r] < request->min_per_role[r].min)
        return false;
    return true;
  }

  // ---------------------------------------------------------------------------------------
  // Scan

  // Adds node `i` as a slot, evaluates the static predicates of every class once, reads its
  // free resources and offers it to the heaps of the classes it fits.
  void add_slot(std::size_t i) {
    const node& n = view->at(i);
    std::size_t s = slot_count++;
    slot_node[s] = uint32_t(i);
    slot_version[s] = 0;
    int64_t* a = &slot_alloc[s * dims];
    int64_t* f = &slot_free[s * dims];
    uint8_t* v = &slot_static[s * class_count];
    project(n.allocatable, a);
    if (!n.taints.empty() && !preferred_taints_seen)
      preferred_taints_seen = std::any_of(n.taints.begin(), n.taints.end(), [](const taint& t) {
        return t.effect == taint_effect::prefer_no_schedule;
      });
    bool any_ok = false;
    for (std::size_t c = 0; c < class_count; ++c) {
      pod_class& pc = classes[c];
      uint8_t verdict;
      if (pc.constraint_leader != c && v[pc.constraint_leader] != verdict_ok &&
          v[pc.constraint_leader] != uint8_t(predicate_failure::exceeds_allocatable)) {
        // Same constraints as an earlier class that failed on them: same verdict.
        verdict = v[pc.constraint_leader];
      } else if (pc.constraint_leader != c) {
        verdict = verdict_ok;
      } else if (pc.unconstrained) {
        // check_placement without constraints, inline: the common case of the scan.
        if (n.unschedulable)
          verdict = uint8_t(predicate_failure::node_unschedulable);
        else if (!n.taints.empty() && first_untolerated_taint(n, {}) >= 0)
          verdict = uint8_t(predicate_failure::untolerated_taint);
        else
          verdict = verdict_ok;
      } else {
        verdict = uint8_t(check_placement(n, pc.constraints).failure);
      }
      if (verdict == verdict_ok) {
        const int64_t* r = &class_req[c * dims];
        for (uint16_t d : pc.fit_dims) {
          if (a[d] < r[d]) {
            verdict = uint8_t(predicate_failure::exceeds_allocatable);
            break;
          }
        }
      }
      v[c] = verdict;
      if (verdict == verdict_ok) {
        any_ok = true;
        pc.possible = true;
      }
    }
    if (any_ok) {
      view->read_free(i, free_buf);
      project(free_buf, f);
    } else {
      std::fill(f, f + dims, 0);
    }
    for (std::size_t c = 0; c < class_count; ++c) {
      if (v[c] != verdict_ok)
        continue;
      pod_class& pc = classes[c];
      if (!fits(c, s))
        continue;
      pc.heap.push_back(make_entry(score(c, s), uint32_t(s), 0));
      if (++pc.feasible == pc.target)
        ++classes_at_target;
    }
  }

  // Visits nodes from the random start until every class found its target of feasible nodes,
  // or (all) until every node was visited.
  void scan(bool all) {
    while (scan_pos < node_slots) {
      if (!all && classes_at_target == class_count)
        return;
      std::size_t i = scan_start + scan_pos;
      if (i >= node_slots)
        i -= node_slots;
      ++scan_pos;
      if (!view->is_live(i))
        continue;
      add_slot(i);
    }
  }

  // Offers every slot again, with the current free amounts (after an undo).
  void rebuild_heaps() {
    for (std::size_t c = 0; c < class_count; ++c) {
      pod_class& pc = classes[c];
      pc.heap.clear();
      pc.dead = false;
      for (std::size_t s = 0; s < slot_count; ++s)
        if (slot_static[s * class_count + c] == verdict_ok && fits(c, s))
          pc.heap.push_back(make_entry(score(c, s), uint32_t(s), slot_version[s]));
    }
  }

  void prepare_heaps() {
    touched.clear();
    for (std::size_t c = 0; c < class_count; ++c) {
      pod_class& pc = classes[c];
      if (pc.by_pods) {
        collect_candidates(c);
        pc.heap.clear();
        continue;
      }
      if (preferred_taints_seen || pc.prefers_nodes)
        rank_static_preferences(c);
      prepare_heap(pc);
    }
  }

  // Empties a class's candidates; the verdicts kept by their positions go with them.
  static void clear_candidates(pod_class& pc) {
    pc.candidates.clear();
    pc.verdicts_generation = std::numeric_limits<uint64_t>::max();
  }

  // Class c's slots passing the static predicates, in slot order: what a full pass scores.
  void collect_candidates(std::size_t c) {
    pod_class& pc = classes[c];
    clear_candidates(pc);
    for (std::size_t s = 0; s < slot_count; ++s)
      if (slot_static[s * class_count + c] == verdict_ok)
        pc.candidates.push_back(uint32_t(s));
  }

  // Normalizes class c's taint and node preferences over its candidates (the entries in its
  // heap, all fresh here) and keys the entries by them too.
  void rank_static_preferences(std::size_t c) {
    pod_class& pc = classes[c];
    pc.most_preferred_taints = 0;
    pc.most_node_preference = 0;
    for (const auto& e : pc.heap) {
      pc.most_preferred_taints = std::max(pc.most_preferred_taints, preferred_taints(c, e.slot()));
      pc.most_node_preference = std::max(pc.most_node_preference, node_preference(c, e.slot()));
    }
    pc.static_bonus = pc.most_preferred_taints > 0 || pc.most_node_preference > 0;
    if (!pc.static_bonus)
      return;
    for (auto& e : pc.heap)
      e = make_entry(ranked_score(c, e.slot()), e.slot(), e.version);
  }

  // ---------------------------------------------------------------------------------------
  // Greedy

  // Orders the candidates of a class for greedy picking. Heapifying hundreds of candidates is
  // the planner's second cost after the scan, yet a gang takes only a few of them: only the
  // best few go into the heap, the rest wait in `reserve` until a pick might need them.
  //
  // The split uses a histogram of coarse score buckets rather than a selection algorithm: two
  // linear passes with predictable branches, where nth_element or make_heap over everything
  // mispredict on nearly every step.
  void prepare_heap(pod_class& pc) {
    auto& h = pc.heap;
    std::size_t keep = 2 * pc.pods.size() + 16;
    pc.reserve.clear();
    pc.reserve_max = 0;
    pc.touched_seen = 0;
    if (h.size() > 2 * keep) {
      constexpr unsigned shift = 32 + 6; // Key to bucket: score / 64.
      const std::size_t buckets =
          (uint64_t(pc.static_bonus ? max_combined_score : max_node_score) << 32 >> shift) + 1;
      histogram.assign(buckets, 0);
      for (const auto& e : h)
        ++histogram[e.key >> shift];
      // The lowest bucket that still has to be in play so the heap holds at least `keep`.
      std::size_t b = buckets;
      std::size_t in_play = 0;
      while (b > 0 && in_play < keep)
        in_play += histogram[--b];
      if (in_play < h.size()) {
        std::size_t w = 0;
        for (std::size_t i = 0; i < h.size(); ++i) {
          heap_entry e = h[i];
          if ((e.key >> shift) >= b) {
            h[w++] = e;
          } else {
            pc.reserve.push_back(e);
            pc.reserve_max = std::max(pc.reserve_max, e.key);
          }
        }
        h.resize(w);
      }
    }
    std::make_heap(h.begin(), h.end(), heap_less);
  }

  static void merge_reserve(pod_class& pc) {
    pc.heap.insert(pc.heap.end(), pc.reserve.begin(), pc.reserve.end());
    pc.reserve.clear();
    pc.reserve_max = 0;
    std::make_heap(pc.heap.begin(), pc.heap.end(), heap_less);
  }

  // Places pod `p` of class `c` on the best-scoring candidate; false when none fits.
  //
  // Entries go stale when their node changes (a placement of any class), and a stale key may
  // be too low (binpack scores rise as a node fills) or too high. So every changed node is
  // re-scored into a fresh entry before picking, and stale entries are dropped when they
  // surface: the heap's fresh top is then the best node.
  bool place_best(uint32_t c, uint32_t p) {
    pod_class& pc = classes[c];
    if (pc.by_pods)
      return place_by_full_pass(c, p);
    auto& h = pc.heap;
    for (; pc.touched_seen < touched.size(); ++pc.touched_seen) {
      uint32_t slot = touched[pc.touched_seen];
      if (slot_static[std::size_t(slot) * class_count + c] == verdict_ok && fits(c, slot)) {
        h.push_back(make_entry(ranked_score(c, slot), slot, slot_version[slot]));
        std::push_heap(h.begin(), h.end(), heap_less);
      }
    }
    while (!h.empty() || !pc.reserve.empty()) {
      // The reserve ranks below the heap's entries as first scored; once the heap's top falls
      // below the best of the reserve (fresh keys can drop), the order needs the reserve too.
      if (!pc.reserve.empty() && (h.empty() || h.front().key < pc.reserve_max)) {
        merge_reserve(pc);
        continue;
      }
      const heap_entry& top = h.front();
      uint32_t slot = top.slot();
      if (top.version != slot_version[slot]) {
        std::pop_heap(h.begin(), h.end(), heap_less);
        h.pop_back();
        continue;
      }
      if (neighbours_active && neighbour_failure(c, slot) != predicate_failure::none) {
        // Refused for this pick only: a placement elsewhere (an undo, a pod it must be beside)
        // may admit the node again, and its resources did not change.
        std::pop_heap(h.begin(), h.end(), heap_less);
        parked.push_back(h.back());
        h.pop_back();
        continue;
      }
      place(slot, c, p);
      unpark(pc);
      return true;
    }
    unpark(pc);
    return false;
  }

  // Places pod `p` of class `c`, whose scores depend on pods, as kube-scheduler would place it
  // now: every candidate that passes the filters with the placements so far is scored, each
  // plugin normalized over exactly those nodes; the best wins, the earliest slot on a tie (as in
  // the heaps). False when none passes.
  bool place_by_full_pass(uint32_t c, uint32_t p) {
    pod_class& pc = classes[c];
    pass_slots.clear();
    pass_nodes.clear();
    if (neighbours_active && pc.verdicts_generation != neighbourhood.generation()) {
      pc.neighbour_verdicts.assign(pc.candidates.size(), unchecked);
      pc.verdicts_generation = neighbourhood.generation();
    }
    for (std::size_t i = 0; i < pc.candidates.size(); ++i) {
      const uint32_t s = pc.candidates[i];
      if (!fits(c, s))
        continue;
      if (neighbours_active) {
        auto& verdict = pc.neighbour_verdicts[i];
        if (verdict == unchecked)
          verdict = static_cast<uint8_t>(neighbour_failure(c, s));
        if (verdict != static_cast<uint8_t>(predicate_failure::none))
          continue;
      }
      pass_slots.push_back(s);
      pass_nodes.push_back({slot_node[s], &view->at(slot_node[s])});
    }
    const std::size_t n = pass_slots.size();
    if (n == 0)
      return false;
    const uint32_t kind = pc.preference_kind;
    const bool spreads = preferences.spreads(kind);
    pass_taints.resize(n);
    pass_node_preference.resize(n);
    pass_inter_pod.resize(n);
    pass_spread.assign(n, 0);
    pass_unspread.assign(n, 0);
    if (spreads)
      preferences.topology_weights(kind, pass_nodes, topology_weights);
    for (std::size_t i = 0; i < n; ++i) {
      pass_taints[i] = preferred_taints(c, pass_slots[i]);
      pass_node_preference[i] = node_preference(c, pass_slots[i]);
      pass_inter_pod[i] = preferences.inter_pod_affinity_score(kind, pass_nodes[i]);
      if (spreads) {
        auto raw = preferences.topology_spread_score(kind, pass_nodes[i], topology_weights);
        pass_spread[i] = raw.value_or(0);
        pass_unspread[i] = !raw;
      }
    }
    normalize_taint_toleration(pass_taints);
    normalize_node_affinity(pass_node_preference);
    normalize_inter_pod_affinity(pass_inter_pod);
    // Without ScheduleAnyway constraints kube-scheduler skips the plugin: 0 for every node.
    if (spreads)
      normalize_topology_spread(pass_spread, pass_unspread);
    std::size_t best = 0;
    int64_t best_score = -1;
    for (std::size_t i = 0; i < n; ++i) {
      int64_t total = combined_score({score(c, pass_slots[i]), pass_taints[i],
                                      pass_node_preference[i], pass_spread[i], pass_inter_pod[i]});
      if (total > best_score) {
        best_score = total;
        best = i;
      }
    }
    place(pass_slots[best], c, p);
    return true;
  }

  void unpark(pod_class& pc) {
    for (const auto& e : parked) {
      pc.heap.push_back(e);
      std::push_heap(pc.heap.begin(), pc.heap.end(), heap_less);
    }
    parked.clear();
  }

  // The first rule between pods class `c` breaks on slot `s`, with the placements so far.
  predicate_failure neighbour_failure(std::size_t c, std::size_t s) const {
    uint32_t node_index = slot_node[s];
    return neighbourhood.check(classes[c].kind, node_index, view->at(node_index));
  }

  // Prepares the neighbourhood of this plan: a kind per class, then the nodes and pods that
  // can matter to them (pod_neighbourhood::gather).
  void prepare_neighbourhood() {
    neighbourhood.clear();
    for (std::size_t c = 0; c < class_count; ++c)
      classes[c].kind = neighbourhood.prepare(*classes[c].first);
    neighbourhood.gather(*view);
  }

  // Prepares the scores that depend on pods: a kind per class, the pods that can matter to
  // them, then which classes depend on pods: those with preferences of their own, those some
  // pod in the cluster selects with its scoring terms, and those a class of this gang selects
  // (its placed pods will move their scores).
  void prepare_preferences() {
    preferences.clear();
    for (std::size_t c = 0; c < class_count; ++c)
      classes[c].preference_kind = preferences.prepare(*classes[c].first);
    preferences.gather(*view);
    any_by_pods = false;
    for (std::size_t c = 0; c < class_count; ++c) {
      pod_class& pc = classes[c];
      pc.by_pods = preferences.depends_on_pods(pc.preference_kind);
      for (std::size_t k = 0; k < class_count && !pc.by_pods; ++k)
        pc.by_pods = scoring_terms_select(*classes[k].first, *pc.first, namespaces.get());
      any_by_pods |= pc.by_pods;
    }
  }

  // The required phases: every role minimum, then up to the total. Returns true when met;
  // otherwise records the failure (first in preference order) in `failure`.
  bool greedy_required() {
    const auto& pods = request->pods;
    const auto& roles = request->min_per_role;
    failure = {};
    prepare_heaps();
    // Phase 1: role minimums, pods in preference order.
    if (!roles.empty()) {
      for (std::size_t i = 0; i < pods.size(); ++i) {
        uint32_t c = uint32_t(pod_class_of[i]);
        pod_class& pc = classes[c];
        if (pc.role < 0 || role_placed[std::size_t(pc.role)] >= roles[std::size_t(pc.role)].min)
          continue;
        if (pc.dead || !place_best(c, uint32_t(i)))
          pc.dead = true;
      }
      for (std::size_t r = 0; r < roles.size(); ++r) {
        if (role_placed[r] >= roles[r].min)
          continue;
        // The first pod of the unmet role that could not be placed.
        for (std::size_t i = 0; i < pods.size(); ++i) {
          const pod_class& pc = classes[std::size_t(pod_class_of[i])];
          if (pc.role == int32_t(r) && !pod_placed[i]) {
            failure = {true, i, uint32_t(pod_class_of[i]),
                       pc.placed + (roles[r].min - role_placed[r])};
            return false;
          }
        }
      }
    }
    // Phase 2: fill up to the total.
    for (std::size_t i = 0; i < pods.size() && total_placed < required_total; ++i) {
      if (pod_placed[i])
        continue;
      uint32_t c = uint32_t(pod_class_of[i]);
      pod_class& pc = classes[c];
      if (pc.dead || !place_best(c, uint32_t(i))) {
        pc.dead = true;
        if (!failure.failed)
          failure = {true, i, c, 0};
      }
    }
    if (total_placed < required_total) {
      const pod_class& pc = classes[failure.cls];
      failure.pods_needed =
          std::min<int64_t>(int64_t(pc.pods.size()), pc.placed + (required_total - total_placed));
      return false;
    }
    failure = {};
    return true;
  }

  // Best effort for the pods left over: each on its best node while one fits.
  void greedy_extras() {
    const auto& pods = request->pods;
    for (std::size_t i = 0; i < pods.size(); ++i) {
      if (pod_placed[i])
        continue;
      uint32_t c = uint32_t(pod_class_of[i]);
      pod_class& pc = classes[c];
      if (pc.dead)
        continue;
      if (!place_best(c, uint32_t(i)))
        pc.dead = true;
    }
  }

  // ---------------------------------------------------------------------------------------
  // Bounded backtracking search over every node

  bool class_useful(std::size_t c) const noexcept {
    if (total_placed < required_total)
      return true;
    const pod_class& pc = classes[c];
    return pc.role >= 0 &&
           role_placed[std::size_t(pc.role)] < request->min_per_role[std::size_t(pc.role)].min;
  }

  // At most how many more pods class `k` can add: no more than it has left, and no more than
  // the nodes held for it alone before the search began (placements only shrink that).
  int64_t class_left(std::size_t k) const noexcept {
    const pod_class& pc = classes[k];
    return std::max<int64_t>(0, std::min<int64_t>(int64_t(pc.pods.size()), pc.room) - pc.placed);
  }

  // Can the classes from `c` on still meet the minimums?
  bool bound_ok(std::size_t c) const noexcept {
    int64_t total_left = 0;
    for (std::size_t k = c; k < class_count; ++k)
      total_left += class_left(k);
    if (total_placed + total_left < required_total)
      return false;
    const auto& roles = request->min_per_role;
    for (std::size_t r = 0; r < roles.size(); ++r) {
      if (role_placed[r] >= roles[r].min)
        continue;
      int64_t left = 0;
      for (std::size_t k = c; k < class_count; ++k)
        if (classes[k].role == int32_t(r))
          left += class_left(k);
      if (role_placed[r] + left < roles[r].min)
        return false;
    }
    return true;
  }

  // Two slots are interchangeable for the rest of the search when every class sees the same
  // static verdict and the same free amounts on both.
  bool same_state(std::size_t s, std::size_t t) const noexcept {
    for (std::size_t c = 0; c < class_count; ++c)
      if (slot_static[s * class_count + c] != slot_static[t * class_count + c])
        return false;
    return std::equal(&slot_free[s * dims], &slot_free[s * dims] + dims, &slot_free[t * dims]);
  }

  // Classes are decided in order; the pods of one class go to candidates in non-decreasing
  // position (pods of a class are interchangeable), and a candidate in the same state as one
  // already tried at this point is skipped (symmetric nodes).
  bool dfs(std::size_t c, std::size_t from) {
    if (requirements_met())
      return true;
    if (c >= class_count || exhausted || !bound_ok(c))
      return false;
    pod_class& pc = classes[c];
    if (pc.placed < int32_t(pc.pods.size()) && class_useful(c)) {
      constexpr std::size_t remembered = 8;
      std::array<uint32_t, remembered> tried{};
      std::size_t tried_count = 0;
      uint32_t p = pc.pods[std::size_t(pc.placed)];
      for (std::size_t pos = from; pos < pc.candidates.size(); ++pos) {
        uint32_t s = pc.candidates[pos];
        if (!fits(c, s))
          continue;
        if (neighbours_active && neighbour_failure(c, s) != predicate_failure::none)
          continue;
        // Nodes equal in free room are not interchangeable when rules between pods look at
        // their domains.
        bool symmetric = false;
        for (std::size_t t = 0;
             !neighbours_active && t < std::min(tried_count, remembered) && !symmetric; ++t)
          symmetric = same_state(s, tried[t]);
        if (symmetric)
          continue;
        if (++steps > config->search_budget) {
          exhausted = true;
          return false;
        }
        std::size_t mark = log.size();
        place(s, uint32_t(c), p);
        if (dfs(c, pos))
          return true;
        undo_to(mark);
        if (exhausted)
          return false;
        tried[tried_count++ % remembered] = s;
      }
    }
    return dfs(c + 1, 0);
  }

  bool search() {
    for (std::size_t c = 0; c < class_count; ++c) {
      pod_class& pc = classes[c];
      clear_candidates(pc);
      pc.room = 0;
      const int64_t* r = &class_req[c * dims];
      for (std::size_t s = 0; s < slot_count; ++s) {
        if (slot_static[s * class_count + c] != verdict_ok)
          continue;
        pc.candidates.push_back(uint32_t(s));
        int64_t fit = int64_t(pc.pods.size());
        for (uint16_t d : pc.fit_dims)
          fit = std::min(fit, std::max<int64_t>(0, slot_free[s * dims + d]) / r[d]);
        pc.room = std::min<int64_t>(int64_t(pc.pods.size()), pc.room + fit);
      }
    }
    steps = 0;
    exhausted = false;
    return dfs(0, 0);
  }

  // ---------------------------------------------------------------------------------------
  // Diagnosis

  // The reasons class `c` fits no node in the current overlay, counted per node as
  // kube-scheduler would: the first failing static predicate, else every short dimension.
  void diagnose(std::size_t c, fit_diagnosis& out) {
    out.clear();
    out.set_node_total(int64_t(slot_count));
    const pod_class& pc = classes[c];
    const int64_t* r = &class_req[c * dims];
    // Counted first and rendered once: a cluster has thousands of nodes but few reasons.
    std::array<int64_t, std::size_t(predicate_failure_last) + 1> static_counts{};
    std::vector<int64_t> short_now(dims, 0);
    std::vector<int64_t> short_ever(dims, 0);
    for (std::size_t s = 0; s < slot_count; ++s) {
      uint8_t v = slot_static[s * class_count + c];
      if (v == verdict_ok) {
        // kube-scheduler's filter order: NodePorts, NodeResourcesFit, PodTopologySpread,
        // InterPodAffinity.
        auto rule = neighbours_active ? neighbour_failure(c, s) : predicate_failure::none;
        if (rule == predicate_failure::host_ports) {
          ++static_counts[uint8_t(rule)];
          continue;
        }
        const int64_t* f = &slot_free[s * dims];
        bool short_of_any = false;
        for (uint16_t d : pc.fit_dims)
          if (f[d] < r[d]) {
            ++short_now[d];
            short_of_any = true;
          }
        if (!short_of_any && rule != predicate_failure::none)
          ++static_counts[uint8_t(rule)];
      } else if (v == uint8_t(predicate_failure::exceeds_allocatable)) {
        const int64_t* a = &slot_alloc[s * dims];
        for (uint16_t d : pc.fit_dims)
          if (a[d] < r[d])
            ++short_ever[d];
      } else if (v == uint8_t(predicate_failure::untolerated_taint)) {
        const node& n = view->at(slot_node[s]);
        auto verdict = check_placement(n, pc.constraints);
        if (verdict.failure == predicate_failure::untolerated_taint)
          out.add(untolerated_taint_reason(n.taints[std::size_t(verdict.taint_index)]), true);
      } else {
        ++static_counts[v];
      }
    }
    if (auto k = static_counts[uint8_t(predicate_failure::node_unschedulable)])
      out.add(reason_node_unschedulable, true, k);
    if (auto k = static_counts[uint8_t(predicate_failure::node_affinity)])
      out.add(reason_node_affinity, true, k);
    for (auto rule : neighbour_failures)
      if (auto k = static_counts[uint8_t(rule)])
        out.add(neighbour_reason(rule), false, k);
    for (std::size_t d = 0; d < dims; ++d) {
      if (short_ever[d])
        out.add(insufficient_reason(dim_name(d)), true, short_ever[d]);
      if (short_now[d])
        out.add(insufficient_reason(dim_name(d)), false, short_now[d]);
    }
  }

  std::string who(std::size_t c) const {
    const pod& p = *classes[c].first;
    return p.role.empty() ? p.meta.name.str() : p.role.str();
  }

  std::string amount_text(std::size_t d, int64_t amount) const {
    if (d == dim_pods)
      return std::to_string(amount) + (amount == 1 ? " pod slot" : " pod slots");
    std::string out = format_resource_amount(dim_name(d), amount);
    out += ' ';
    out += dim_name(d);
    return out;
  }

  std::string lack_text(std::size_t d) const {
    return d == dim_pods ? std::string("pod slots") : std::string(dim_name(d));
  }

  std::string request_text(std::size_t c) const {
    std::string out;
    const int64_t* r = &class_req[c * dims];
    for (uint16_t d : classes[c].fit_dims) {
      if (d == dim_pods)
        continue;
      if (!out.empty())
        out += ", ";
      out += amount_text(d, r[d]);
    }
    return out.empty() ? "1 pod slot" : out;
  }

  // Among the slots `eligible(s)` admits, the one holding the most of dimension `d` in
  // `amounts`; ties go to the lowest node index, so the message does not depend on the scan's
  // random start. Precondition: such a slot exists.
  template <class Eligible>
  std::size_t best_slot_by(const Eligible& eligible, const std::vector<int64_t>& amounts,
                           std::size_t d) const {
    std::size_t best = slot_count;
    for (std::size_t s = 0; s < slot_count; ++s) {
      if (!eligible(s))
        continue;
      if (best == slot_count || amounts[s * dims + d] > amounts[best * dims + d] ||
          (amounts[s * dims + d] == amounts[best * dims + d] && slot_node[s] < slot_node[best]))
        best = s;
    }
    return best;
  }

  // The precise sentence for a class that fits no node now: the resource most nodes lack, the
  // most free of it anywhere, and how many nodes lack it. When more than one resource is short
  // somewhere, each is named with the nodes short of it and the most free of it among those
  // (the most free anywhere could be on a node that another resource rules out). Reads the
  // overlay, which the caller rolled back to the view's free amounts.
  std::string detail_unschedulable(std::size_t c, int64_t pods_needed) const {
    const pod_class& pc = classes[c];
    const int64_t* r = &class_req[c * dims];
    // Nodes the rules between pods refuse, by rule: named, and left out of the room below.
    std::array<std::size_t, std::size_t(predicate_failure_last) + 1> refused_by{};
    std::vector<uint8_t> refused(slot_count, 0);
    if (neighbours_active)
      for (std::size_t s = 0; s < slot_count; ++s)
        if (slot_static[s * class_count + c] == verdict_ok) {
          auto rule = neighbour_failure(c, s);
          refused[s] = rule != predicate_failure::none;
          ++refused_by[std::size_t(rule)];
        }
    auto usable = [&](std::size_t s) {
      return slot_static[s * class_count + c] == verdict_ok && !refused[s];
    };
    std::size_t eligible = 0;
    std::size_t best_dim = dims;
    int64_t best_lack = 0;
    int64_t room = 0;
    std::vector<std::pair<uint16_t, int64_t>> short_dims;  // (dimension, nodes short of it)
    for (uint16_t d : pc.fit_dims) {
      int64_t lack = 0;
      for (std::size_t s = 0; s < slot_count; ++s)
        if (usable(s) && slot_free[s * dims + d] < r[d])
          ++lack;
      if (lack > 0)
        short_dims.emplace_back(d, lack);
      // On a tie a resource says more than the pod count, which comes first in `fit_dims`.
      if (lack > best_lack || (lack == best_lack && lack > 0 && best_dim == dim_pods)) {
        best_lack = lack;
        best_dim = d;
      }
    }
    for (std::size_t s = 0; s < slot_count; ++s) {
      if (!usable(s))
        continue;
      ++eligible;
      int64_t fit = std::numeric_limits<int64_t>::max();
      for (uint16_t d : pc.fit_dims)
        fit = std::min(fit, std::max<int64_t>(0, slot_free[s * dims + d]) / r[d]);
      room += fit == std::numeric_limits<int64_t>::max() ? 0 : fit;
    }
    const bool several_short = short_dims.size() > 1;
    std::string out = who(c) + " needs " +
                      (best_dim < dims && !several_short ? amount_text(best_dim, r[best_dim])
                                                         : request_text(c)) +
                      " per pod for " + std::to_string(pods_needed) +
                      (pods_needed == 1 ? " pod" : " pods");
    if (several_short) {
      for (const auto& [d, lack] : short_dims) {
        // The most free of d among the nodes short of it.
        std::size_t best = best_slot_by(
            [&, d = d](std::size_t s) { return usable(s) && slot_free[s * dims + d] < r[d]; },
            slot_free, d);
        out += "; " + lack_text(d) + ": " + std::to_string(lack) +
               (lack == 1 ? " node short, the most free " : " nodes short, the most free ") +
               amount_text(d, std::max<int64_t>(0, slot_free[best * dims + d])) + " (" +
               view->at(slot_node[best]).meta.name + ")";
      }
      out += room > 0 ? "; the nodes have room for " + std::to_string(room) + " of them"
                      : short_dims.size() == 2 ? "; no node has both" : "; no node has all of them";
    } else if (best_dim < dims) {
      std::size_t best_slot = best_slot_by(usable, slot_free, best_dim);
      int64_t most = std::max<int64_t>(0, slot_free[best_slot * dims + best_dim]);
      out += "; the most free on any node is " + amount_text(best_dim, most) + " (" +
             view->at(slot_node[best_slot]).meta.name + "); " + std::to_string(best_lack) +
             (best_lack == 1 ? " node lacks " : " nodes lack ") + lack_text(best_dim);
      if (room > 0)
        out += "; the nodes have room for " + std::to_string(room) + " of them";
    } else {
      out += "; the nodes have room for " + std::to_string(room) + " of them";
      if (room >= pods_needed)
        out += pc.has_rules ? " but not together: the affinity, anti-affinity, host ports or "
                              "topology spread of the gang's own pods rule out the rest"
                            : " but not together with the gang's other pods";
    }
    std::size_t refused_total = 0;
    for (auto k : refused_by)
      refused_total += k;
    refused_total -= refused_by[std::size_t(predicate_failure::none)];
    if (refused_total > 0) {
      out += "; " + std::to_string(refused_total) +
             (refused_total == 1 ? " node is" : " nodes are") + " ruled out by pods there:";
      bool first = true;
      for (auto rule : neighbour_failures) {
        if (auto k = refused_by[std::size_t(rule)]) {
          out += (first ? " " : ", ") + std::to_string(k) + " " + std::string(rule_name(rule));
          first = false;
        }
      }
    }
    std::size_t static_ok = eligible + refused_total;
    if (static_ok < slot_count)
      out += "; " + ruled_out_text(c, slot_count - static_ok);
    if (exhausted)
      out += " (search gave up after " + std::to_string(steps) + " steps)";
    return out;
  }

  static std::string_view rule_name(predicate_failure rule) {
    switch (rule) {
      case predicate_failure::host_ports:
        return "host ports taken";
      case predicate_failure::existing_pod_anti_affinity:
        return "their pods' anti-affinity";
      case predicate_failure::pod_affinity:
        return "no pod it must be beside";
      case predicate_failure::pod_anti_affinity:
        return "a pod it must keep away from";
      case predicate_failure::topology_spread:
        return "topology spread skew";
      case predicate_failure::topology_spread_label:
        return "no topology spread label";
      default:
        return "";
    }
  }

  // "3 nodes are ruled out: 2 untolerated taint, 1 too small": the nodes the static predicates
  // rule out for class c, by the first predicate each fails, most first.
  std::string ruled_out_text(std::size_t c, std::size_t count) const {
    std::array<std::size_t, std::size_t(predicate_failure_last) + 1> by{};
    for (std::size_t s = 0; s < slot_count; ++s)
      ++by[slot_static[s * class_count + c]];
    static constexpr std::array<std::pair<predicate_failure, std::string_view>, 4> names{{
        {predicate_failure::node_unschedulable, "unschedulable"},
        {predicate_failure::untolerated_taint, "untolerated taint"},
        {predicate_failure::node_affinity, "node affinity/selector"},
        {predicate_failure::exceeds_allocatable, "too small"},
    }};
    std::vector<std::pair<std::size_t, std::string_view>> reasons;
    for (const auto& [failure, name] : names)
      if (by[std::size_t(failure)] > 0)
        reasons.emplace_back(by[std::size_t(failure)], name);
    std::stable_sort(reasons.begin(), reasons.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string out = std::to_string(count) + (count == 1 ? " node is" : " nodes are") +
                      " ruled out:";
    for (std::size_t i = 0; i < reasons.size(); ++i)
      out += (i == 0 ? " " : ", ") + std::to_string(reasons[i].first) + " " +
             std::string(reasons[i].second);
    return out;
  }

  // The sentence for a class no node can ever take.
  std::string detail_never(std::size_t c) const {
    const pod_class& pc = classes[c];
    const int64_t* r = &class_req[c * dims];
    // Nodes that pass the non-resource predicates but are too small.
    std::size_t best_dim = dims;
    int64_t best_count = 0;
    for (uint16_t d : pc.fit_dims) {
      int64_t count = 0;
      for (std::size_t s = 0; s < slot_count; ++s)
        if (slot_static[s * class_count + c] == uint8_t(predicate_failure::exceeds_allocatable) &&
            slot_alloc[s * dims + d] < r[d])
          ++count;
      if (count > best_count) {
        best_count = count;
        best_dim = d;
      }
    }
    if (best_dim == dims)
      return "no node passes the node selector, affinity, taints and cordons of " + who(c);
    std::size_t best_slot =
        best_slot_by([&](std::size_t s) {
          return slot_static[s * class_count + c] == uint8_t(predicate_failure::exceeds_allocatable);
        }, slot_alloc, best_dim);
    return who(c) + " needs " + amount_text(best_dim, r[best_dim]) +
           " per pod; the most allocatable on any matching node is " +
           amount_text(best_dim, slot_alloc[best_slot * dims + best_dim]) + " (" +
           view->at(slot_node[best_slot]).meta.name + "); " + std::to_string(best_count) +
           (best_count == 1 ? " node can never fit it" : " nodes can never fit it");
  }

  // ---------------------------------------------------------------------------------------
  // Results

  void emit_placements(plan_result& out) const {
    out.placements.clear();
    out.placements.reserve(log.size());
    for (const auto& e : log)
      out.placements.push_back({e.pod, slot_node[e.slot]});
  }
};

gang_planner::gang_planner(planner_config config)
    : config_(std::move(config)), scratch_(std::make_shared<scratch>()) {}

gang_planner::gang_planner(const gang_planner& other)
    : config_(other.config_), scratch_(std::make_shared<scratch>()) {}

gang_planner& gang_planner::operator=(const gang_planner& other) {
  if (this != &other) {
    config_ = other.config_;
    scratch_ = std::make_shared<scratch>();
  }
  return *this;
}

plan_result gang_planner::plan(const node_view& view, const gang_request& request, rng& random) {
  plan_result out;
  plan(view, request, random, out);
  return out;
}

void gang_planner::plan(const node_view& view, const gang_request& request, rng& random,
                        plan_result& out) {
  scratch& s = *scratch_;
  out.code = plan_code::unschedulable;
  out.placements.clear();
  out.origin_pod = 0;
  out.origin.clear();
  out.origin.set_node_total(0);
  out.detail.clear();
  out.nodes_evaluated = 0;
  out.search_steps = 0;
  out.widened = false;
  out.search_exhausted = false;

  s.view = &view;
  s.request = &request;
  s.config = &config_;
  s.reset_slots();
  s.neighbours_active = view.anti_affinity_pods() > 0 ||
                        std::any_of(request.pods.begin(), request.pods.end(),
                                    [](const pod* p) { return has_neighbour_rules(*p); });
  s.preferences_active =
      view.scoring_term_pods() > 0 ||
      std::any_of(request.pods.begin(), request.pods.end(),
                  [](const pod* p) { return has_pod_preferences(*p) || has_scoring_terms(*p); });
  s.any_by_pods = false;
  s.build_classes();
  s.node_slots = view.size();
  s.reserve_slots(s.node_slots);
  // Rules and scores between pods match namespaceSelectors against the namespaces' labels; the
  // snapshot is held for the plan (a view lock taken only by plans that read it).
  s.namespaces = s.neighbours_active || s.preferences_active ? view.namespaces() : nullptr;
  s.neighbourhood.set_namespaces(s.namespaces.get());
  s.preferences.set_namespaces(s.namespaces.get());
  if (s.neighbours_active)
    s.prepare_neighbourhood();
  if (s.preferences_active)
    s.prepare_preferences();

  auto count_live = [&] {
    int64_t live = 0;
    for (std::size_t i = 0; i < view.size(); ++i)
      live += view.is_live(i) ? 1 : 0;
    return live;
  };

  // What must be placed, and whether the pods given can ever meet it.
  const auto& pods = request.pods;
  int64_t role_sum = 0;
  for (const auto& rm : request.min_per_role) {
    if (rm.min <= 0)
      continue;
    role_sum += rm.min;
    int64_t have = 0;
    for (const pod* p : pods)
      have += p->role == rm.role ? 1 : 0;
    if (have < rm.min) {
      out.code = plan_code::unresolvable;
      out.lacks_pods = true;
      out.origin.set_node_total(count_live());
      out.detail = "role " + rm.role + " needs " + std::to_string(rm.min) +
                   (rm.min == 1 ? " pod" : " pods") + " but the gang has " + std::to_string(have) +
                   " pending";
      return;
    }
  }
  s.required_total = std::max<int64_t>(request.min_pods, role_sum);
  if (s.required_total > int64_t(pods.size())) {
    out.code = plan_code::unresolvable;
    out.lacks_pods = true;
    out.origin.set_node_total(count_live());
    out.detail = "the gang needs " + std::to_string(s.required_total) + " pods but has " +
                 std::to_string(pods.size()) + " pending";
    return;
  }
  if (pods.empty() || (s.required_total == 0 && !request.place_extra)) {
    out.code = plan_code::success;
    return;
  }

  // The sample: scan from a random node until every class found its share of feasible nodes.
  s.scan_start = s.node_slots == 0 ? 0 : std::size_t(random() % s.node_slots);
  s.scan_pos = 0;
  s.classes_at_target = 0;
  int64_t base_target = feasible_nodes_to_find(
      int64_t(s.node_slots), config_.percentage_of_nodes_to_score, config_.min_feasible_nodes);
  for (std::size_t c = 0; c < s.class_count; ++c)
    s.classes[c].target = std::max<int64_t>({base_target, int64_t(s.classes[c].pods.size()), 1});
  s.scan(false);

  bool ok = s.greedy_required();
  if (!ok && s.scan_pos < s.node_slots) {
    // The sample cannot hold the gang: never report unschedulable because of sampling.
    s.undo_to(0);
    s.scan(true);
    s.rebuild_heaps();
    out.widened = true;
    ok = s.greedy_required();
  }
  if (!ok) {
    // Every node was considered. The diagnosis describes the state in which the origin pod
    // found no node, as Volcano's does.
    auto fail = s.failure;
    s.diagnose(fail.cls, out.origin);
    s.undo_to(0);

    // Unresolvable: without the pods no node can ever take, the minimums cannot be met.
    int64_t possible_total = 0;
    for (std::size_t c = 0; c < s.class_count; ++c)
      if (s.classes[c].possible)
        possible_total += int64_t(s.classes[c].pods.size());
    std::size_t impossible_pod = pods.size();
    bool unresolvable = possible_total < s.required_total;
    for (std::size_t r = 0; r < request.min_per_role.size() && !unresolvable; ++r) {
      int64_t possible = 0;
      for (std::size_t c = 0; c < s.class_count; ++c)
        if (s.classes[c].possible && s.classes[c].role == int32_t(r))
          possible += int64_t(s.classes[c].pods.size());
      if (possible < request.min_per_role[r].min) {
        unresolvable = true;
        for (std::size_t i = 0; i < pods.size() && impossible_pod == pods.size(); ++i) {
          const auto& pc = s.classes[std::size_t(s.pod_class_of[i])];
          if (pc.role == int32_t(r) && !pc.possible)
            impossible_pod = i;
        }
      }
    }
    if (unresolvable) {
      for (std::size_t i = 0; i < pods.size() && impossible_pod == pods.size(); ++i)
        if (!s.classes[std::size_t(s.pod_class_of[i])].possible)
          impossible_pod = i;
      std::size_t c = std::size_t(s.pod_class_of[impossible_pod]);
      out.code = plan_code::unresolvable;
      out.origin_pod = impossible_pod;
      s.diagnose(c, out.origin);
      out.detail = s.detail_never(c);
      out.nodes_evaluated = int64_t(s.slot_count);
      s.reset_slots();
      return;
    }

    ok = s.search();
    out.search_steps = s.steps;
    out.search_exhausted = s.exhausted;
    if (!ok) {
      s.undo_to(0);
      out.code = plan_code::unschedulable;
      out.origin_pod = fail.pod;
      out.detail = s.detail_unschedulable(fail.cls, std::max<int64_t>(fail.pods_needed, 1));
      out.nodes_evaluated = int64_t(s.slot_count);
      s.reset_slots();
      return;
    }
    out.origin.clear();
    out.origin.set_node_total(0);
    // The search ignored scores; extras below go through the heaps again.
    s.rebuild_heaps();
    s.prepare_heaps();
  }
  if (request.place_extra)
    s.greedy_extras();
  if (s.log.empty() && s.required_total == 0 && request.place_extra) {
    // A ready gang's extra pods, and none fits the sample: look at every node before saying so,
    // and say why, as for a failed plan (the code stays success: nothing was required).
    if (s.scan_pos < s.node_slots) {
      s.scan(true);
      s.rebuild_heaps();
      s.prepare_heaps();
      out.widened = true;
      s.greedy_extras();
    }
    if (s.log.empty()) {
      const auto c = std::size_t(s.pod_class_of[0]);
      out.origin_pod = 0;
      s.diagnose(c, out.origin);
      out.detail = s.detail_unschedulable(c, 1);
    }
  }
  out.code = plan_code::success;
  out.nodes_evaluated = int64_t(s.slot_count);
  s.emit_placements(out);
  s.reset_slots();
}

// ---------------------------------------------------------------------------------------------
// Volcano's condition message

std::string gang_unschedulable_message(const gang_status_counts& counts,
                                       std::string_view origin_pod_name,
                                       const fit_diagnosis& origin, std::string_view detail) {
  // Volcano: "<minAvailable - ready>/<tasks> tasks in gang unschedulable: " followed by
  // JobInfo.FitError(): a histogram of task statuses plus minAvailable, sorted as strings, then
  // the pending tasks' reasons, then the first pending task's fit errors.
  int32_t ready = counts.running + counts.succeeded;
  std::string out = std::to_string(counts.min_available - ready) + "/" +
                    std::to_string(counts.total) +
                    " tasks in gang unschedulable: pod group is not ready";
  std::vector<std::string> histogram;
  auto add = [&](int32_t n, std::string_view status) {
    if (n > 0)
      histogram.push_back(std::to_string(n) + " " + std::string(status));
  };
  add(counts.pending, "Pending");
  add(counts.running, "Running");
  add(counts.succeeded, "Succeeded");
  add(counts.failed, "Failed");
  histogram.push_back(std::to_string(counts.min_available) + " minAvailable");
  std::sort(histogram.begin(), histogram.end());
  for (const auto& h : histogram) {
    out += ", ";
    out += h;
  }
  if (counts.pending > 0)
    out += "; Pending: " + std::to_string(counts.pending) + " Unschedulable";
  if (!origin_pod_name.empty()) {
    out += ". Origin reason is ";
    out += origin_pod_name;
    out += ": ";
    out += origin.to_volcano_string();
  } else {
    out += '.';
  }
  if (!detail.empty()) {
    out += ' ';
    out += detail;
    if (detail.back() != '.')
      out += '.';
  }
  return out;
}

} // namespace phalanx::scheduler
