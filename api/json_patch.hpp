#pragma once

// The three patch formats of a Kubernetes PATCH, applied to an object as the API serves it (its
// JSON): the handler patches, decodes and validates the result like a create, and the registry
// takes what may change.
//
// - JSON merge patch (RFC 7386, application/merge-patch+json): objects merge member by member, a
//   null removes a member, anything else (arrays included) replaces.
// - JSON patch (RFC 6902, application/json-patch+json): add, remove, replace, move, copy and test
//   at JSON pointers (RFC 6901: "~1" is '/', "~0" is '~', "-" appends to an array).
// - Strategic merge patch (application/strategic-merge-patch+json), as apimachinery applies it to
//   the core kinds: a merge patch whose lists with a merge key (a pod's containers by name, its
//   schedulingGates by name, ...: `strategic_merge_keys`) merge item by item, an item
//   {"$patch": "delete", <key>: ...} deleting its match; `$patch: replace` in an object replaces
//   it whole, `$patch: delete` removes it; `$retainKeys` keeps only the listed members;
//   `$deleteFromPrimitiveList/<field>` removes values from a list of scalars;
//   `$setElementOrder/<field>` orders the merged list. Lists without a merge key replace.
//
// Errors are invalid_argument with the operation or path at fault ("JSON patch operation 2
// (remove): the path /spec/x does not exist"); the handler answers them with 422.

#include "scheduler/result.hpp"

#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace phalanx::api {

/// A list that strategic merge patches merge item by item: its path from the object's root
/// (object members separated by '.', a list's items by "[]": "spec.containers[].ports") and the
/// member that identifies an item.
struct strategic_merge_key {
  std::string path;
  std::string key;
};

/// The merge keys of a kind's lists (apimachinery's patchMergeKey tags), by the kind's name
/// ("Pod", "Node", ...). Empty for kinds whose lists all replace (custom resources: Kubernetes
/// refuses a strategic merge patch on them, and so does the handler).
const std::vector<strategic_merge_key>& strategic_merge_keys(std::string_view kind);

result<boost::json::value> apply_merge_patch(boost::json::value target,
                                             const boost::json::value& patch);

result<boost::json::value> apply_json_patch(boost::json::value target,
                                            const boost::json::value& patch);

result<boost::json::value> apply_strategic_merge_patch(boost::json::value target,
                                                       const boost::json::value& patch,
                                                       const std::vector<strategic_merge_key>& keys);

} // namespace phalanx::api
