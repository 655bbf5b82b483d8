#pragma once

// A Volcano job's volumes (spec.volumes: a claim mounted at a path in every pod of the job), as
// Volcano's job controller makes them (createJobIOIfNotExist, createPVC, createJobPod): a
// volume that describes a claim (volumeClaim) and names none gets a claim of a generated name,
// which is written into the job's spec; a volume that names a claim (volumeClaimName) mounts
// that claim, which must exist. The names decided here; the pods' volumes and mounts are
// api::add_volumes_to_pod_spec's, the claims on the apiserver the Kubernetes-mode controller's.
//
// Pure functions; thread-safe.

#include "scheduler/model.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {

/// The name of the claim job `job_name` (uid `job_uid`) makes for its volume at index `volume`
/// (spec.volumes[volume]) when the volume names none: "<job>-pvc-" and 12 characters of
/// [0-9a-z], the shape of Volcano's GenPVCName. Volcano draws the 12 at random (and draws again
/// while the name is taken); here they are a hash of the job's uid and the volume's index, so
/// every try in any process gives the same name: a controller that made the claim and stopped
/// before writing its name into the job finds that claim again rather than making a second.
std::string generated_claim_name(std::string_view job_name, std::string_view job_uid,
                                 std::size_t volume);

/// Gives each volume of `j` that names no claim its generated_claim_name (from j.meta.name and
/// j.meta.uid, which must be set). Returns whether it named any.
bool name_volume_claims(job& j);

/// The name of the pod volume that mounts claim `claim` in the pods of job `job_name`: "<job>-"
/// and 12 characters of [0-9a-z], the shape of the name Volcano's createJobPod gives it. Volcano
/// draws them at random for each pod; here they are a hash of the claim's name, so that a pod's
/// spec made again (standalone makes a job pod's spec where the pod is shown, and again after a
/// restart) is the same.
std::string pod_volume_name(std::string_view job_name, std::string_view claim);

/// The claims of `j`'s volumes that have a name, in volume order, none twice: what the job's
/// status.controlledResources records, each as "volume-pvc-<claim>": <claim>
/// (claim_resource_key), as Volcano's createJobIOIfNotExist does.
std::vector<std::string> named_claims(const job& j);
std::string claim_resource_key(std::string_view claim);

/// Volcano's error for a volume whose claim (volumeClaimName) does not exist: the job's step
/// fails and is tried again.
std::string claim_not_found_message(std::string_view claim);

} // namespace phalanx::scheduler
