#pragma once

// The manifests of `apply -f` and `delete -f`: files, directories and standard input read into
// documents, each checked before anything is sent (a kind Phalanx serves, a name, a namespace that
// agrees with -n), and the comparison that lets `apply` say "unchanged" honestly.

#include "api/service.hpp"
#include "scheduler/result.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <istream>
#include <string>
#include <vector>

namespace phalanx::api::ctl {

struct manifest_document {
  std::string source;          // The file as given on the command line, or "STDIN".
  std::size_t index = 0;       // 1-based position in its source (after List expansion).
  resource_kind kind = resource_kind::pod;
  std::string name;            // Empty when the document has only metadata.generateName.
  std::string namespace_name;  // Empty for cluster-scoped kinds.
  boost::json::value body;     // As written, with metadata.namespace filled in.
};

/// Reads every -f argument: a file, a directory (its *.yaml, *.yml and *.json files, in name
/// order, not recursing), or "-" (standard input, read once). Documents may be YAML (several per
/// file, separated by ---) or JSON; kind List (and *List) bodies are expanded into their items.
/// A namespaced document without metadata.namespace gets `default_namespace`; one whose namespace
/// differs from an explicit -n (`namespace_given`) is an error, as in kubectl.
/// Errors (errc::invalid_argument) list every document that is wrong, each with its source,
/// position and the field and rule: nothing is sent when any document is wrong.
result<std::vector<manifest_document>> read_manifests(const std::vector<std::string>& files,
                                                      std::istream& standard_input,
                                                      const std::string& default_namespace,
                                                      bool namespace_given);

/// Where an existing object differs from a manifest.
struct difference {
  std::string path;      // "spec.weight", "metadata.labels.app", "spec.tasks[1].replicas".
  std::string manifest;  // The manifest's value, as text.
  std::string server;    // The server's value, as text ("<unset>" when it has none).
};

/// Compares what a manifest sets with the object the server has: every field the manifest sets
/// (metadata.labels and metadata.annotations, spec and, for nodes, status.allocatable - or the
/// capacity that stands for it; not status of other kinds nor server-set metadata) must be
/// present with an equal value. Quantities compare by
/// amount ("2000m" equals "2", 8 equals "8"); empty values equal an absent field (the server
/// omits them). Fields the server adds (defaults, status) are not differences.
std::vector<difference> manifest_differences(resource_kind kind,
                                             const boost::json::value& manifest,
                                             const boost::json::value& existing);

} // namespace phalanx::api::ctl
