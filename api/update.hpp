#pragma once

// Updates through the API (PUT and PATCH) of every kind, as kube-apiserver takes them: what the
// request asks for is made whole against the object as served now, checked for what may not
// change, and decoded and validated as a create is. What may change given the object's state (a
// PodGroup's queue once its pods are bound, a pod that is bound) is the service's to say.
//
// Kubernetes' rules kept here:
// - status is ignored on the main resource (it has its own writer);
// - metadata.name, namespace, uid, creationTimestamp and generateName never change; a PUT that
//   leaves them out keeps them (kubectl replace of a manifest); labels, annotations, finalizers
//   and ownerReferences may change;
// - a PUT's name and namespace must be the URL's (400), and its apiVersion and kind the kind's;
// - the resourceVersion the update must find is the one the body names, else for a PATCH the one
//   it was applied to; a PUT without one is unconditional for Kubernetes' own kinds (core,
//   scheduling.k8s.io) and refused for custom resources (Volcano's kinds), as kube-apiserver
//   refuses it for them;
// - strategic merge patches are for Kubernetes' own kinds only; custom resources take JSON and
//   merge patches (415 otherwise);
// - a PriorityClass's value and preemptionPolicy never change.

#include "api/codec.hpp"
#include "api/errors.hpp"
#include "api/kinds.hpp"

#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace phalanx::api {

enum class update_verb { put, patch };

/// True when `k` takes a PATCH of media type `type`.
bool takes_patch_type(const kind_info& k, std::string_view type);
/// The patch media types `k` takes, for a 415's message.
std::string_view patch_types_of(const kind_info& k);

/// `current` (the object as served) with `patch` of media type `type` applied. 415 for a type the
/// kind does not take, 422 for a patch that cannot apply (a JSON patch's failed test).
outcome<boost::json::value> apply_patch(const kind_info& k, boost::json::value current,
                                        const boost::json::value& patch, std::string_view type);

/// The object to hand to service::update: `next` (a PUT's body, or `current` with a PATCH
/// applied) made whole and checked against `current`, decoded and validated as a create, with
/// the resourceVersion the update must find (0: none). What the kind never lets change after
/// creation is refused here with 422 naming the field:
/// - a pod's spec, but for the removal of scheduling gates (the service allows that while the
///   pod is pending);
/// - a node's spec, but for unschedulable and taints.
/// With `unknown`, the paths of fields of `next` that the kind's API type does not have are
/// appended to it (fieldValidation; decode_options::unknown_fields).
outcome<object> prepare_update(const kind_info& k, const boost::json::value& current,
                               boost::json::value next, update_verb verb,
                               std::vector<std::string>* unknown = nullptr);

} // namespace phalanx::api
