#include "api/json_patch.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <optional>

namespace phalanx::api {

namespace json = boost::json;

namespace {

status invalid(std::string message) { return status{errc::invalid_argument, std::move(message)}; }

// ---------------------------------------------------------------------------------------------
// JSON merge patch

json::value merge(json::value target, const json::value& patch) {
  if (!patch.is_object())
    return patch;
  if (!target.is_object())
    target = json::object{};
  auto& out = target.get_object();
  for (const auto& [key, value] : patch.get_object()) {
    if (value.is_null()) {
      out.erase(key);
      continue;
    }
    auto* current = out.if_contains(key);
    out[key] = merge(current ? std::move(*current) : json::value{}, value);
  }
  return target;
}

// ---------------------------------------------------------------------------------------------
// JSON pointers and JSON patch

// The reference tokens of a JSON pointer; nullopt when it is not one.
std::optional<std::vector<std::string>> tokens_of(std::string_view pointer) {
  std::vector<std::string> out;
  if (pointer.empty())
    return out;
  if (pointer.front() != '/')
    return std::nullopt;
  pointer.remove_prefix(1);
  while (true) {
    auto slash = pointer.find('/');
    auto raw = pointer.substr(0, slash);
    std::string token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '~') {
        token += raw[i];
        continue;
      }
      if (i + 1 == raw.size() || (raw[i + 1] != '0' && raw[i + 1] != '1'))
        return std::nullopt;
      token += raw[i + 1] == '0' ? '~' : '/';
      ++i;
    }
    out.push_back(std::move(token));
    if (slash == std::string_view::npos)
      return out;
    pointer.remove_prefix(slash + 1);
  }
}

// An array index token: digits without a leading zero (RFC 6901).
std::optional<std::size_t> index_of(const std::string& token) {
  if (token.empty() || (token.size() > 1 && token[0] == '0'))
    return std::nullopt;
  std::size_t out = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), out);
  if (ec != std::errc{} || end != token.data() + token.size())
    return std::nullopt;
  return out;
}

// The value at `tokens`, or null.
json::value* find(json::value& root, const std::vector<std::string>& tokens) {
  json::value* at = &root;
  for (const auto& token : tokens) {
    if (at->is_object()) {
      at = at->get_object().if_contains(token);
    } else if (at->is_array()) {
      auto i = index_of(token);
      if (!i || *i >= at->get_array().size())
        return nullptr;
      at = &at->get_array()[*i];
    } else {
      return nullptr;
    }
    if (at == nullptr)
      return nullptr;
  }
  return at;
}

class json_patcher {
 public:
  explicit json_patcher(json::value& root) : root_(root) {}

  status apply(const json::object& op, std::size_t n) {
    auto* name = op.if_contains("op");
    auto* path = op.if_contains("path");
    if (name == nullptr || !name->is_string())
      return invalid(where(n, "") + "\"op\" must be a string");
    op_ = std::string(name->get_string());
    n_ = n;
    if (path == nullptr || !path->is_string())
      return fail("\"path\" must be a string");
    auto tokens = tokens_of(path->get_string());
    if (!tokens)
      return fail("\"path\" " + json::serialize(*path) + " is not a JSON pointer");
    path_ = std::string(path->get_string());
    if (op_ == "add" || op_ == "replace" || op_ == "test") {
      auto* value = op.if_contains("value");
      if (value == nullptr)
        return fail("\"value\" is required");
      if (op_ == "add")
        return add(*tokens, *value);
      if (op_ == "replace") {
        auto* at = find(root_, *tokens);
        if (at == nullptr)
          return missing(path_);
        *at = *value;
        return {};
      }
      auto* at = find(root_, *tokens);
      if (at == nullptr)
        return missing(path_);
      if (*at != *value)
        return fail("the value at " + path_ + " is " + json::serialize(*at) + ", not " +
                    json::serialize(*value));
      return {};
    }
    if (op_ == "remove") {
      auto removed = take(*tokens);
      return removed ? status{} : missing(path_);
    }
    if (op_ == "move" || op_ == "copy") {
      auto* from = op.if_contains("from");
      if (from == nullptr || !from->is_string())
        return fail("\"from\" must be a string");
      auto from_tokens = tokens_of(from->get_string());
      if (!from_tokens)
        return fail("\"from\" " + json::serialize(*from) + " is not a JSON pointer");
      std::string from_path(from->get_string());
      if (op_ == "move") {
        if (path_.starts_with(from_path + "/"))
          return fail("cannot move " + from_path + " into itself");
        auto value = take(*from_tokens);
        if (!value)
          return missing(from_path);
        return add(*tokens, *value);
      }
      auto* at = find(root_, *from_tokens);
      if (at == nullptr)
        return missing(from_path);
      json::value copy = *at;
      return add(*tokens, copy);
    }
    return fail("unknown operation: use add, remove, replace, move, copy or test");
  }

 private:
  std::string where(std::size_t n, std::string_view op) const {
    return "JSON patch operation " + std::to_string(n) +
           (op.empty() ? std::string() : " (" + std::string(op) + ")") + ": ";
  }
  status fail(std::string message) const { return invalid(where(n_, op_) + std::move(message)); }
  status missing(const std::string& path) const {
    return fail("the path " + path + " does not exist");
  }

  status add(const std::vector<std::string>& tokens, const json::value& value) {
    if (tokens.empty()) {
      root_ = value;
      return {};
    }
    auto parent_tokens = tokens;
    auto last = std::move(parent_tokens.back());
    parent_tokens.pop_back();
    auto* parent = find(root_, parent_tokens);
    if (parent == nullptr)
      return missing(path_);
    if (parent->is_object()) {
      parent->get_object()[last] = value;
      return {};
    }
    if (!parent->is_array())
      return fail("the parent of " + path_ + " is neither an object nor an array");
    auto& array = parent->get_array();
    if (last == "-") {
      array.push_back(value);
      return {};
    }
    auto i = index_of(last);
    if (!i || *i > array.size())
      return fail("the index of " + path_ + " is out of range");
    array.insert(array.begin() + static_cast<std::ptrdiff_t>(*i), value);
    return {};
  }

  std::optional<json::value> take(const std::vector<std::string>& tokens) {
    if (tokens.empty())
      return std::nullopt;  // Removing the whole document is not a patch an object survives.
    auto parent_tokens = tokens;
    auto last = std::move(parent_tokens.back());
    parent_tokens.pop_back();
    auto* parent = find(root_, parent_tokens);
    if (parent == nullptr)
      return std::nullopt;
    if (parent->is_object()) {
      auto* at = parent->get_object().if_contains(last);
      if (at == nullptr)
        return std::nullopt;
      json::value out = std::move(*at);
      parent->get_object().erase(last);
      return out;
    }
    if (!parent->is_array())
      return std::nullopt;
    auto& array = parent->get_array();
    auto i = index_of(last);
    if (!i || *i >= array.size())
      return std::nullopt;
    json::value out = std::move(array[*i]);
    array.erase(array.begin() + static_cast<std::ptrdiff_t>(*i));
    return out;
  }

  json::value& root_;
  std::string op_;
  std::string path_;
  std::size_t n_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Strategic merge patch

constexpr std::string_view patch_directive = "$patch";
constexpr std::string_view retain_keys_directive = "$retainKeys";
constexpr std::string_view delete_from_primitive_list = "$deleteFromPrimitiveList/";
constexpr std::string_view set_element_order = "$setElementOrder/";

class strategic_merger {
 public:
  explicit strategic_merger(const std::vector<strategic_merge_key>& keys) : keys_(keys) {}

  result<json::value> merge_object(json::value target, const json::object& patch,
                                   const std::string& path) {
    if (auto* directive = patch.if_contains(patch_directive)) {
      auto name = directive->is_string() ? std::string(directive->get_string()) : std::string();
      if (name == "delete")
        return json::value{};  // The caller drops a null member.
      if (name == "replace") {
        json::object replaced;
        for (const auto& [k, v] : patch)
          if (k != patch_directive)
            replaced[k] = v;
        return json::value(std::move(replaced));
      }
      return invalid(at(path) + "unknown $patch directive " + json::serialize(*directive));
    }
    if (!target.is_object())
      target = json::object{};
    auto& out = target.get_object();
    if (auto* retain = patch.if_contains(retain_keys_directive)) {
      if (!retain->is_array())
        return invalid(at(path) + "$retainKeys must be a list");
      std::vector<std::string> kept;
      for (const auto& k : retain->get_array())
        if (k.is_string())
          kept.emplace_back(k.get_string());
      std::vector<std::string> dropped;
      for (const auto& [k, v] : out)
        if (std::find(kept.begin(), kept.end(), std::string_view(k)) == kept.end())
          dropped.emplace_back(k);
      for (const auto& k : dropped)
        out.erase(k);
    }
    std::vector<std::pair<std::string, const json::value*>> orders;
    for (const auto& [k, v] : patch) {
      std::string_view key = k;
      if (key == retain_keys_directive)
        continue;
      if (key.starts_with(set_element_order)) {
        orders.emplace_back(std::string(key.substr(set_element_order.size())), &v);
        continue;
      }
      if (key.starts_with(delete_from_primitive_list)) {
        auto field = std::string(key.substr(delete_from_primitive_list.size()));
        if (!v.is_array())
          return invalid(at(child(path, field)) + "$deleteFromPrimitiveList must be a list");
        if (auto* list = out.if_contains(field); list != nullptr && list->is_array()) {
          auto& items = list->get_array();
          for (const auto& gone : v.get_array())
            items.erase(std::remove(items.begin(), items.end(), gone), items.end());
        }
        continue;
      }
      if (key.starts_with("$"))
        return invalid(at(path) + "unknown directive " + std::string(key));
      auto field_path = child(path, key);
      if (v.is_null()) {
        out.erase(key);
        continue;
      }
      auto* current = out.if_contains(key);
      json::value before = current ? std::move(*current) : json::value{};
      result<json::value> merged = json::value{};
      if (v.is_object())
        merged = merge_object(std::move(before), v.get_object(), field_path);
      else if (v.is_array())
        merged = merge_list(std::move(before), v.get_array(), field_path);
      else
        merged = v;
      if (!merged)
        return merged.error();
      if (merged->is_null())
        out.erase(key);
      else
        out[key] = std::move(*merged);
    }
    for (const auto& [field, order] : orders)
      if (auto* list = out.if_contains(field); list && list->is_array() && order->is_array())
        apply_order(list->get_array(), order->get_array(), merge_key_of(child(path, field)));
    return target;
  }

 private:
  static std::string child(const std::string& path, std::string_view field) {
    return path.empty() ? std::string(field) : path + "." + std::string(field);
  }
  static std::string at(const std::string& path) {
    return path.empty() ? std::string("strategic merge patch: ")
                        : "strategic merge patch of " + path + ": ";
  }

  const std::string* merge_key_of(const std::string& path) const {
    for (const auto& k : keys_)
      if (k.path == path)
        return &k.key;
    return nullptr;
  }

  result<json::value> merge_list(json::value target, const json::array& patch,
                                 const std::string& path) {
    const auto* key = merge_key_of(path);
    // A list item {"$patch": "replace"} replaces the list with the patch's other items.
    bool replace = std::any_of(patch.begin(), patch.end(), [](const json::value& item) {
      auto* d = item.is_object() ? item.get_object().if_contains(patch_directive) : nullptr;
      return d != nullptr && *d == "replace";
    });
    if (key == nullptr || replace || !target.is_array()) {
      json::array out;
      for (const auto& item : patch) {
        auto* d = item.is_object() ? item.get_object().if_contains(patch_directive) : nullptr;
        if (d != nullptr)
          continue;  // A directive item: nothing to keep (deleting from an empty list).
        out.push_back(item);
      }
      return json::value(std::move(out));
    }
    auto& out = target.get_array();
    if (key->empty()) {
      // A set of scalars (finalizers): the union, in order.
      for (const auto& item : patch)
        if (std::find(out.begin(), out.end(), item) == out.end())
          out.push_back(item);
      return target;
    }
    auto find_item = [&](const json::value& id) -> json::value* {
      for (auto& item : out)
        if (item.is_object())
          if (auto* v = item.get_object().if_contains(*key); v != nullptr && *v == id)
            return &item;
      return nullptr;
    };
    for (const auto& item : patch) {
      if (!item.is_object())
        return invalid(at(path) + "an item of a list merged by " + *key + " must be an object");
      const auto& fields = item.get_object();
      auto* id = fields.if_contains(*key);
      if (id == nullptr)
        return invalid(at(path) + "an item lacks its merge key " + *key);
      auto* found = find_item(*id);
      auto* directive = fields.if_contains(patch_directive);
      if (directive != nullptr && *directive == "delete") {
        if (found != nullptr)
          out.erase(out.begin() + (found - out.data()));
        continue;
      }
      if (found == nullptr) {
        json::object added;
        for (const auto& [k, v] : fields)
          if (!std::string_view(k).starts_with("$"))
            added[k] = v;
        out.push_back(std::move(added));
        continue;
      }
      auto merged = merge_object(std::move(*found), fields, path + "[]");
      if (!merged)
        return merged.error();
      *found = std::move(*merged);
    }
    return target;
  }

  // Orders `list` as `order` lists its items (by merge key, or by value for scalars); items the
  // order does not name keep their place after the named ones.
  static void apply_order(json::array& list, const json::array& order, const std::string* key) {
    auto rank = [&](const json::value& item) -> std::size_t {
      for (std::size_t i = 0; i < order.size(); ++i) {
        if (key == nullptr || key->empty()) {
          if (order[i] == item)
            return i;
        } else if (item.is_object() && order[i].is_object()) {
          auto* a = item.get_object().if_contains(*key);
          auto* b = order[i].get_object().if_contains(*key);
          if (a && b && *a == *b)
            return i;
        }
      }
      return order.size();
    };
    std::vector<json::value> items(list.begin(), list.end());
    std::stable_sort(items.begin(), items.end(), [&](const json::value& a, const json::value& b) {
      return rank(a) < rank(b);
    });
    list = json::array(items.begin(), items.end());
  }

  const std::vector<strategic_merge_key>& keys_;
};

} // namespace

const std::vector<strategic_merge_key>& strategic_merge_keys(std::string_view kind) {
  // apimachinery's patchMergeKey tags of the fields these kinds carry.
  static const std::vector<strategic_merge_key> meta{
    {"metadata.ownerReferences", "uid"},
    {"metadata.finalizers", ""},  // A set of strings: merged by value (merge_list).
  };
  static const std::vector<strategic_merge_key> pod = [] {
    auto out = meta;
    for (std::string list : {"spec.containers", "spec.initContainers", "spec.ephemeralContainers"}) {
      out.push_back({list, "name"});
      out.push_back({list + "[].ports", "containerPort"});
      out.push_back({list + "[].env", "name"});
      out.push_back({list + "[].volumeMounts", "mountPath"});
      out.push_back({list + "[].volumeDevices", "devicePath"});
      out.push_back({list + "[].resizePolicy", "resourceName"});
    }
    out.push_back({"spec.volumes", "name"});
    out.push_back({"spec.imagePullSecrets", "name"});
    out.push_back({"spec.hostAliases", "ip"});
    out.push_back({"spec.schedulingGates", "name"});
    out.push_back({"spec.resourceClaims", "name"});
    out.push_back({"spec.topologySpreadConstraints", "topologyKey"});
    out.push_back({"status.conditions", "type"});
    return out;
  }();
  static const std::vector<strategic_merge_key> node = [] {
    auto out = meta;
    out.push_back({"status.conditions", "type"});
    out.push_back({"status.addresses", "type"});
    return out;
  }();
  static const std::vector<strategic_merge_key> none;
  if (kind == "Pod")
    return pod;
  if (kind == "Node")
    return node;
  if (kind == "PriorityClass")
    return meta;
  return none;
}

result<json::value> apply_merge_patch(json::value target, const json::value& patch) {
  return merge(std::move(target), patch);
}

result<json::value> apply_json_patch(json::value target, const json::value& patch) {
  if (!patch.is_array())
    return invalid("a JSON patch must be a list of operations");
  json_patcher patcher(target);
  std::size_t n = 0;
  for (const auto& op : patch.get_array()) {
    if (!op.is_object())
      return invalid("JSON patch operation " + std::to_string(n) + ": must be an object");
    if (auto s = patcher.apply(op.get_object(), n); !s.ok())
      return s;
    ++n;
  }
  return target;
}

result<json::value> apply_strategic_merge_patch(json::value target, const json::value& patch,
                                                const std::vector<strategic_merge_key>& keys) {
  if (!patch.is_object())
    return invalid("a strategic merge patch must be a JSON object");
  strategic_merger merger(keys);
  return merger.merge_object(std::move(target), patch.get_object(), "");
}

} // namespace phalanx::api
