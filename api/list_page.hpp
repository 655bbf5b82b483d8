#pragma once

// Lists in pages, as kube-apiserver serves them (?limit=N, ?continue=TOKEN): a page holds at
// most N items and, when more remain, metadata.continue (an opaque token) and
// metadata.remainingItemCount; the token asks for the items after the page's last, in the
// list's order (namespace, then name).
//
// Unlike kube-apiserver, which reads every page from the first page's etcd revision, a page is
// read from the state when it is asked for: an item created before the last key of the pages
// already read is not in the list, and one changed or deleted after them shows as it is then.
// Every page reports the first page's resourceVersion, so that a watch from it replays the
// changes the pages may have missed, as far as the service keeps them (phalanxd keeps those of
// the kinds someone watches). Once the service has dropped a change made after the first page
// (service::list fails with failed_precondition), the token is refused with kube-apiserver's
// 410 Expired, whose status carries a token that lists the rest from the state as it is
// (reporting its version).

#include "api/errors.hpp"
#include "api/service.hpp"

#include <boost/json/value.hpp>

#include <compare>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::api {

/// An item's place in a list: by namespace, then name.
struct list_key {
  std::string_view namespace_name;
  std::string_view name;
  friend auto operator<=>(const list_key&, const list_key&) = default;
};

/// Where a page of a list ends.
struct page_end {
  /// The key of the page's last item; unset when the page holds the rest of the list.
  std::optional<list_key> last;
  /// How many of the selected items come after the page.
  std::size_t remaining = 0;
};

/// Finds where a page ends from the keys of the items a list selects, offered one at a time in
/// any order (a walk of a hash map): it keeps the page's first keys (at most page.limit, in a
/// heap) and counts the others, so a page of a long list costs one walk of its keys and memory
/// for the page only. The keys' strings must outlive the finder's answer.
class page_finder {
 public:
  explicit page_finder(const list_page& page) : page_(page) {}
  /// A selected item's key.
  void offer(list_key key);
  /// The page's end, once every selected key was offered.
  page_end end() const;

 private:
  const list_page& page_;
  std::vector<list_key> first_;  // A max-heap of the page's keys so far.
  std::size_t beyond_ = 0;       // Selected keys after page.after not among them.
};

/// True when the item of `key` belongs to `page`, which ends at `end`.
bool in_page(list_key key, const list_page& page, const page_end& end);

/// What ?limit, ?continue and ?resourceVersion ask of a list of `resource` ("pods",
/// "events.events.k8s.io"). 400 BadRequest naming the parameter: a limit that is no whole
/// number of at least 0, a token this server did not make for a list of `resource`, or a
/// resourceVersion beside a token (other than "" and "0", as kube-apiserver).
outcome<list_page> read_page_query(std::string_view limit, std::string_view continue_text,
                                   std::string_view resource_version, std::string_view resource);

/// What a page's list metadata says.
struct page_metadata {
  /// The list's resourceVersion: the first page's on every page of a consistent list.
  uint64_t resource_version = 0;
  /// metadata.continue: empty on the last page.
  std::string continue_token;
  /// metadata.remainingItemCount: set with continue, when no selector filters the list (the
  /// count is then of the items after the page when it was read, as kube-apiserver's).
  std::optional<std::size_t> remaining;
};

/// The metadata of the page `asked` of a list of `resource` read at `version`: `last` is the
/// key of the page's last item as the service answered it (before any filter of the
/// handler's), `remaining` the service's count after it, `selectors` whether a label or field
/// selector filters the list.
page_metadata answer_page(std::string_view resource, const list_page& asked, uint64_t version,
                          std::optional<list_key> last, std::size_t remaining, bool selectors);

/// Sets `list`'s metadata (a List's or a Table's ListMeta) to `meta`: resourceVersion, then
/// continue and remainingItemCount when set.
void set_page_metadata(boost::json::value& list, const page_metadata& meta);

/// kube-apiserver's 410 Expired for a token of a list of `resource` whose first page is too
/// old to continue consistently (`asked` is that token's page): its status carries a token
/// that lists the rest without that promise.
api_error continue_expired(std::string_view resource, const list_page& asked);

} // namespace phalanx::api
