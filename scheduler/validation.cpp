#include "scheduler/validation.hpp"

#include "scheduler/sla.hpp"

#include "scheduler/fair_share.hpp"
#include "scheduler/job_plugins.hpp"
#include "scheduler/placeholders.hpp"
#include "scheduler/quantity.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <map>
#include <set>

namespace phalanx::scheduler {

// ---------------------------------------------------------------------------------------------
// Field errors

std::string_view to_string(field_error_type t) noexcept {
  switch (t) {
    case field_error_type::required:
      return "Required value";
    case field_error_type::invalid:
      return "Invalid value";
    case field_error_type::not_supported:
      return "Unsupported value";
    case field_error_type::duplicate:
      return "Duplicate value";
    case field_error_type::too_long:
      return "Too long";
    case field_error_type::too_many:
      return "Too many";
    case field_error_type::forbidden:
      return "Forbidden";
  }
  return "unknown";
}

std::optional<field_error_type> field_error_type_from_string(std::string_view text) noexcept {
  for (int i = 0; i <= int(field_error_type_last); ++i) {
    auto t = field_error_type(i);
    if (to_string(t) == text)
      return t;
  }
  return std::nullopt;
}

std::string field_error::to_string() const {
  std::string out = path;
  out += ": ";
  out += scheduler::to_string(type);
  // Kubernetes never shows the value of these: it is absent, secret or too big.
  bool shows_value = type != field_error_type::required && type != field_error_type::forbidden &&
                     type != field_error_type::too_long;
  if (shows_value && !value.empty()) {
    out += ": ";
    out += value;
  }
  if (!detail.empty()) {
    out += ": ";
    out += detail;
  }
  return out;
}

std::string go_quote(std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\a':
          out += "\\a";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\v':
          out += "\\v";
          break;
        default:
          if (c < 0x20 || c == 0x7f) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 0xf];
          } else {
            out += char(c);
          }
      }
      ++i;
      continue;
    }
    // A multi-byte UTF-8 sequence is copied when well formed (shortest form, no surrogates);
    // anything else is escaped byte by byte.
    std::size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    bool valid = length != 0 && c <= 0xf4 && c >= 0xc2 && i + length <= text.size();
    uint32_t code = valid ? (c & (0x7f >> length)) : 0;
    for (std::size_t k = 1; valid && k < length; ++k) {
      auto next = static_cast<unsigned char>(text[i + k]);
      valid = (next & 0xc0) == 0x80;
      code = (code << 6) | (next & 0x3f);
    }
    if (valid) {
      valid = !(length == 3 && code < 0x800) && !(length == 4 && code < 0x10000) &&
              !(code >= 0xd800 && code <= 0xdfff) && code <= 0x10ffff;
    }
    if (valid) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
      ++i;
    }
  }
  out += '"';
  return out;
}

field_error required_error(std::string path, std::string detail) {
  return {field_error_type::required, std::move(path), {}, std::move(detail)};
}

field_error invalid_error(std::string path, std::string_view value, std::string detail) {
  return {field_error_type::invalid, std::move(path), go_quote(value), std::move(detail)};
}

field_error invalid_error(std::string path, int64_t value, std::string detail) {
  return {field_error_type::invalid, std::move(path), std::to_string(value), std::move(detail)};
}

field_error not_supported_error(std::string path, std::string_view value,
                                std::span<const std::string_view> supported) {
  std::string detail = "supported values: ";
  for (std::size_t i = 0; i < supported.size(); ++i) {
    if (i > 0)
      detail += ", ";
    detail += go_quote(supported[i]);
  }
  return {field_error_type::not_supported, std::move(path), go_quote(value), std::move(detail)};
}

field_error duplicate_error(std::string path, std::string_view value) {
  return {field_error_type::duplicate, std::move(path), go_quote(value), {}};
}

field_error duplicate_error(std::string path, int64_t value) {
  return {field_error_type::duplicate, std::move(path), std::to_string(value), {}};
}

field_error too_long_error(std::string path, std::size_t max_bytes) {
  return {field_error_type::too_long,
          std::move(path),
          {},
          "must have at most " + std::to_string(max_bytes) + " bytes"};
}

field_error too_many_error(std::string path, int64_t actual, int64_t max) {
  return {field_error_type::too_many, std::move(path), std::to_string(actual),
          "must have at most " + std::to_string(max) + " items"};
}

field_error forbidden_error(std::string path, std::string detail) {
  return {field_error_type::forbidden, std::move(path), {}, std::move(detail)};
}

status to_status(std::string_view kind, std::string_view name, const field_errors& errors) {
  if (errors.empty())
    return {};
  std::string message(kind);
  message += ' ';
  message += go_quote(name);
  message += " is invalid: ";
  if (errors.size() > 1)
    message += '[';
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (i > 0)
      message += ", ";
    message += errors[i].to_string();
  }
  if (errors.size() > 1)
    message += ']';
  return {errc::invalid_argument, std::move(message)};
}

// ---------------------------------------------------------------------------------------------
// String rules

namespace {

bool is_lower_alnum(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool is_alnum(char c) noexcept {
  return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool is_label_shape(std::string_view v) noexcept {
  if (v.empty() || !is_lower_alnum(v.front()) || !is_lower_alnum(v.back()))
    return false;
  return std::all_of(v.begin(), v.end(), [](char c) { return is_lower_alnum(c) || c == '-'; });
}

// Labels of the label shape joined by single dots.
bool is_subdomain_shape(std::string_view v) noexcept {
  if (v.empty())
    return false;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = v.find('.', start);
    std::string_view part = v.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (!is_label_shape(part))
      return false;
    if (dot == std::string_view::npos)
      return true;
    start = dot + 1;
  }
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool is_qualified_part_shape(std::string_view v) noexcept {
  if (v.empty() || !is_alnum(v.front()) || !is_alnum(v.back()))
    return false;
  return std::all_of(v.begin(), v.end(),
                     [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

std::string too_long_rule(std::size_t max) {
  return "must be no more than " + std::to_string(max) + " characters";
}

constexpr std::string_view label_rule =
    "must be a lowercase RFC 1123 label: lowercase letters, digits and '-' only, starting and "
    "ending with a letter or digit (e.g. 'my-name' or '123-abc')";
constexpr std::string_view subdomain_rule =
    "must be a lowercase RFC 1123 subdomain: one or more labels joined by '.', each of lowercase "
    "letters, digits and '-', starting and ending with a letter or digit (e.g. 'example.com')";
constexpr std::string_view qualified_part_rule =
    "must be letters, digits, '-', '_' or '.', starting and ending with a letter or digit (e.g. "
    "'MyName', 'my.name' or 'app_1')";

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0)
      out += "; ";
    out += parts[i];
  }
  return out;
}

} // namespace

std::vector<std::string> is_dns1123_label(std::string_view value) {
  std::vector<std::string> out;
  if (value.size() > dns1123_label_max_length)
    out.push_back(too_long_rule(dns1123_label_max_length));
  if (!is_label_shape(value))
    out.emplace_back(label_rule);
  return out;
}

std::vector<std::string> is_dns1123_subdomain(std::string_view value) {
  std::vector<std::string> out;
  if (value.size() > dns1123_subdomain_max_length)
    out.push_back(too_long_rule(dns1123_subdomain_max_length));
  if (!is_subdomain_shape(value))
    out.emplace_back(subdomain_rule);
  return out;
}

std::vector<std::string> is_qualified_name(std::string_view value) {
  std::vector<std::string> out;
  std::string_view name = value;
  std::size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      out.emplace_back("must be a name with an optional DNS subdomain prefix and one '/' (e.g. "
                       "'MyName' or 'example.com/MyName')");
      return out;
    }
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      out.emplace_back("prefix part must not be empty when '/' is present");
    } else {
      for (auto& rule : is_dns1123_subdomain(prefix))
        out.push_back("prefix part " + rule);
    }
  }
  if (name.empty()) {
    out.emplace_back("name part must not be empty");
    return out;
  }
  if (name.size() > qualified_name_max_length)
    out.push_back("name part " + too_long_rule(qualified_name_max_length));
  if (!is_qualified_part_shape(name))
    out.push_back("name part " + std::string(qualified_part_rule));
  return out;
}

std::vector<std::string> is_label_value(std::string_view value) {
  std::vector<std::string> out;
  if (value.size() > label_value_max_length)
    out.push_back(too_long_rule(label_value_max_length));
  if (!value.empty() && !is_qualified_part_shape(value))
    out.push_back("a label value must be empty or " + std::string(qualified_part_rule));
  return out;
}

std::vector<std::string> is_resource_name(std::string_view value) {
  std::vector<std::string> out;
  if (is_standard_resource(value))
    return out;
  constexpr std::string_view hugepages = "hugepages-";
  if (value.starts_with(hugepages)) {
    auto size = parse_quantity(value.substr(hugepages.size()), quantity_unit::whole);
    if (!size || *size <= 0)
      out.emplace_back("a hugepages resource must name a positive page size as a quantity (e.g. "
                       "hugepages-2Mi or hugepages-1Gi)");
    return out;
  }
  std::size_t slash = value.find('/');
  if (slash == std::string_view::npos) {
    out.emplace_back("must be a standard resource (cpu, memory, ephemeral-storage, pods, "
                     "hugepages-<size>) or an extended resource with a domain prefix (e.g. "
                     "nvidia.com/gpu)");
    return out;
  }
  out = is_qualified_name(value);
  std::string_view prefix = value.substr(0, slash);
  if (prefix == "kubernetes.io" || prefix.ends_with(".kubernetes.io"))
    out.emplace_back("the kubernetes.io domain is reserved for Kubernetes' own resources");
  if (value.starts_with("requests."))
    out.emplace_back("must not start with 'requests.', which resource quotas reserve");
  // Kubernetes requires "requests.<name>" to be a valid quota key, which bounds the prefix.
  constexpr std::size_t quota_prefix = std::string_view("requests.").size();
  if (prefix.size() + quota_prefix > dns1123_subdomain_max_length)
    out.push_back("prefix part " + too_long_rule(dns1123_subdomain_max_length - quota_prefix) +
                  " so that 'requests.<name>' stays a valid quota key");
  return out;
}

// ---------------------------------------------------------------------------------------------
// Building blocks

namespace {

std::string child(std::string_view base, std::string_view name) {
  std::string out(base);
  if (!out.empty())
    out += '.';
  out += name;
  return out;
}

std::string keyed(std::string_view base, std::string_view key) {
  std::string out(base);
  out += '[';
  out += key;
  out += ']';
  return out;
}

std::string indexed(std::string_view base, std::size_t i) {
  return keyed(base, std::to_string(i));
}

template <class Enum>
bool in_range(Enum value, Enum last) noexcept {
  auto v = static_cast<long long>(value);
  return v >= 0 && v <= static_cast<long long>(last);
}

// Appends an Invalid error with every rule `rules` lists, when it lists any.
void check(std::vector<std::string> rules, std::string path, std::string_view value,
           field_errors& out) {
  if (!rules.empty())
    out.push_back(invalid_error(std::move(path), value, join(rules)));
}

void check_required(std::string_view value, std::string path, std::string_view what,
                    std::vector<std::string> (*rule)(std::string_view), field_errors& out) {
  if (value.empty()) {
    out.push_back(required_error(std::move(path), std::string(what) + " is required"));
    return;
  }
  check(rule(value), std::move(path), value, out);
}

void check_optional(std::string_view value, std::string path,
                    std::vector<std::string> (*rule)(std::string_view), field_errors& out) {
  if (!value.empty())
    check(rule(value), std::move(path), value, out);
}

void check_amount(std::string_view name, int64_t amount, const std::string& path,
                  field_errors& out) {
  check(is_resource_name(name), path, name, out);
  if (amount < 0) {
    out.push_back(invalid_error(path, format_resource_amount(name, amount),
                                "must be greater than or equal to 0"));
  } else if (amount > max_resource_amount) {
    out.push_back(invalid_error(path, format_resource_amount(name, amount),
                                "must be less than or equal to " +
                                    format_resource_amount(name, max_resource_amount) +
                                    " (2^53, the largest amount accepted)"));
  }
}

void check_non_negative(int64_t value, std::string path, field_errors& out) {
  if (value < 0)
    out.push_back(invalid_error(std::move(path), value, "must be greater than or equal to 0"));
}

enum class namespace_rule { namespaced, cluster_scoped };

void validate_meta(const object_meta& meta, namespace_rule ns,
                   std::vector<std::string> (*name_rule)(std::string_view), field_errors& out) {
  check_required(meta.name, "metadata.name", "name", name_rule, out);
  if (ns == namespace_rule::namespaced) {
    check_required(meta.namespace_name, "metadata.namespace", "namespace", is_dns1123_label, out);
  } else if (!meta.namespace_name.empty()) {
    out.push_back(forbidden_error("metadata.namespace", "not allowed on this type: it is "
                                                        "cluster-scoped"));
  }
  validate_labels(meta.labels, "metadata.labels", out);
  validate_annotations(meta.annotations, "metadata.annotations", out);
}

constexpr std::string_view node_selector_terms_path =
    "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
constexpr std::string_view preferred_node_affinity_path =
    "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution";

void validate_requirement(const node_selector_requirement& r, const std::string& path,
                          bool is_field, field_errors& out) {
  auto op_path = child(path, "operator");
  auto values_path = child(path, "values");
  if (!in_range(r.op, selector_operator_last)) {
    out.push_back(invalid_error(op_path, to_string(r.op), "not a known operator"));
    return;
  }
  if (is_field) {
    // Kubernetes supports one field, with In or NotIn and a single value.
    static constexpr std::array<std::string_view, 1> fields{"metadata.name"};
    if (r.key != fields[0])
      out.push_back(not_supported_error(child(path, "key"), r.key, fields));
    if (r.op != selector_operator::in && r.op != selector_operator::not_in) {
      static constexpr std::array<std::string_view, 2> ops{"In", "NotIn"};
      out.push_back(not_supported_error(op_path, to_string(r.op), ops));
    } else if (r.values.size() != 1) {
      out.push_back(required_error(values_path, "a field requirement needs exactly one value"));
    }
    return;
  }
  check(is_qualified_name(r.key), child(path, "key"), r.key, out);
  switch (r.op) {
    case selector_operator::in:
    case selector_operator::not_in:
      if (r.values.empty())
        out.push_back(required_error(values_path, "must be given when the operator is 'In' or "
                                                  "'NotIn'"));
      break;
    case selector_operator::exists:
    case selector_operator::does_not_exist:
      if (!r.values.empty())
        out.push_back(forbidden_error(values_path, "may not be given when the operator is "
                                                   "'Exists' or 'DoesNotExist'"));
      break;
    case selector_operator::gt:
    case selector_operator::lt:
      if (r.values.size() != 1) {
        out.push_back(required_error(values_path, "needs exactly one value when the operator is "
                                                  "'Gt' or 'Lt'"));
      } else {
        const std::string& v = r.values[0];
        int64_t parsed = 0;
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
        if (v.empty() || ec != std::errc() || end != v.data() + v.size())
          out.push_back(invalid_error(indexed(values_path, 0), v,
                                      "must be an integer when the operator is 'Gt' or 'Lt'"));
      }
      break;
  }
}

// A node selector term at `path`, required or preferred: each requirement by its rules.
void validate_node_selector_term(const node_selector_term& term, const std::string& path,
                                 field_errors& out) {
  for (std::size_t i = 0; i < term.match_expressions.size(); ++i)
    validate_requirement(term.match_expressions[i], indexed(child(path, "matchExpressions"), i),
                         false, out);
  for (std::size_t i = 0; i < term.match_fields.size(); ++i)
    validate_requirement(term.match_fields[i], indexed(child(path, "matchFields"), i), true, out);
}

// Kubernetes' label selector rules (apimachinery's ValidateLabelSelector), with its messages: a
// node selector's Gt and Lt are not label selector operators.
void validate_label_selector(const label_selector& s, const std::string& path, field_errors& out) {
  validate_labels(s.match_labels, child(path, "matchLabels"), out);
  for (std::size_t i = 0; i < s.match_expressions.size(); ++i) {
    const auto& r = s.match_expressions[i];
    auto base = indexed(child(path, "matchExpressions"), i);
    auto values_path = child(base, "values");
    switch (r.op) {
      case selector_operator::in:
      case selector_operator::not_in:
        if (r.values.empty())
          out.push_back(
              required_error(values_path, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case selector_operator::exists:
      case selector_operator::does_not_exist:
        if (!r.values.empty())
          out.push_back(forbidden_error(
              values_path, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:  // Gt, Lt.
        out.push_back(invalid_error(child(base, "operator"), to_string(r.op),
                                    "not a valid selector operator"));
    }
    check(is_qualified_name(r.key), child(base, "key"), r.key, out);
    for (std::size_t k = 0; k < r.values.size(); ++k)
      check(is_label_value(r.values[k]), indexed(values_path, k), r.values[k], out);
  }
}

// Kubernetes' validatePodAffinityTerm, with two differences so that each error names its JSON
// field once: a bad namespace is reported at "namespaces[i]" (Kubernetes says "namespace"), and
// an empty topologyKey only as required (Kubernetes adds the qualified-name rules the empty text
// breaks).
void validate_pod_affinity_term(const pod_affinity_term& term, const std::string& path,
                                field_errors& out) {
  if (term.selector)
    validate_label_selector(*term.selector, child(path, "labelSelector"), out);
  if (term.namespace_selector)
    validate_label_selector(*term.namespace_selector, child(path, "namespaceSelector"), out);
  for (std::size_t i = 0; i < term.namespaces.size(); ++i)
    check(is_dns1123_label(term.namespaces[i]), indexed(child(path, "namespaces"), i),
          term.namespaces[i], out);
  if (term.topology_key.empty())
    out.push_back(required_error(child(path, "topologyKey"), "can not be empty"));
  else
    check(is_qualified_name(term.topology_key), child(path, "topologyKey"), term.topology_key,
          out);
}

// podAffinity or podAntiAffinity at `path` ("spec.affinity.podAffinity").
void validate_pod_affinity(const std::vector<pod_affinity_term>& required,
                           const std::vector<weighted_pod_affinity_term>& preferred,
                           const std::string& path, field_errors& out) {
  auto required_path = child(path, "requiredDuringSchedulingIgnoredDuringExecution");
  for (std::size_t i = 0; i < required.size(); ++i)
    validate_pod_affinity_term(required[i], indexed(required_path, i), out);
  auto preferred_path = child(path, "preferredDuringSchedulingIgnoredDuringExecution");
  for (std::size_t i = 0; i < preferred.size(); ++i) {
    auto base = indexed(preferred_path, i);
    if (preferred[i].weight < 1 || preferred[i].weight > 100)
      out.push_back(
          invalid_error(child(base, "weight"), preferred[i].weight, "must be in the range 1-100"));
    validate_pod_affinity_term(preferred[i].term, child(base, "podAffinityTerm"), out);
  }
}

// matchLabelKeys of a topology spread constraint, by Kubernetes' rules and messages: only with a
// labelSelector, each key a qualified name and not in the selector (its matchLabels or its
// matchExpressions). The keys are not merged into the selector here, nor anywhere in the model:
// the scheduler adds the pod's values when it evaluates the constraint, so the selector is
// checked as the user wrote it. Beyond Kubernetes, a key given twice is a Duplicate value: the
// apiserver of 1.34 and later refuses it too once it has merged the key in twice ("exists in
// both"), and earlier ones keep a repeat that means nothing.
void validate_match_label_keys(const topology_spread_constraint& c, const std::string& path,
                               field_errors& out) {
  if (c.match_label_keys.empty())
    return;
  if (!c.selector)
    out.push_back(forbidden_error(path, "must not be specified when labelSelector is not set"));
  for (std::size_t i = 0; i < c.match_label_keys.size(); ++i) {
    const auto& key = c.match_label_keys[i];
    auto key_path = indexed(path, i);
    check(is_qualified_name(key), key_path, key, out);
    const bool in_selector =
        c.selector &&
        (c.selector->match_labels.contains(key) ||
         std::any_of(c.selector->match_expressions.begin(), c.selector->match_expressions.end(),
                     [&](const node_selector_requirement& r) { return r.key == key; }));
    if (in_selector)
      out.push_back(
          invalid_error(key_path, key, "exists in both matchLabelKeys and labelSelector"));
    else if (std::find(c.match_label_keys.begin(), c.match_label_keys.begin() + std::ptrdiff_t(i),
                       key) != c.match_label_keys.begin() + std::ptrdiff_t(i))
      out.push_back(duplicate_error(key_path, key));
  }
}

// Kubernetes' validateTopologySpreadConstraints, in its order and with its messages and paths,
// "{topologyKey, whenUnsatisfiable}" for a repeated kind of constraint included. As in
// Kubernetes, topologyKey must only be non-empty, not a qualified name: a key no node label can
// have only makes no domain, and refusing it would leave out of the cache pods an apiserver
// accepted (Kubernetes mode validates what it watches).
// whenUnsatisfiable and the node inclusion policies are flags in the model; their spellings
// are checked where they are read (api/wire.cpp).
void validate_topology_spread(const std::vector<topology_spread_constraint>& constraints,
                              const std::string& path, field_errors& out) {
  auto action = [](const topology_spread_constraint& c) -> std::string_view {
    return c.do_not_schedule ? "DoNotSchedule" : "ScheduleAnyway";
  };
  for (std::size_t i = 0; i < constraints.size(); ++i) {
    const auto& c = constraints[i];
    auto base = indexed(path, i);
    if (c.max_skew <= 0)
      out.push_back(invalid_error(child(base, "maxSkew"), c.max_skew, "must be greater than zero"));
    if (c.topology_key.empty())
      out.push_back(required_error(child(base, "topologyKey"), "can not be empty"));
    // Kubernetes reports a repeated kind once, at the first constraint that a later one repeats.
    for (std::size_t j = i + 1; j < constraints.size(); ++j) {
      if (constraints[j].topology_key == c.topology_key &&
          constraints[j].do_not_schedule == c.do_not_schedule) {
        out.push_back(duplicate_error(child(base, "{topologyKey, whenUnsatisfiable}"),
                                      "{" + c.topology_key + ", " + std::string(action(c)) + "}"));
        break;
      }
    }
    if (c.min_domains) {
      auto min_domains_path = child(base, "minDomains");
      if (*c.min_domains <= 0)
        out.push_back(invalid_error(min_domains_path, *c.min_domains, "must be greater than zero"));
      if (!c.do_not_schedule)
        out.push_back(invalid_error(
            min_domains_path, *c.min_domains,
            "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not " +
                std::string(action(c))));
    }
    validate_match_label_keys(c, child(base, "matchLabelKeys"), out);
    if (c.selector)
      validate_label_selector(*c.selector, child(base, "labelSelector"), out);
  }
}

void validate_template(const pod& tmpl, const std::string& base, field_errors& out) {
  auto meta = child(base, "metadata");
  validate_labels(tmpl.meta.labels, child(meta, "labels"), out);
  validate_annotations(tmpl.meta.annotations, child(meta, "annotations"), out);
  auto spec = child(base, "spec");
  validate_resources(tmpl.requests, child(spec, "requests"), out);
  check_optional(tmpl.priority_class_name, child(spec, "priorityClassName"), is_dns1123_subdomain,
                 out);
  check_optional(tmpl.scheduler_name, child(spec, "schedulerName"), is_dns1123_subdomain, out);
  validate_placement(tmpl.placement(), spec, out);
}

// What Volcano's admission webhook lets users name (its policyEventMap and policyActionMap, the
// entries it allows for external use); the rest are the controller's own.
constexpr std::array<std::string_view, 8> policy_events{
    "*", "PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted", "TaskFailed",
    "JobUpdated"};
constexpr std::array<std::string_view, 7> policy_actions{
    "AbortJob",     "RestartJob",  "RestartTask", "RestartPod",
    "TerminateJob", "CompleteJob", "ResumeJob"};

// The plugins Volcano's job controller registers (its webhook refuses any other name: "unable
// to find job plugin").
constexpr std::array<std::string_view, 8> job_plugins{
    "env", "svc", "ssh", "tensorflow", "mpi", "pytorch", "hcclrank", "ray"};

// Whether the tasks' dependsOn form a cycle (Kahn's algorithm: a cycle leaves tasks that never
// reach in-degree zero). Precondition: every name in dependsOn is in `task_index`.
bool has_dependency_cycle(const job& j, const std::map<std::string_view, std::size_t>& task_index) {
  std::vector<int> in_degree(j.tasks.size(), 0);
  std::vector<std::vector<std::size_t>> dependents(j.tasks.size());
  for (std::size_t t = 0; t < j.tasks.size(); ++t)
    for (const auto& name : j.tasks[t].depends_on) {
      dependents[task_index.at(name)].push_back(t);
      ++in_degree[t];
    }
  std::vector<std::size_t> ready;
  for (std::size_t t = 0; t < j.tasks.size(); ++t)
    if (in_degree[t] == 0)
      ready.push_back(t);
  std::size_t sorted = 0;
  while (!ready.empty()) {
    auto t = ready.back();
    ready.pop_back();
    ++sorted;
    for (auto d : dependents[t])
      if (--in_degree[d] == 0)
        ready.push_back(d);
  }
  return sorted < j.tasks.size();
}

bool contains(std::span<const std::string_view> list, std::string_view v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

void validate_policies(const std::vector<lifecycle_policy>& policies, const std::string& path,
                       field_errors& out) {
  std::set<std::string> events_seen;
  std::set<int32_t> codes_seen;
  for (std::size_t i = 0; i < policies.size(); ++i) {
    const auto& p = policies[i];
    auto base = indexed(path, i);
    bool has_event = !p.event.empty() || !p.events.empty();
    if (has_event && p.exit_code)
      out.push_back(forbidden_error(child(base, "exitCode"),
                                    "may not be given together with event or events"));
    if (!has_event && !p.exit_code)
      out.push_back(required_error(base, "either event, events or exitCode must be given"));
    if (p.action.empty())
      out.push_back(required_error(child(base, "action"), "action is required"));
    else if (!contains(policy_actions, p.action))
      out.push_back(not_supported_error(child(base, "action"), p.action, policy_actions));

    // One policy may list an event in both `event` and `events`; that is not a duplicate.
    std::set<std::string> in_this_policy;
    auto check_event = [&](const std::string& ev, std::string ev_path) {
      if (!contains(policy_events, ev)) {
        out.push_back(not_supported_error(std::move(ev_path), ev, policy_events));
        return;
      }
      if (!in_this_policy.insert(ev).second)
        return;
      if (!events_seen.insert(ev).second) {
        auto e = duplicate_error(std::move(ev_path), ev);
        e.detail = "an event may be handled by only one policy";
        out.push_back(std::move(e));
      }
    };
    if (!p.event.empty())
      check_event(p.event, child(base, "event"));
    for (std::size_t k = 0; k < p.events.size(); ++k)
      check_event(p.events[k], indexed(child(base, "events"), k));

    if (p.exit_code) {
      auto code_path = child(base, "exitCode");
      if (*p.exit_code == 0)
        out.push_back(invalid_error(code_path, int64_t{0}, "must not be 0, which means success"));
      else if (!codes_seen.insert(*p.exit_code).second)
        out.push_back(duplicate_error(code_path, int64_t{*p.exit_code}));
    }
    if (p.timeout && p.timeout->count() < 0)
      out.push_back(invalid_error(child(base, "timeout"), format_duration_ns(p.timeout->count()),
                                  "must be greater than or equal to 0"));
  }
  if (events_seen.count("*") != 0 && events_seen.size() > 1)
    out.push_back(invalid_error(path, "*", "when \"*\" is handled no other event may be listed"));
}

} // namespace

void validate_labels(const label_set& labels, std::string_view path, field_errors& out) {
  for (const auto& [key, value] : labels.entries()) {
    check(is_qualified_name(key), std::string(path), key, out);
    check(is_label_value(value), std::string(path), value, out);
  }
}

void validate_annotations(const label_set& annotations, std::string_view path, field_errors& out) {
  std::size_t total = 0;
  for (const auto& [key, value] : annotations.entries()) {
    check(is_qualified_name(key), std::string(path), key, out);
    total += key.size() + value.size();
  }
  if (total > annotations_max_total_bytes)
    out.push_back(too_long_error(std::string(path), annotations_max_total_bytes));
}

void validate_resources(const resources& amounts, std::string_view path, field_errors& out) {
  amounts.for_each([&](std::string_view name, int64_t amount) {
    check_amount(name, amount, keyed(path, name), out);
  });
}

void validate_resource_limit(const resource_limit& limit, std::string_view path,
                             field_errors& out) {
  limit.for_each(
      [&](std::string_view name, int64_t cap) { check_amount(name, cap, keyed(path, name), out); });
}

void validate_placement(const placement_constraints& c, std::string_view spec_path,
                        field_errors& out) {
  validate_labels(c.node_selector, child(spec_path, "nodeSelector"), out);

  auto terms_path = child(spec_path, node_selector_terms_path);
  for (std::size_t t = 0; t < c.required_node_affinity.size(); ++t)
    validate_node_selector_term(c.required_node_affinity[t], indexed(terms_path, t), out);
  // kube-apiserver's validatePreferredSchedulingTerms: the weight, then the term as a required
  // one is checked.
  auto preferred_path = child(spec_path, preferred_node_affinity_path);
  for (std::size_t t = 0; t < c.preferred_node_affinity.size(); ++t) {
    const auto& preferred = c.preferred_node_affinity[t];
    auto base = indexed(preferred_path, t);
    if (preferred.weight < 1 || preferred.weight > 100)
      out.push_back(
          invalid_error(child(base, "weight"), preferred.weight, "must be in the range 1-100"));
    validate_node_selector_term(preferred.preference, child(base, "preference"), out);
  }

  validate_pod_affinity(c.required_pod_affinity, c.preferred_pod_affinity,
                        child(spec_path, "affinity.podAffinity"), out);
  validate_pod_affinity(c.required_pod_anti_affinity, c.preferred_pod_anti_affinity,
                        child(spec_path, "affinity.podAntiAffinity"), out);

  auto tolerations_path = child(spec_path, "tolerations");
  for (std::size_t i = 0; i < c.tolerations.size(); ++i) {
    const auto& tol = c.tolerations[i];
    auto base = indexed(tolerations_path, i);
    if (!in_range(tol.op, toleration_operator_last)) {
      out.push_back(
          invalid_error(child(base, "operator"), to_string(tol.op), "not a known operator"));
      continue;
    }
    if (tol.key.empty()) {
      if (tol.op != toleration_operator::exists)
        out.push_back(invalid_error(child(base, "operator"), to_string(tol.op),
                                    "must be Exists when the key is empty, which tolerates every "
                                    "taint"));
    } else {
      check(is_qualified_name(tol.key), child(base, "key"), tol.key, out);
    }
    if (tol.op == toleration_operator::exists) {
      if (!tol.value.empty())
        out.push_back(invalid_error(child(base, "value"), tol.value,
                                    "must be empty when the operator is Exists"));
    } else {
      check(is_label_value(tol.value), child(base, "value"), tol.value, out);
    }
    if (tol.effect && !in_range(*tol.effect, taint_effect_last))
      out.push_back(
          invalid_error(child(base, "effect"), to_string(*tol.effect), "not a known taint effect"));
    if (tol.toleration_seconds && tol.effect != taint_effect::no_execute)
      out.push_back(invalid_error(child(base, "effect"),
                                  tol.effect ? to_string(*tol.effect) : std::string_view(),
                                  "must be NoExecute when tolerationSeconds is set"));
  }

  validate_topology_spread(c.topology_spread, child(spec_path, "topologySpreadConstraints"), out);
}

// ---------------------------------------------------------------------------------------------
// Objects

field_errors validate(const node& n) {
  field_errors out;
  validate_meta(n.meta, namespace_rule::cluster_scoped, is_dns1123_subdomain, out);
  validate_resources(n.allocatable, "status.allocatable", out);
  std::set<std::pair<std::string, int>> seen;
  for (std::size_t i = 0; i < n.taints.size(); ++i) {
    const auto& t = n.taints[i];
    auto base = indexed("spec.taints", i);
    check_required(t.key, child(base, "key"), "key", is_qualified_name, out);
    check(is_label_value(t.value), child(base, "value"), t.value, out);
    if (!in_range(t.effect, taint_effect_last)) {
      static constexpr std::array<std::string_view, 3> effects{"NoSchedule", "PreferNoSchedule",
                                                               "NoExecute"};
      out.push_back(not_supported_error(child(base, "effect"), to_string(t.effect), effects));
      continue;
    }
    if (!seen.insert({t.key, int(t.effect)}).second) {
      auto e = duplicate_error(base, t.key + ":" + std::string(to_string(t.effect)));
      e.detail = "taints must be unique by key and effect";
      out.push_back(std::move(e));
    }
  }
  return out;
}

field_errors validate(const pod& p) {
  field_errors out;
  validate_meta(p.meta, namespace_rule::namespaced, is_dns1123_subdomain, out);
  check_optional(p.group, keyed("metadata.annotations", pod_group_annotation), is_dns1123_subdomain,
                 out);
  check_optional(p.role, keyed("metadata.annotations", task_spec_key), is_dns1123_label, out);
  validate_resources(p.requests, "spec.requests", out);
  if (p.requests.pods != 1)
    out.push_back(invalid_error(keyed("spec.requests", pods_resource), p.requests.pods,
                                "a pod occupies exactly one pod slot"));
  check_optional(p.priority_class_name, "spec.priorityClassName", is_dns1123_subdomain, out);
  check_optional(p.scheduler_name, "spec.schedulerName", is_dns1123_subdomain, out);
  check_optional(p.node_name, "spec.nodeName", is_dns1123_subdomain, out);
  validate_placement(p.placement(), "spec", out);
  if (!in_range(p.phase, pod_phase_last))
    out.push_back(invalid_error("status.phase", to_string(p.phase), "not a known pod phase"));
  return out;
}

namespace {

// The sla plugin's annotation (scheduler/sla.hpp) on a PodGroup, or on a job whose PodGroup
// takes it: a Go duration above zero.
void validate_sla_waiting_time(const object_meta& meta, field_errors& out) {
  auto sla = read_sla_waiting_time(meta);
  if (!sla)
    out.push_back(invalid_error(keyed("metadata.annotations", sla_waiting_time_key),
                                *meta.annotations.find(sla_waiting_time_key),
                                sla.error().message()));
}

// The placeholders' annotation (scheduler/placeholders.hpp), on a PodGroup or on a job whose
// PodGroup takes it.
void validate_reserve_missing_members(const object_meta& meta, field_errors& out) {
  auto v = meta.annotations.find(reserve_missing_members_key);
  if (v && *v != "true" && *v != "false")
    out.push_back(invalid_error(keyed("metadata.annotations", reserve_missing_members_key), *v,
                                "must be \"true\" or \"false\""));
}

} // namespace

field_errors validate(const pod_group& group, std::optional<int32_t> declared_pods) {
  field_errors out;
  validate_meta(group.meta, namespace_rule::namespaced, is_dns1123_subdomain, out);
  validate_sla_waiting_time(group.meta, out);
  validate_reserve_missing_members(group.meta, out);

  if (group.min_member < 0)
    out.push_back(
        invalid_error("spec.minMember", group.min_member, "must be greater than or equal to 0"));
  else if (group.min_member > max_pods_per_job)
    out.push_back(invalid_error("spec.minMember", group.min_member,
                                "must be less than or equal to " +
                                    std::to_string(max_pods_per_job) +
                                    " (the most pods in one gang)"));
  else if (declared_pods && group.min_member > *declared_pods)
    out.push_back(invalid_error("spec.minMember", group.min_member,
                                "must be less than or equal to the number of pods in the group (" +
                                    std::to_string(*declared_pods) + ")"));

  const auto& roles = group.min_task_member;
  std::set<std::string_view> seen;
  int64_t sum = 0;
  for (std::size_t i = 0; i < roles.size(); ++i) {
    const auto& r = roles[i];
    auto path = keyed("spec.minTaskMember", r.role);
    if (r.role.empty())
      out.push_back(required_error(path, "a role name is required"));
    else
      check(is_dns1123_label(r.role), path, r.role, out);
    if (!seen.insert(r.role).second)
      out.push_back(duplicate_error(path, r.role));
    if (r.min < 0) {
      out.push_back(invalid_error(path, r.min, "must be greater than or equal to 0"));
    } else if (r.min > max_pods_per_job) {
      out.push_back(invalid_error(path, r.min,
                                  "must be less than or equal to " +
                                      std::to_string(max_pods_per_job) +
                                      " (the most pods in one gang)"));
    } else {
      sum += r.min;
      if (declared_pods && r.min > *declared_pods)
        out.push_back(invalid_error(path, r.min,
                                    "must be less than or equal to the number of pods in the "
                                    "group (" +
                                        std::to_string(*declared_pods) + ")"));
    }
  }
  if (!std::is_sorted(roles.begin(), roles.end(),
                      [](const role_minimum& a, const role_minimum& b) { return a.role < b.role; }))
    out.push_back({field_error_type::invalid,
                   "spec.minTaskMember",
                   {},
                   "must be sorted by role (the model keeps it sorted for lookups)"});
  if (declared_pods && roles.size() > 1 && sum > *declared_pods)
    out.push_back(invalid_error("spec.minTaskMember", sum,
                                "the role minimums add up to more than the " +
                                    std::to_string(*declared_pods) + " pods in the group"));

  validate_resources(group.min_resources, "spec.minResources", out);
  check_required(group.queue, "spec.queue", "queue", is_dns1123_subdomain, out);
  check_optional(group.priority_class_name, "spec.priorityClassName", is_dns1123_subdomain, out);
  return out;
}

field_errors validate(const pod_group& group, std::span<const pod* const> declared_pods) {
  auto count = static_cast<int32_t>(std::min<std::size_t>(
      declared_pods.size(), std::size_t(std::numeric_limits<int32_t>::max())));
  field_errors out = validate(group, std::optional<int32_t>(count));
  std::map<std::string_view, int64_t> per_role;
  for (const pod* p : declared_pods)
    if (p)
      ++per_role[p->role];
  for (const auto& r : group.min_task_member) {
    if (r.role.empty())
      continue; // Already reported.
    auto path = keyed("spec.minTaskMember", r.role);
    auto it = per_role.find(r.role);
    if (it == per_role.end()) {
      std::string known;
      for (const auto& [role, n] : per_role) {
        if (role.empty())
          continue;
        known += known.empty() ? "" : ", ";
        known += go_quote(role);
      }
      out.push_back(invalid_error(
          path, r.role,
          "no pod of the group has this role" +
              (known.empty() ? std::string(" (no pod has a role)") : "; roles present: " + known)));
    } else if (r.min > it->second) {
      out.push_back(invalid_error(
          path, r.min, "only " + std::to_string(it->second) + " pods of the group have this role"));
    }
  }
  return out;
}

field_errors validate(const queue& q) {
  field_errors out;
  validate_meta(q.meta, namespace_rule::cluster_scoped, is_dns1123_subdomain, out);
  if (q.weight < min_queue_weight || q.weight > max_queue_weight)
    out.push_back(invalid_error("spec.weight", q.weight,
                                "queue weight must be a positive integer no greater than " +
                                    std::to_string(max_queue_weight)));
  validate_resource_limit(q.capability, "spec.capability", out);
  validate_resources(q.guarantee, "spec.guarantee.resource", out);
  validate_resource_limit(q.deserved, "spec.deserved", out);

  // guarantee <= deserved <= capability, per dimension where both sides are set.
  auto bound = [&](std::string_view name, int64_t amount, std::string_view amount_path,
                   std::string_view limit_path, std::optional<int64_t> limit) {
    if (!limit || amount <= *limit)
      return;
    out.push_back(invalid_error(keyed(amount_path, name), format_resource_amount(name, amount),
                                "must be less than or equal to " + keyed(limit_path, name) + " (" +
                                    format_resource_amount(name, *limit) + ")"));
  };
  q.guarantee.for_each([&](std::string_view name, int64_t amount) {
    bound(name, amount, "spec.guarantee.resource", "spec.capability", q.capability.get(name));
    bound(name, amount, "spec.guarantee.resource", "spec.deserved", q.deserved.get(name));
  });
  q.deserved.for_each([&](std::string_view name, int64_t amount) {
    bound(name, amount, "spec.deserved", "spec.capability", q.capability.get(name));
  });

  static constexpr std::array<std::string_view, 2> states{"Open", "Closed"};
  if (q.state != queue_state::open && q.state != queue_state::closed)
    out.push_back(not_supported_error("spec.state", to_string(q.state), states));
  if (!q.parent.empty()) {
    check(is_dns1123_subdomain(q.parent), "spec.parent", q.parent, out);
    if (q.parent == q.meta.name)
      out.push_back(invalid_error("spec.parent", q.parent, "a queue cannot be its own parent"));
  }
  return out;
}

field_errors validate(const priority_class& c) {
  field_errors out;
  validate_meta(c.meta, namespace_rule::cluster_scoped, is_dns1123_subdomain, out);
  const std::string_view name = c.meta.name.view();
  if (name.starts_with(system_priority_class_prefix)) {
    // The apiserver's rule: the prefix is for its own classes, with their own values.
    const auto* system = find_system_priority_class(name);
    std::string why = !system ? std::string(name) + " is not a known system priority class"
                      : c.value != system->value
                          ? "value of " + std::string(name) + " PriorityClass must be " +
                                std::to_string(system->value)
                      : c.global_default
                          ? "globalDefault of " + std::string(name) + " PriorityClass must be false"
                          : std::string();
    if (!why.empty())
      out.push_back(forbidden_error("metadata.name",
                                    "priority class names with '" +
                                        std::string(system_priority_class_prefix) +
                                        "' prefix are reserved for system use only. error: " +
                                        why));
  } else if (c.value > highest_user_priority) {
    out.push_back(forbidden_error("value", "maximum allowed value of a user defined priority is " +
                                               std::to_string(highest_user_priority)));
  }
  return out;
}

namespace {

// "a: 3, b: 4": each named queue's positive amount of `resource`, in name order.
std::string guarantee_parts(std::span<const queue* const> queues, std::string_view resource) {
  std::string out;
  for (const auto* c : queues) {
    const int64_t amount = c->guarantee.get(resource);
    if (amount <= 0)
      continue;
    out += out.empty() ? "" : ", ";
    out += c->meta.name.view();
    out += ": " + format_resource_amount(resource, amount);
  }
  return out;
}

// The sum of the positive amounts of `resource` guaranteed to `queues`.
int64_t guarantee_sum(std::span<const queue* const> queues, std::string_view resource) {
  int64_t sum = 0;
  for (const auto* c : queues)
    sum = saturating_add(sum, std::max<int64_t>(0, c->guarantee.get(resource)));
  return sum;
}

} // namespace

field_errors check_queue_tree(const queue& q, std::span<const queue> existing) {
  field_errors out;
  const std::string_view self = q.meta.name;
  // The tree as it would be, by name (so messages list queues in name order): q replaces its old
  // version.
  std::map<std::string_view, const queue*> tree;
  for (const auto& e : existing)
    if (e.meta.name != self)
      tree.emplace(e.meta.name, &e);
  tree[self] = &q;
  auto find = [&](std::string_view name) -> const queue* {
    auto it = tree.find(name);
    return it == tree.end() ? nullptr : it->second;
  };
  auto children_of = [&](std::string_view parent) {
    std::vector<const queue*> out;
    for (const auto& [name, c] : tree)
      if (c->parent == parent && name != parent)
        out.push_back(c);
    return out;
  };
  auto guarantee_path = [](std::string_view resource) {
    return keyed("spec.guarantee.resource", resource);
  };

  const queue* parent = nullptr;
  if (!is_child_of_root(q.parent)) {
    parent = find(q.parent);
    if (!parent) {
      out.push_back(invalid_error("spec.parent", q.parent,
                                  "parent queue " + go_quote(q.parent) +
                                      " does not exist (a parent must be an existing queue or " +
                                      go_quote(root_queue_name) + ")"));
    } else {
      // Up the parents from q: reaching q again is a cycle. A loop among `existing` that does
      // not pass through q is not q's doing; the walk stops there.
      std::string chain(self);
      std::set<std::string_view> seen{self};
      for (const queue* at = &q; at && !is_child_of_root(at->parent); at = find(at->parent)) {
        chain += " -> " + at->parent;
        if (at->parent == self) {
          out.push_back(invalid_error("spec.parent", q.parent,
                                      "queue " + go_quote(self) + " would be its own ancestor (" +
                                          chain + ")"));
          parent = nullptr; // Guarantees along a cycle have no meaning.
          break;
        }
        if (!seen.insert(at->parent).second)
          break;
      }
    }
  }

  if (parent) {
    const auto siblings = children_of(q.parent); // q included.
    parent->guarantee.for_each([&](std::string_view resource, int64_t limit) {
      const int64_t own = q.guarantee.get(resource);
      if (limit <= 0 || own <= 0)
        return;
      if (own > limit) {
        out.push_back(invalid_error(guarantee_path(resource),
                                    format_resource_amount(resource, own),
                                    "must be less than or equal to the guarantee of parent queue " +
                                        go_quote(q.parent) + " (" +
                                        format_resource_amount(resource, limit) + ")"));
        return;
      }
      const int64_t sum = guarantee_sum(siblings, resource);
      if (sum > limit)
        out.push_back(invalid_error(
            guarantee_path(resource), format_resource_amount(resource, own),
            "the guarantees of the children of queue " + go_quote(q.parent) +
                " would add up to " + format_resource_amount(resource, sum) + " (" +
                guarantee_parts(siblings, resource) + "), more than its guarantee (" +
                format_resource_amount(resource, limit) + ")"));
    });
  }

  const auto children = children_of(self);
  if (!children.empty()) {
    q.guarantee.for_each([&](std::string_view resource, int64_t own) {
      if (own <= 0)
        return;
      const int64_t sum = guarantee_sum(children, resource);
      if (sum > own)
        out.push_back(invalid_error(guarantee_path(resource),
                                    format_resource_amount(resource, own),
                                    "must be at least the sum of its children's guarantees: " +
                                        format_resource_amount(resource, sum) + " (" +
                                        guarantee_parts(children, resource) + ")"));
    });
  }
  return out;
}

field_errors validate(const job& j) {
  field_errors out;
  validate_meta(j.meta, namespace_rule::namespaced, is_dns1123_label, out);
  validate_sla_waiting_time(j.meta, out);
  validate_reserve_missing_members(j.meta, out);

  int64_t total_replicas = 0;
  for (const auto& t : j.tasks)
    if (t.replicas > 0)
      total_replicas += t.replicas;

  if (total_replicas > max_pods_per_job) {
    bool one_task_over = false;
    for (const auto& t : j.tasks)
      one_task_over |= t.replicas > max_pods_per_job;
    if (!one_task_over) // Else that task's replicas say it.
      out.push_back(invalid_error("spec.tasks", total_replicas,
                                  "the tasks' replicas add up to more than " +
                                      std::to_string(max_pods_per_job) +
                                      " pods (the most pods one job may make)"));
  }
  if (j.min_available) {
    if (*j.min_available < 0)
      out.push_back(invalid_error("spec.minAvailable", *j.min_available,
                                  "must be greater than or equal to 0"));
    else if (*j.min_available > total_replicas)
      out.push_back(invalid_error("spec.minAvailable", *j.min_available,
                                  "must be less than or equal to the total replicas of the tasks "
                                  "(" +
                                      std::to_string(total_replicas) + ")"));
  }
  check_non_negative(j.max_retry, "spec.maxRetry", out);

  if (j.tasks.empty())
    out.push_back(required_error("spec.tasks", "a job needs at least one task"));
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < j.tasks.size(); ++i) {
    const auto& t = j.tasks[i];
    auto base = indexed("spec.tasks", i);
    auto name_path = child(base, "name");
    check_required(t.name, name_path, "task name", is_dns1123_label, out);
    if (!t.name.empty() && !names.insert(t.name).second)
      out.push_back(duplicate_error(name_path, t.name));
    check_non_negative(t.replicas, child(base, "replicas"), out);
    if (t.replicas > max_pods_per_job)
      out.push_back(invalid_error(child(base, "replicas"), t.replicas,
                                  "must be less than or equal to " +
                                      std::to_string(max_pods_per_job) +
                                      " (the most pods one job may make)"));
    if (t.min_available) {
      if (*t.min_available < 0)
        out.push_back(invalid_error(child(base, "minAvailable"), *t.min_available,
                                    "must be greater than or equal to 0"));
      else if (*t.min_available > t.replicas)
        out.push_back(invalid_error(child(base, "minAvailable"), *t.min_available,
                                    "must be less than or equal to replicas (" +
                                        std::to_string(t.replicas) + ")"));
    }
    if (t.max_retry)
      check_non_negative(*t.max_retry, child(base, "maxRetry"), out);
    if (!j.meta.name.empty() && !t.name.empty() && t.replicas > 0) {
      std::string longest = j.meta.name + "-" + t.name + "-" + std::to_string(t.replicas - 1);
      if (longest.size() > dns1123_label_max_length)
        out.push_back(invalid_error(name_path, t.name,
                                    "pod name " + go_quote(longest) + " would have " +
                                        std::to_string(longest.size()) +
                                        " characters: the job name, task name and replica index "
                                        "together must fit in " +
                                        std::to_string(dns1123_label_max_length)));
    }
    validate_policies(t.policies, child(base, "policies"), out);
    validate_template(t.pod_template, child(base, "template"), out);
  }

  check_required(j.queue, "spec.queue", "queue", is_dns1123_subdomain, out);
  check_optional(j.scheduler_name, "spec.schedulerName", is_dns1123_subdomain, out);
  check_optional(j.priority_class_name, "spec.priorityClassName", is_dns1123_subdomain, out);
  validate_policies(j.policies, "spec.policies", out);

  std::set<std::string_view> plugins;
  for (std::size_t i = 0; i < j.plugins.size(); ++i) {
    const auto& name = j.plugins[i].first;
    if (name.empty())
      out.push_back(required_error(indexed("spec.plugins", i), "a plugin name is required"));
    else if (!plugins.insert(name).second)
      out.push_back(duplicate_error(keyed("spec.plugins", name), name));
    else if (!contains(job_plugins, name))
      out.push_back(not_supported_error(keyed("spec.plugins", name), name, job_plugins));
  }
  // Their arguments, as the plugins parse them: where Volcano logs a bad one and runs the job
  // with the defaults, the user is told which.
  std::vector<plugin_argument_error> argument_errors;
  plugin_settings_of(j, &argument_errors);
  for (const auto& e : argument_errors)
    out.push_back(invalid_error(indexed(keyed("spec.plugins", e.plugin), e.index),
                                j.plugins[e.plugin_index].second[e.index], e.message));
  // Volcano's webhook: the mpi plugin's launcher must be a task of the job. The ray plugin's
  // head must be one too: Volcano's controller fails every pod's creation without it ("job
  // doesn't have head task"), which a user finds out at runtime.
  const auto settings = plugin_settings_of(j);
  auto has_task = [&](const std::string& name) {
    return std::any_of(j.tasks.begin(), j.tasks.end(),
                       [&](const job_task& t) { return t.name == name; });
  };
  if (settings.mpi && !has_task(settings.mpi->master))
    out.push_back(invalid_error(keyed("spec.plugins", "mpi"), settings.mpi->master,
                                "the specified mpi master task was not found: no task of the "
                                "job is named so (--master names it; \"master\" by default)"));
  if (settings.ray && !has_task(settings.ray->head))
    out.push_back(invalid_error(keyed("spec.plugins", "ray"), settings.ray->head,
                                "the ray head task was not found: no task of the job is named so "
                                "(--head names it; \"head\" by default)"));

  // Volumes, as Volcano's webhook checks them (validateIO).
  std::set<std::string_view> mount_paths;
  for (std::size_t i = 0; i < j.volumes.size(); ++i) {
    const auto& v = j.volumes[i];
    const auto base = indexed("spec.volumes", i);
    if (v.mount_path.empty())
      out.push_back(required_error(child(base, "mountPath"), "mountPath is required"));
    else if (!mount_paths.insert(v.mount_path).second)
      out.push_back(duplicate_error(child(base, "mountPath"), v.mount_path));
    if (v.volume_claim_name.empty() && !v.has_volume_claim)
      out.push_back(required_error(base, "either volumeClaim or volumeClaimName must be given"));
    else if (!v.volume_claim_name.empty())
      check_optional(v.volume_claim_name, child(base, "volumeClaimName"), is_dns1123_subdomain,
                     out);
  }

  if (j.min_success && *j.min_success < 1)
    out.push_back(invalid_error("spec.minSuccess", std::to_string(*j.min_success),
                                "must be greater than or equal to 1"));
  if (j.ttl_seconds_after_finished && *j.ttl_seconds_after_finished < 0)
    out.push_back(invalid_error("spec.ttlSecondsAfterFinished",
                                std::to_string(*j.ttl_seconds_after_finished),
                                "must be greater than or equal to 0"));

  // dependsOn names tasks of the job, and the dependencies form no cycle (Volcano: "a directed
  // acyclic graph").
  std::map<std::string_view, std::size_t> task_index;
  for (std::size_t t = 0; t < j.tasks.size(); ++t)
    task_index.emplace(j.tasks[t].name, t);
  bool dangling = false;
  for (std::size_t t = 0; t < j.tasks.size(); ++t)
    for (std::size_t k = 0; k < j.tasks[t].depends_on.size(); ++k) {
      const auto& name = j.tasks[t].depends_on[k];
      if (!task_index.count(name)) {
        dangling = true;
        out.push_back(invalid_error(indexed(child(indexed("spec.tasks", t), "dependsOn.name"), k),
                                    name, "no task of the job has this name"));
      }
    }
  for (std::size_t t = 0; t < j.tasks.size(); ++t) {
    const auto& iteration = j.tasks[t].depends_on_iteration;
    if (!iteration.empty() && iteration != "any" && iteration != "all")
      out.push_back(invalid_error(child(indexed("spec.tasks", t), "dependsOn.iteration"),
                                  iteration, "must be \"any\" or \"all\""));
  }
  if (!dangling && has_dependency_cycle(j, task_index))
    out.push_back(invalid_error("spec.tasks", "dependsOn",
                                "the tasks' dependencies form a cycle; they must form a "
                                "directed acyclic graph"));
  return out;
}

field_errors validate_creation(const job& j) {
  field_errors out;
  for (std::size_t i = 0; i < j.volumes.size(); ++i)
    if (!j.volumes[i].volume_claim_name.empty() && j.volumes[i].has_volume_claim)
      out.push_back(forbidden_error(child(indexed("spec.volumes", i), "volumeClaim"),
                                    "may not be given together with volumeClaimName: an "
                                    "existing claim is named, or a new one described"));
  return out;
}

} // namespace phalanx::scheduler
