#include "api/ctl/printers.hpp"

#include "api/codec.hpp"
#include "api/ctl/json_util.hpp"
#include "api/events.hpp"
#include "api/job_plugins.hpp"
#include "api/kinds.hpp"
#include "scheduler/quantity.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <map>

namespace phalanx::api::ctl {

namespace json = boost::json;

namespace {

constexpr std::string_view none = "<none>";

std::string age_of(const json::value& o, scheduler::timestamp now) {
  auto created = parse_time(string_at(o, {"metadata", "creationTimestamp"}));
  if (!created || now == scheduler::timestamp{})
    return "<unknown>";
  return human_duration(now - *created);
}

std::string age_since(const std::string& time_text, scheduler::timestamp now) {
  auto t = parse_time(time_text);
  if (!t || now == scheduler::timestamp{})
    return "<unknown>";
  return human_duration(now - *t);
}

std::string number(const json::value& o, std::initializer_list<std::string_view> path) {
  return std::to_string(int_at(o, path));
}

std::string or_none(std::string s) {
  return s.empty() ? std::string(none) : s;
}

// "0/1" containers ready: every container of a Running pod counts as ready (simulated pods have
// no probes).
std::string pod_ready(const json::value& pod) {
  std::size_t containers = 1;
  if (const auto* c = find(pod, {"spec", "containers"}); c && c->is_array() && !c->get_array().empty())
    containers = c->get_array().size();
  std::size_t ready = string_at(pod, {"status", "phase"}) == "Running" ? containers : 0;
  return std::to_string(ready) + "/" + std::to_string(containers);
}

// kubectl's RESTARTS: the restarts of every container, init containers included.
std::string pod_restarts(const json::value& pod) {
  int64_t restarts = 0;
  for (std::string_view list : {"containerStatuses", "initContainerStatuses"})
    if (const auto* c = find(pod, {"status", list}); c && c->is_array())
      for (const auto& container : c->get_array())
        restarts += int_at(container, {"restartCount"});
  return std::to_string(restarts);
}

std::string annotation_or_label(const json::value& o, std::string_view key) {
  if (const auto* a = find(o, {"metadata", "annotations", key}); a && a->is_string())
    return std::string(a->get_string());
  if (const auto* l = find(o, {"metadata", "labels", key}); l && l->is_string())
    return std::string(l->get_string());
  return {};
}

std::string node_roles(const json::value& node) {
  constexpr std::string_view prefix = "node-role.kubernetes.io/";
  std::string roles;
  if (const auto* labels = find(node, {"metadata", "labels"}); labels && labels->is_object()) {
    for (const auto& kv : labels->get_object()) {
      std::string_view key = kv.key();
      std::string role;
      if (key.starts_with(prefix))
        role = std::string(key.substr(prefix.size()));
      else if (key == "kubernetes.io/role")
        role = scalar_text(kv.value());
      if (role.empty())
        continue;
      roles += (roles.empty() ? "" : ",") + role;
    }
  }
  return or_none(roles);
}

// "3/32": allocated of allocatable for one resource of a node.
std::string node_usage(const json::value& node, std::string_view resource) {
  std::string allocated = string_at(node, {"status", "allocated", resource}, "0");
  std::string allocatable = string_at(node, {"status", "allocatable", resource});
  if (allocatable.empty())
    allocatable = string_at(node, {"status", "capacity", resource}, "0");
  return allocated + "/" + allocatable;
}

std::string taints_text(const json::value& node) {
  std::string out;
  if (const auto* t = find(node, {"spec", "taints"}); t && t->is_array()) {
    for (const auto& x : t->get_array()) {
      std::string one = string_at(x, {"key"});
      if (auto v = string_at(x, {"value"}); !v.empty())
        one += "=" + v;
      one += ":" + string_at(x, {"effect"});
      out += (out.empty() ? "" : ",") + one;
    }
  }
  return or_none(out);
}

std::string creation_date(const json::value& o) {
  std::string t = string_at(o, {"metadata", "creationTimestamp"});
  return t.size() >= 10 ? t.substr(0, 10) : or_none(t);
}

int64_t job_replicas(const json::value& job) {
  int64_t total = 0;
  if (const auto* tasks = find(job, {"spec", "tasks"}); tasks && tasks->is_array())
    for (const auto& t : tasks->get_array())
      total += int_at(t, {"replicas"});
  return total;
}

const json::value* condition(const json::value& o, std::string_view type) {
  const auto* conds = find(o, {"status", "conditions"});
  if (conds == nullptr || !conds->is_array())
    return nullptr;
  for (const auto& c : conds->get_array())
    if (string_at(c, {"type"}) == type)
      return &c;
  return nullptr;
}

// ---- describe

// Lines of "Label:  value", aligned per block of consecutive lines at one indent, as kubectl's
// describe does with its tabwriter.
class describe_writer {
 public:
  void field(int indent, std::string label, std::string value) {
    lines_.push_back({indent, std::move(label), std::move(value), false});
  }
  void heading(int indent, std::string label) {
    lines_.push_back({indent, std::move(label), "", true});
  }
  void raw(std::string text) { lines_.push_back({0, std::move(text), "", true}); }

  std::string str() const {
    std::string out;
    std::size_t i = 0;
    while (i < lines_.size()) {
      if (lines_[i].heading) {
        out.append(static_cast<std::size_t>(lines_[i].indent) * 2, ' ');
        out += lines_[i].label + "\n";
        ++i;
        continue;
      }
      std::size_t j = i;
      std::size_t width = 0;
      while (j < lines_.size() && !lines_[j].heading && lines_[j].indent == lines_[i].indent) {
        width = std::max(width, lines_[j].label.size() + 1);
        ++j;
      }
      for (; i < j; ++i) {
        const auto& l = lines_[i];
        std::string pad(static_cast<std::size_t>(l.indent) * 2, ' ');
        std::string head = pad + l.label + ":";
        head.append(width + 2 - (l.label.size() + 1), ' ');
        // Multi-line values continue under the first value.
        std::size_t start = 0;
        bool first = true;
        while (true) {
          auto nl = l.value.find('\n', start);
          std::string part = l.value.substr(start, nl == std::string::npos ? std::string::npos
                                                                             : nl - start);
          std::string line = first ? head + part : std::string(head.size(), ' ') + part;
          while (!line.empty() && line.back() == ' ')
            line.pop_back();
          out += line + "\n";
          first = false;
          if (nl == std::string::npos)
            break;
          start = nl + 1;
        }
      }
    }
    return out;
  }

 private:
  struct line {
    int indent;
    std::string label;
    std::string value;
    bool heading;
  };
  std::vector<line> lines_;
};

// A table under a heading, indented by two spaces.
void indented_table(describe_writer& w, const std::vector<std::string>& header,
                    const std::vector<std::vector<std::string>>& rows) {
  std::string table = format_table(header, rows);
  std::size_t start = 0;
  while (start < table.size()) {
    auto nl = table.find('\n', start);
    w.raw("  " + table.substr(start, nl - start));
    start = nl + 1;
  }
}

// "a=b\nc=d": one pair per line (kubectl's Labels: and Annotations:).
std::string pairs(const json::value* map) {
  if (map == nullptr || !map->is_object() || map->get_object().empty())
    return std::string(none);
  std::string out;
  for (const auto& kv : map->get_object())
    out += (out.empty() ? "" : "\n") + std::string(kv.key()) + "=" + scalar_text(kv.value());
  return out;
}

void describe_metadata(describe_writer& w, resource_kind kind, const json::value& o,
                       scheduler::timestamp now) {
  const auto& k = info(kind);
  w.field(0, "Name", string_at(o, {"metadata", "name"}));
  if (k.namespaced)
    w.field(0, "Namespace", string_at(o, {"metadata", "namespace"}));
  w.field(0, "Labels", pairs(find(o, {"metadata", "labels"})));
  w.field(0, "Annotations", pairs(find(o, {"metadata", "annotations"})));
  w.field(0, "API Version", string_at(o, {"apiVersion"}, std::string(k.api_version)));
  w.field(0, "Kind", string_at(o, {"kind"}, std::string(k.kind_name)));
  std::string created = string_at(o, {"metadata", "creationTimestamp"});
  w.field(0, "Creation Timestamp",
          created.empty() ? std::string(none) : created + " (" + age_of(o, now) + " ago)");
  w.field(0, "UID", or_none(string_at(o, {"metadata", "uid"})));
  w.field(0, "Resource Version", or_none(string_at(o, {"metadata", "resourceVersion"})));
}

void describe_conditions(describe_writer& w, const json::value& o) {
  const auto* conds = find(o, {"status", "conditions"});
  if (conds == nullptr || !conds->is_array() || conds->get_array().empty()) {
    w.field(0, "Conditions", std::string(none));
    return;
  }
  w.heading(0, "Conditions:");
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : conds->get_array())
    rows.push_back({string_at(c, {"type"}), string_at(c, {"status"}), string_at(c, {"reason"}),
                    string_at(c, {"message"})});
  indented_table(w, {"Type", "Status", "Reason", "Message"}, rows);
}

void describe_events(describe_writer& w, const json::value* events, scheduler::timestamp now) {
  if (events == nullptr) {
    w.field(0, "Events", "<unavailable>");
    return;
  }
  const auto* items = find(*events, {"items"});
  if (items == nullptr || !items->is_array() || items->get_array().empty()) {
    w.field(0, "Events", std::string(none));
    return;
  }
  w.heading(0, "Events:");
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"----", "------", "----", "----", "-------"});
  for (const auto& e : items->get_array()) {
    std::string last = string_at(e, {"lastTimestamp"});
    std::string first = string_at(e, {"firstTimestamp"});
    int64_t count = int_at(e, {"count"}, 1);
    std::string age = age_since(last.empty() ? first : last, now);
    if (count > 1)
      age += " (x" + std::to_string(count) + " over " + age_since(first, now) + ")";
    rows.push_back({string_at(e, {"type"}), string_at(e, {"reason"}), age,
                    string_at(e, {"source", "component"}), string_at(e, {"message"})});
  }
  indented_table(w, {"Type", "Reason", "Age", "From", "Message"}, rows);
}

// Requests of one pod of a template: the sum over containers, at least the largest init
// container's per resource (as Kubernetes charges them; overhead is left out).
std::string pod_requests(const json::value* spec) {
  if (spec == nullptr)
    return std::string(none);
  std::map<std::string, int64_t> sum;
  auto add = [&](const json::value* list, bool init) {
    if (list == nullptr || !list->is_array())
      return;
    std::map<std::string, int64_t> largest;
    for (const auto& c : list->get_array()) {
      const auto* req = find(c, {"resources", "requests"});
      const auto* lim = find(c, {"resources", "limits"});
      std::map<std::string, int64_t> mine;
      // Extended resources given only as limits count as requests, as Kubernetes defaults them.
      for (const auto* m : {lim, req}) {
        if (m == nullptr || !m->is_object())
          continue;
        for (const auto& kv : m->get_object()) {
          std::string name(kv.key());
          if (m == lim && scheduler::is_standard_resource(name))
            continue;
          auto amount = scheduler::parse_resource_amount(name, scalar_text(kv.value()));
          if (amount)
            mine[name] = *amount;
        }
      }
      for (const auto& [name, amount] : mine) {
        if (init)
          largest[name] = std::max(largest[name], amount);
        else
          sum[name] = scheduler::saturating_add(sum[name], amount);
      }
    }
    for (const auto& [name, amount] : largest)
      sum[name] = std::max(sum[name], amount);
  };
  add(find(*spec, {"containers"}), false);
  add(find(*spec, {"initContainers"}), true);
  if (sum.empty())
    return std::string(none);
  std::string out;
  for (const auto& [name, amount] : sum)
    out += (out.empty() ? "" : ", ") + name + "=" + scheduler::format_resource_amount(name, amount);
  return out;
}

std::string tolerations_text(const json::value* spec) {
  const json::value* t = spec ? find(*spec, {"tolerations"}) : nullptr;
  if (t == nullptr || !t->is_array() || t->get_array().empty())
    return std::string(none);
  std::string out;
  for (const auto& x : t->get_array()) {
    std::string one = string_at(x, {"key"});
    std::string op = string_at(x, {"operator"}, "Equal");
    if (op == "Exists")
      one += one.empty() ? "op=Exists" : " op=Exists";
    else
      one += "=" + string_at(x, {"value"});
    if (auto e = string_at(x, {"effect"}); !e.empty())
      one += ":" + e;
    out += (out.empty() ? "" : "\n") + one;
  }
  return out;
}

std::string selector_text(const json::value* spec) {
  return pairs(spec ? find(*spec, {"nodeSelector"}) : nullptr);
}

// kubectl's STATUS of a pod: Terminating while it is being deleted; a finished pod by its
// containers' end, Completed or Error (simulated pods have no container statuses: their phase
// says it); else its phase.
std::string pod_status_text(const json::value& o) {
  if (!string_at(o, {"metadata", "deletionTimestamp"}).empty())
    return "Terminating";
  auto phase = string_at(o, {"status", "phase"});
  if (phase == "Succeeded")
    return "Completed";
  if (phase == "Failed")
    return "Error";
  return or_none(phase);
}

void describe_pod(describe_writer& w, const json::value& o) {
  if (auto deadline = string_at(o, {"metadata", "deletionTimestamp"}); !deadline.empty())
    w.field(0, "Status", "Terminating (deadline " + deadline + ", grace period " +
                             number(o, {"metadata", "deletionGracePeriodSeconds"}) + "s)");
  else
    w.field(0, "Status", or_none(string_at(o, {"status", "phase"})));
  w.field(0, "Node", or_none(string_at(o, {"spec", "nodeName"})));
  w.field(0, "Start Time", or_none(string_at(o, {"status", "startTime"})));
  w.field(0, "PodGroup", or_none(annotation_or_label(o, scheduler::pod_group_annotation)));
  w.field(0, "Task", or_none(annotation_or_label(o, scheduler::task_spec_key)));
  w.field(0, "Priority", number(o, {"spec", "priority"}));
  w.field(0, "Priority Class Name", or_none(string_at(o, {"spec", "priorityClassName"})));
  w.field(0, "Scheduler", or_none(string_at(o, {"spec", "schedulerName"})));
  const auto* spec = find(o, {"spec"});
  w.field(0, "Requests", pod_requests(spec));
  w.field(0, "Node-Selectors", selector_text(spec));
  w.field(0, "Tolerations", tolerations_text(spec));
  if (const auto* cs = find(o, {"spec", "containers"}); cs && cs->is_array()) {
    w.heading(0, "Containers:");
    for (const auto& c : cs->get_array()) {
      w.heading(1, string_at(c, {"name"}) + ":");
      w.field(2, "Image", or_none(string_at(c, {"image"})));
      w.field(2, "Requests", resource_list(find(c, {"resources", "requests"})));
      w.field(2, "Limits", resource_list(find(c, {"resources", "limits"})));
    }
  }
  describe_conditions(w, o);
}

void describe_pod_group(describe_writer& w, const json::value& o) {
  w.field(0, "Queue", or_none(string_at(o, {"spec", "queue"})));
  w.field(0, "Min Member", number(o, {"spec", "minMember"}));
  w.field(0, "Min Task Member", [&] {
    const auto* m = find(o, {"spec", "minTaskMember"});
    if (m == nullptr || !m->is_object() || m->get_object().empty())
      return std::string(none);
    std::string out;
    for (const auto& kv : m->get_object())
      out += (out.empty() ? "" : ", ") + std::string(kv.key()) + "=" + scalar_text(kv.value());
    return out;
  }());
  w.field(0, "Min Resources", resource_list(find(o, {"spec", "minResources"})));
  w.field(0, "Priority Class Name", or_none(string_at(o, {"spec", "priorityClassName"})));
  w.field(0, "Phase", or_none(string_at(o, {"status", "phase"})));
  w.field(0, "Running", number(o, {"status", "running"}));
  w.field(0, "Succeeded", number(o, {"status", "succeeded"}));
  w.field(0, "Failed", number(o, {"status", "failed"}));
  describe_conditions(w, o);
}

// The objects a job's plugins make (scheduler/job_plugins.hpp), read from the job's spec as its
// controller reads them: a Service and NetworkPolicy named as the job, the svc ConfigMap of host
// lists, the ssh Secret, the ray head's Service. In Kubernetes mode they exist on the apiserver,
// the Secret with its generated key pair; the simulated cluster of standalone mode runs no
// container and needs none.
void describe_plugin_objects(describe_writer& w, const json::value& o) {
  decode_options options;
  options.expected_kind = resource_kind::job;
  options.validate = false;
  auto decoded = decode_object(o, options);
  if (!decoded)
    return;
  const auto& j = std::get<job_object>(*decoded).job;
  const auto settings = scheduler::plugin_settings_of(j);
  if (!settings.svc && !settings.ssh)
    return;
  const std::string name(j.meta.name.view());
  w.heading(0, "Plugin Objects:");
  if (settings.svc) {
    w.field(1, "Service " + name,
            "headless, selects volcano.sh/job-name=" + name + ", volcano.sh/job-namespace=" +
                std::string(j.meta.namespace_name.view()) +
                (settings.svc->publish_not_ready_addresses ? ", publishes not-ready addresses"
                                                           : ""));
    if (!settings.svc->disable_network_policy)
      w.field(1, "NetworkPolicy " + name, "ingress from the job's own pods only");
    std::string data;
    for (const auto& [key, value] : scheduler::job_hosts(j, task_namings_of(j))) {
      std::string shown = value;
      std::replace(shown.begin(), shown.end(), '\n', ' ');
      data += (data.empty() ? "" : "\n") + key + "=" + shown;
    }
    w.field(1, "ConfigMap " + scheduler::svc_config_map_name(name), data);
  }
  if (settings.ssh)
    w.field(1, "Secret " + scheduler::ssh_secret_name(name),
            std::string(scheduler::ssh_private_key_key) + ", " +
                std::string(scheduler::ssh_public_key_key) + ", " +
                std::string(scheduler::ssh_authorized_keys_key) + ", " +
                std::string(scheduler::ssh_config_key) + " mounted at " +
                settings.ssh->key_file_path);
  if (settings.ray) {
    std::string ports;
    for (const auto& [port_name, port] : scheduler::ray_ports(*settings.ray))
      ports += (ports.empty() ? "" : ", ") + std::string(port_name) + " " + std::to_string(port);
    w.field(1, "Service " + scheduler::ray_head_service_name(name),
            "selects volcano.sh/job-name=" + name + ", volcano.sh/job-namespace=" +
                std::string(j.meta.namespace_name.view()) +
                ", volcano.sh/task-spec=" + settings.ray->head + "; ports " + ports);
  }
}

// A job's volumes (spec.volumes): each mount path with its claim, and whether the job makes the
// claim (a volumeClaim; its name is the one the controller generated) or mounts an existing
// one. Standalone mode simulates no storage: there the claims are names only.
void describe_volumes(describe_writer& w, const json::value& o) {
  const auto* volumes = find(o, {"spec", "volumes"});
  if (volumes == nullptr || !volumes->is_array() || volumes->get_array().empty())
    return;
  w.heading(0, "Volumes:");
  for (const auto& v : volumes->get_array()) {
    const auto* claim = find(v, {"volumeClaim"});
    const bool made = claim != nullptr && !claim->is_null();
    w.field(1, or_none(string_at(v, {"mountPath"})),
            "claim " + or_none(string_at(v, {"volumeClaimName"})) +
                (made ? ", made for the job from its volumeClaim" : ", an existing one"));
  }
}

void describe_job(describe_writer& w, const json::value& o, const json::value* pod_group) {
  w.field(0, "Queue", or_none(string_at(o, {"spec", "queue"})));
  w.field(0, "Scheduler", or_none(string_at(o, {"spec", "schedulerName"})));
  w.field(0, "Min Available", or_none(string_at(o, {"spec", "minAvailable"})));
  w.field(0, "Max Retry", or_none(string_at(o, {"spec", "maxRetry"})));
  w.field(0, "Priority Class Name", or_none(string_at(o, {"spec", "priorityClassName"})));
  w.field(0, "Plugins", [&] {
    const auto* p = find(o, {"spec", "plugins"});
    if (p == nullptr || !p->is_object() || p->get_object().empty())
      return std::string(none);
    std::string out;
    for (const auto& kv : p->get_object()) {
      std::string args;
      if (kv.value().is_array())
        for (const auto& a : kv.value().get_array())
          args += (args.empty() ? "" : " ") + scalar_text(a);
      out += (out.empty() ? "" : ", ") + std::string(kv.key()) +
             (args.empty() ? "" : " [" + args + "]");
    }
    return out;
  }());
  describe_plugin_objects(w, o);
  describe_volumes(w, o);
  if (const auto* tasks = find(o, {"spec", "tasks"}); tasks && tasks->is_array()) {
    w.heading(0, "Tasks:");
    std::vector<std::vector<std::string>> rows;
    for (const auto& t : tasks->get_array())
      rows.push_back({string_at(t, {"name"}), number(t, {"replicas"}),
                      or_none(string_at(t, {"minAvailable"})),
                      pod_requests(find(t, {"template", "spec"}))});
    indented_table(w, {"Name", "Replicas", "Min Available", "Requests (per pod)"}, rows);
  }
  w.heading(0, "Status:");
  w.field(1, "Phase", or_none(string_at(o, {"status", "state", "phase"})));
  if (auto r = string_at(o, {"status", "state", "reason"}); !r.empty())
    w.field(1, "Reason", r);
  if (auto m = string_at(o, {"status", "state", "message"}); !m.empty())
    w.field(1, "Message", m);
  if (auto t = string_at(o, {"status", "state", "lastTransitionTime"}); !t.empty())
    w.field(1, "Last Transition", t);
  w.field(1, "Min Available", number(o, {"status", "minAvailable"}));
  w.field(1, "Pending", number(o, {"status", "pending"}));
  w.field(1, "Running", number(o, {"status", "running"}));
  w.field(1, "Succeeded", number(o, {"status", "succeeded"}));
  w.field(1, "Failed", number(o, {"status", "failed"}));
  w.field(1, "Terminating", number(o, {"status", "terminating"}));
  w.field(1, "Unknown", number(o, {"status", "unknown"}));
  w.field(1, "Retry Count", number(o, {"status", "retryCount"}));
  w.field(1, "Version", number(o, {"status", "version"}));
  if (const auto* counts = find(o, {"status", "taskStatusCount"});
      counts && counts->is_object() && !counts->get_object().empty()) {
    std::string text;
    for (const auto& kv : counts->get_object()) {
      std::string phases;
      if (const auto* ph = find(kv.value(), {"phase"}); ph && ph->is_object())
        for (const auto& p : ph->get_object())
          phases += (phases.empty() ? "" : ", ") + std::string(p.key()) + "=" +
                    scalar_text(p.value());
      text += (text.empty() ? "" : "\n") + std::string(kv.key()) + ": " + or_none(phases);
    }
    w.field(1, "Task Status Count", text);
  }
  if (const auto* conditions = find(o, {"status", "conditions"});
      conditions && conditions->is_array() && !conditions->get_array().empty()) {
    w.heading(0, "Conditions:");
    std::vector<std::vector<std::string>> rows;
    for (const auto& c : conditions->get_array())
      rows.push_back({string_at(c, {"status"}), string_at(c, {"lastTransitionTime"})});
    indented_table(w, {"Status", "Last Transition Time"}, rows);
  }
  if (pod_group != nullptr)
    w.field(0, "PodGroup", string_at(*pod_group, {"metadata", "name"}) + " (" +
                             or_none(string_at(*pod_group, {"status", "phase"})) + ")");
}

void describe_queue(describe_writer& w, const json::value& o) {
  w.field(0, "Weight", or_none(string_at(o, {"spec", "weight"})));
  w.field(0, "State", or_none(string_at(o, {"status", "state"})));
  w.field(0, "Parent", string_at(o, {"spec", "parent"}, "root"));
  w.field(0, "Reclaimable", or_none(string_at(o, {"spec", "reclaimable"})));
  w.field(0, "Priority", number(o, {"spec", "priority"}));
  w.field(0, "Capability", resource_list(find(o, {"spec", "capability"})));
  w.field(0, "Guarantee", resource_list(find(o, {"spec", "guarantee", "resource"})));
  w.field(0, "Deserved (spec)", resource_list(find(o, {"spec", "deserved"})));
  w.heading(0, "Status:");
  w.field(1, "Allocated", resource_list(find(o, {"status", "allocated"})));
  w.field(1, "Deserved", resource_list(find(o, {"status", "deserved"})));
  w.field(1, "Pending", number(o, {"status", "pending"}));
  w.field(1, "Inqueue", number(o, {"status", "inqueue"}));
  w.field(1, "Running", number(o, {"status", "running"}));
  w.field(1, "Unknown", number(o, {"status", "unknown"}));
  w.field(1, "Completed", number(o, {"status", "completed"}));
}

void describe_priority_class(describe_writer& w, const json::value& o) {
  w.field(0, "Value", number(o, {"value"}));
  w.field(0, "GlobalDefault", string_at(o, {"globalDefault"}, "false"));
  w.field(0, "PreemptionPolicy", string_at(o, {"preemptionPolicy"}, "PreemptLowerPriority"));
  w.field(0, "Description", or_none(string_at(o, {"description"})));
}

// "3 (37%)": what is allocated of a resource and its share of the allocatable, as kubectl's
// "Allocated resources" shows it.
std::string allocated_share(std::string_view resource, const json::value* allocated,
                            const json::value& allocatable) {
  const std::string have = allocated ? scalar_text(*allocated) : std::string("0");
  auto used = scheduler::parse_resource_amount(resource, have.empty() ? "0" : have);
  auto total = scheduler::parse_resource_amount(resource, scalar_text(allocatable));
  if (!used || !total || *total <= 0)
    return have;
  return have + " (" + std::to_string(*used * 100 / *total) + "%)";
}

void describe_node(describe_writer& w, const json::value& o, const json::value* pods) {
  w.field(0, "Roles", node_roles(o));
  w.field(0, "Unschedulable", string_at(o, {"spec", "unschedulable"}, "false"));
  w.field(0, "Taints", [&] {
    std::string t = taints_text(o);
    std::replace(t.begin(), t.end(), ',', '\n');
    return t;
  }());
  w.field(0, "Allocatable", resource_list(find(o, {"status", "allocatable"})));
  w.field(0, "Pods", number(o, {"status", "allocatedPods"}));
  // kubectl describe node's two sections: the pods that hold room here, and what they take.
  if (pods != nullptr)
    if (const auto* items = find(*pods, {"items"}); items && items->is_array()) {
      w.field(0, "Non-terminated Pods",
              "(" + std::to_string(items->get_array().size()) + " in total)");
      for (const auto& p : items->get_array())
        w.field(1, string_at(p, {"metadata", "namespace"}) + "/" +
                       string_at(p, {"metadata", "name"}),
                pod_status_text(p));
    }
  w.heading(0, "Allocated resources:");
  const auto* allocatable = find(o, {"status", "allocatable"});
  const auto* allocated = find(o, {"status", "allocated"});
  if (allocatable && allocatable->is_object())
    for (const auto& kv : allocatable->get_object()) {
      const json::value* used = allocated ? find(*allocated, {kv.key()}) : nullptr;
      w.field(1, std::string(kv.key()), allocated_share(kv.key(), used, kv.value()));
    }
}

} // namespace

std::string resource_list(const json::value* map) {
  if (map == nullptr || !map->is_object() || map->get_object().empty())
    return std::string(none);
  std::string out;
  for (const auto& kv : map->get_object())
    out += (out.empty() ? "" : ", ") + std::string(kv.key()) + "=" + scalar_text(kv.value());
  return out;
}

namespace {

// kubectl's LABELS cell: key=value pairs sorted by key, joined by commas; <none> when there are
// none.
std::string labels_cell(const json::value& o) {
  std::vector<std::string> labels;
  if (const auto* m = find(o, {"metadata", "labels"}); m && m->is_object())
    for (const auto& kv : m->get_object())
      labels.push_back(std::string(kv.key()) + "=" + scalar_text(kv.value()));
  std::sort(labels.begin(), labels.end());
  std::string text;
  for (const auto& l : labels)
    text += (text.empty() ? "" : ",") + l;
  return text.empty() ? std::string(none) : text;
}

} // namespace

std::vector<std::string> table_header(resource_kind kind, const table_options& options) {
  std::vector<std::string> h;
  if (options.with_event)
    h.push_back("EVENT");
  if (options.with_namespace && info(kind).namespaced)
    h.push_back("NAMESPACE");
  auto add = [&](std::initializer_list<const char*> names) {
    for (auto n : names)
      h.emplace_back(n);
  };
  switch (kind) {
    case resource_kind::job:
      add({"NAME", "CREATION", "PHASE", "JOBTYPE", "REPLICAS", "MIN", "PENDING", "RUNNING",
           "SUCCEEDED", "FAILED", "UNKNOWN", "RETRYCOUNT"});
      if (options.wide)
        add({"QUEUE", "AGE"});
      break;
    case resource_kind::queue:
      add({"NAME", "WEIGHT", "STATE", "PARENT", "INQUEUE", "PENDING", "RUNNING", "UNKNOWN",
           "COMPLETED"});
      if (options.wide)
        add({"ALLOCATED", "DESERVED", "CAPABILITY", "AGE"});
      break;
    case resource_kind::pod_group:
      add({"NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE"});
      if (options.wide)
        add({"QUEUE", "SUCCEEDED", "FAILED"});
      break;
    case resource_kind::pod:
      add({"NAME", "READY", "STATUS", "RESTARTS", "AGE"});
      if (options.wide)
        add({"NODE", "PODGROUP", "TASK"});
      break;
    case resource_kind::node:
      add({"NAME", "STATUS", "ROLES", "AGE"});
      if (options.wide)
        add({"CPU", "MEMORY", "GPU", "PODS", "TAINTS"});
      break;
    case resource_kind::priority_class:
      add({"NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"});
      break;
  }
  if (options.show_labels)
    h.push_back("LABELS");
  return h;
}

std::vector<std::string> table_row(resource_kind kind, const json::value& o,
                                   const table_options& options, std::string_view event) {
  std::vector<std::string> r;
  if (options.with_event)
    r.emplace_back(event);
  if (options.with_namespace && info(kind).namespaced)
    r.push_back(string_at(o, {"metadata", "namespace"}));
  r.push_back(string_at(o, {"metadata", "name"}));
  switch (kind) {
    case resource_kind::job: {
      std::string type = string_at(o, {"metadata", "labels", "volcano.sh/job-type"});
      r.push_back(creation_date(o));
      r.push_back(or_none(string_at(o, {"status", "state", "phase"})));
      r.push_back(type.empty() ? "Batch" : type);  // vcctl's default.
      r.push_back(std::to_string(job_replicas(o)));
      r.push_back(number(o, {"status", "minAvailable"}));
      r.push_back(number(o, {"status", "pending"}));
      r.push_back(number(o, {"status", "running"}));
      r.push_back(number(o, {"status", "succeeded"}));
      r.push_back(number(o, {"status", "failed"}));
      r.push_back(number(o, {"status", "unknown"}));
      r.push_back(number(o, {"status", "retryCount"}));
      if (options.wide) {
        r.push_back(or_none(string_at(o, {"spec", "queue"})));
        r.push_back(age_of(o, options.now));
      }
      break;
    }
    case resource_kind::queue:
      r.push_back(or_none(string_at(o, {"spec", "weight"})));
      r.push_back(or_none(string_at(o, {"status", "state"})));
      r.push_back(string_at(o, {"spec", "parent"}, "root"));
      r.push_back(number(o, {"status", "inqueue"}));
      r.push_back(number(o, {"status", "pending"}));
      r.push_back(number(o, {"status", "running"}));
      r.push_back(number(o, {"status", "unknown"}));
      r.push_back(number(o, {"status", "completed"}));
      if (options.wide) {
        auto compact = [](std::string s) {
          std::erase(s, ' ');
          return s;
        };
        r.push_back(compact(resource_list(find(o, {"status", "allocated"}))));
        r.push_back(compact(resource_list(find(o, {"status", "deserved"}))));
        r.push_back(compact(resource_list(find(o, {"spec", "capability"}))));
        r.push_back(age_of(o, options.now));
      }
      break;
    case resource_kind::pod_group:
      r.push_back(or_none(string_at(o, {"status", "phase"})));
      r.push_back(string_at(o, {"spec", "minMember"}, "1"));
      r.push_back(number(o, {"status", "running"}));
      r.push_back(age_of(o, options.now));
      if (options.wide) {
        r.push_back(or_none(string_at(o, {"spec", "queue"})));
        r.push_back(number(o, {"status", "succeeded"}));
        r.push_back(number(o, {"status", "failed"}));
      }
      break;
    case resource_kind::pod:
      r.push_back(pod_ready(o));
      r.push_back(pod_status_text(o));
      r.push_back(pod_restarts(o));
      r.push_back(age_of(o, options.now));
      if (options.wide) {
        r.push_back(or_none(string_at(o, {"spec", "nodeName"})));
        r.push_back(or_none(annotation_or_label(o, scheduler::pod_group_annotation)));
        r.push_back(or_none(annotation_or_label(o, scheduler::task_spec_key)));
      }
      break;
    case resource_kind::node: {
      bool cordoned = find(o, {"spec", "unschedulable"}) != nullptr &&
                      find(o, {"spec", "unschedulable"})->is_bool() &&
                      find(o, {"spec", "unschedulable"})->get_bool();
      r.push_back(cordoned ? "Ready,SchedulingDisabled" : "Ready");
      r.push_back(node_roles(o));
      r.push_back(age_of(o, options.now));
      if (options.wide) {
        r.push_back(node_usage(o, "cpu"));
        r.push_back(node_usage(o, "memory"));
        r.push_back(node_usage(o, "nvidia.com/gpu"));
        r.push_back(string_at(o, {"status", "allocatedPods"}, "0") + "/" +
                    string_at(o, {"status", "allocatable", "pods"}, "0"));
        r.push_back(taints_text(o));
      }
      break;
    }
    case resource_kind::priority_class:
      r.push_back(number(o, {"value"}));
      r.push_back(string_at(o, {"globalDefault"}, "false"));
      r.push_back(age_of(o, options.now));
      r.push_back(string_at(o, {"preemptionPolicy"}, "PreemptLowerPriority"));
      break;
  }
  if (options.show_labels)
    r.push_back(labels_cell(o));
  return r;
}

std::vector<std::string> event_table_header(const table_options& options) {
  std::vector<std::string> h;
  if (options.with_event)
    h.push_back("EVENT");
  if (options.with_namespace)
    h.push_back("NAMESPACE");
  for (const auto& c : event_table_columns()) {
    if (c.priority > 0 && !options.wide)
      continue;
    std::string title(c.name);
    std::transform(title.begin(), title.end(), title.begin(),
                   [](unsigned char ch) { return char(std::toupper(ch)); });
    h.push_back(std::move(title));
  }
  if (options.show_labels)
    h.push_back("LABELS");
  return h;
}

std::vector<std::string> event_table_row(const json::value& event, const table_options& options,
                                         std::string_view type) {
  std::vector<std::string> r;
  if (options.with_event)
    r.emplace_back(type);
  if (options.with_namespace)
    r.push_back(string_at(event, {"metadata", "namespace"}));
  auto cells = event_table_cells(event, options.now);
  auto columns = event_table_columns();
  for (std::size_t i = 0; i < cells.size() && i < columns.size(); ++i) {
    if (columns[i].priority > 0 && !options.wide)
      continue;
    r.push_back(cells[i].is_string() ? std::string(cells[i].get_string()) : scalar_text(cells[i]));
  }
  if (options.show_labels)
    r.push_back(labels_cell(event));
  return r;
}

std::vector<std::size_t> column_widths(const std::vector<std::vector<std::string>>& lines,
                                       std::size_t min_width) {
  std::vector<std::size_t> widths;
  for (const auto& l : lines) {
    if (widths.size() < l.size())
      widths.resize(l.size(), min_width);
    for (std::size_t i = 0; i < l.size(); ++i)
      widths[i] = std::max(widths[i], l[i].size());
  }
  return widths;
}

std::string format_row(const std::vector<std::string>& cells,
                       const std::vector<std::size_t>& widths) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    out += cells[i];
    if (i + 1 == cells.size())
      break;
    std::size_t w = i < widths.size() ? widths[i] : 0;
    out.append((cells[i].size() < w ? w - cells[i].size() : 0) + 3, ' ');
  }
  while (!out.empty() && out.back() == ' ')
    out.pop_back();
  out += '\n';
  return out;
}

std::string format_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::vector<std::string>> lines;
  lines.reserve(rows.size() + 1);
  lines.push_back(header);
  lines.insert(lines.end(), rows.begin(), rows.end());
  auto widths = column_widths(lines);
  std::string out;
  for (const auto& l : lines)
    out += format_row(l, widths);
  return out;
}

std::string pending_reason(resource_kind kind, const json::value& o,
                           const json::value* pod_group) {
  switch (kind) {
    case resource_kind::pod: {
      const auto* c = condition(o, "PodScheduled");
      if (c != nullptr && string_at(*c, {"status"}) == "False")
        return string_at(*c, {"message"});
      return {};
    }
    case resource_kind::pod_group: {
      std::string out;
      for (auto type : {"Unschedulable", "Stalled"}) {
        const auto* c = condition(o, type);
        if (c != nullptr && string_at(*c, {"status"}) == "True")
          out += (out.empty() ? "" : "\n") + string_at(*c, {"message"});
      }
      return out;
    }
    case resource_kind::job:
      if (pod_group != nullptr)
        return pending_reason(resource_kind::pod_group, *pod_group, nullptr);
      return {};
    case resource_kind::queue:
    case resource_kind::node:
    case resource_kind::priority_class:
      return {};
  }
  return {};
}

std::string describe_object(resource_kind kind, const json::value& o, const json::value* events,
                            const json::value* related, scheduler::timestamp now) {
  const json::value* pod_group = kind == resource_kind::job ? related : nullptr;
  describe_writer w;
  describe_metadata(w, kind, o, now);
  switch (kind) {
    case resource_kind::pod:
      describe_pod(w, o);
      break;
    case resource_kind::pod_group:
      describe_pod_group(w, o);
      break;
    case resource_kind::job:
      describe_job(w, o, pod_group);
      break;
    case resource_kind::queue:
      describe_queue(w, o);
      break;
    case resource_kind::node:
      describe_node(w, o, related);
      break;
    case resource_kind::priority_class:
      describe_priority_class(w, o);
      break;
  }
  // The pending reason of something that waits; objects that do not wait have none.
  bool waits = false;
  switch (kind) {
    case resource_kind::pod:
      waits = string_at(o, {"status", "phase"}) == "Pending";
      break;
    case resource_kind::pod_group: {
      auto phase = string_at(o, {"status", "phase"});
      waits = phase == "Pending" || phase == "Inqueue";
      break;
    }
    case resource_kind::job: {
      auto phase = string_at(o, {"status", "state", "phase"});
      waits = phase == "Pending" || phase.empty();
      break;
    }
    case resource_kind::queue:
    case resource_kind::node:
    case resource_kind::priority_class:
      break;
  }
  if (waits) {
    std::string reason = pending_reason(kind, o, pod_group);
    w.field(0, "Pending Reason", reason.empty() ? "<none reported yet>" : reason);
  }
  describe_events(w, events, now);
  return w.str();
}

} // namespace phalanx::api::ctl
