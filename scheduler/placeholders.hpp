#pragma once

// Placeholders: room a gang reserves for members that do not exist yet, when its PodGroup asks
// for it (the annotation below). Without it a gang short of minMember waits for its pods, as
// Volcano users expect ("2/4 tasks in gang unschedulable").
//
// A Spark application's PodGroup asks for minMember 3 and minResources of 3 CPUs, but only its
// driver exists at first: the driver creates its executors once it runs. Placing the driver
// alone is how six drivers fill six CPUs and deadlock; waiting for the executors before placing
// the driver never ends. So the gang reserves placeholders for its missing members together with
// the pods it has (all-or-nothing, as one gang), and a member created later takes over a
// placeholder on its node - YuniKorn's gang scheduling does the same with placeholder pods.
//
// Sizing: a PodGroup does not say what its future pods request, only minResources for the whole
// gang. In each dimension minResources names, the placeholders share evenly (rounded down) what
// it leaves after the existing members' requests; in the dimensions it does not name, they
// request what an existing member of their role (else the first member) requests. They take the
// roles minTaskMember still misses (the rest have no role) and that member's scheduling
// constraints: a driver's executors usually run where the driver may.
//
// Pure functions; no state.

#include "scheduler/model.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace phalanx::scheduler {

/// The annotation by which a PodGroup (or a Volcano Job, which passes its annotations to its
/// PodGroup) asks for placeholders: "true" or "false" (the default).
inline constexpr std::string_view reserve_missing_members_key =
    "scheduling.phalanx.io/reserve-missing-members";

/// True when `group` asks for placeholders (reserve_missing_members_key is "true").
bool reserves_missing_members(const pod_group& group);

/// The placeholders `group` needs besides `members` (its pods that exist and count toward
/// minMember: not failed). Named "<group>-placeholder-<i>" in the group's namespace, with the
/// group's priority. None when the members already reach minMember or the group sets no
/// minResources (then nothing tells how large the missing members are: the gang waits for them).
std::vector<pod> make_placeholders(const pod_group& group, std::span<const pod* const> members);

/// A bound placeholder that a new member might take over.
struct placeholder_slot {
  const pod* placeholder = nullptr;
  const node* where = nullptr;
};

/// The slot that `p` takes over: its placeholder's request covers p's request, p's static
/// predicates (taints, selector, affinity, unschedulable) allow the node, and its role is p's or
/// none (one held for another role stays for that role); p's role comes first, then none; the
/// earliest slot wins ties.
/// nullopt when none fits: p is then placed like any pod.
std::optional<std::size_t> pick_placeholder(const pod& p, std::span<const placeholder_slot> slots);

} // namespace phalanx::scheduler
