#include "scheduler/job.hpp"

#include "scheduler/random.hpp"
#include "scheduler/sla.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <memory>
#include <numeric>
#include <utility>

namespace phalanx::scheduler {

namespace {

constexpr std::size_t max_subdomain_length = 253;

// FNV-1a over the bytes of `a`, a separator byte no UTF-8 text contains (so ("ab","c") !=
// ("a","bc")), and `b`, 64 bits, from two offset bases at once: the two chains are independent,
// so the CPU runs them side by side (a job's every pod derives its uid: expansion's largest cost).
std::pair<uint64_t, uint64_t> fnv1a_twice(std::string_view a, std::string_view b, uint64_t basis1,
                                          uint64_t basis2) noexcept {
  constexpr uint64_t prime = 0x100000001b3ULL;
  uint64_t h1 = basis1, h2 = basis2;
  auto mix = [&](unsigned char c) {
    h1 = (h1 ^ c) * prime;
    h2 = (h2 ^ c) * prime;
  };
  for (unsigned char c : a)
    mix(c);
  mix(0xff);
  for (unsigned char c : b)
    mix(c);
  return {h1, h2};
}

// Tasks in the order calcPGMinResources visits them: priority descending, job order for ties.
std::vector<std::size_t> tasks_by_priority(const job& j) {
  std::vector<std::size_t> order(j.tasks.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return j.tasks[a].pod_template.priority > j.tasks[b].pod_template.priority;
  });
  return order;
}

status too_long(std::string_view what, std::string_view name) {
  return {errc::invalid_argument, std::string(what) + " \"" + std::string(name) + "\" is " +
                                      std::to_string(name.size()) +
                                      " characters; a name must be at most 253"};
}

} // namespace

object_uid derived_uid(std::string_view job_uid, std::string_view object_name) {
  auto [h1, h2] = fnv1a_twice(job_uid, object_name, 0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL);
  // mix64 spreads FNV's weak low bits over the whole word.
  const uint64_t hi = mix64(h1);
  // Version 8 (custom), held as its bits: no text is made.
  return object_uid::make_uuid(hi, mix64(h2 ^ hi), 8);
}

const job_task* task_named(const job& j, std::string_view name) {
  for (std::size_t i = 0; i < j.tasks.size(); ++i)
    if (task_name(j.tasks[i], i) == name)
      return &j.tasks[i];
  return nullptr;
}

std::string task_name(const job_task& task, std::size_t index) {
  if (!task.name.empty())
    return task.name;
  return std::string(default_task_prefix) + std::to_string(index);
}

int32_t task_min_available(const job_task& task) noexcept {
  return task.min_available ? *task.min_available : task.replicas;
}

int32_t job_min_available(const job& j) noexcept {
  if (j.min_available && *j.min_available > 0)
    return *j.min_available;
  int64_t sum = 0;
  for (const auto& t : j.tasks)
    sum += task_min_available(t);
  return static_cast<int32_t>(std::clamp<int64_t>(sum, 0, INT32_MAX));
}

resources job_min_resources(const job& j) {
  const int32_t job_min = job_min_available(j);
  const auto order = tasks_by_priority(j);
  resources out;
  int32_t counted = 0;
  // 1. Each task's own minimum, while the job's minimum is not reached.
  for (auto i : order) {
    if (counted >= job_min)
      break;
    const auto& t = j.tasks[i];
    int32_t take = std::min(std::max(task_min_available(t), 0), job_min - counted);
    out += t.pod_template.requests.times(take);
    counted += take;
  }
  // 2. Fill up with the replicas beyond each task's minimum, higher priority first.
  for (auto i : order) {
    if (counted >= job_min)
      break;
    const auto& t = j.tasks[i];
    int32_t spare = std::max(t.replicas - std::max(task_min_available(t), 0), 0);
    int32_t take = std::min(spare, job_min - counted);
    out += t.pod_template.requests.times(take);
    counted += take;
  }
  return out;
}

std::string pod_group_name(const job& j) { return j.meta.name + "-" + j.meta.uid; }

std::string job_task_prefix(std::string_view job_name, std::string_view task) {
  std::string out(job_name);
  out += '-';
  out += task;
  return out;
}

void write_job_pod_name(std::string& out, std::string_view task_prefix, int32_t index) {
  out.assign(task_prefix);
  out += '-';
  out += std::to_string(index);
}

std::string job_pod_name(std::string_view job_name, std::string_view task, int32_t index) {
  std::string out;
  write_job_pod_name(out, job_task_prefix(job_name, task), index);
  return out;
}

namespace {

// expand_job, or only the pods at `only`'s positions (ascending) when it is not null.
result<expanded_job> expand(const job& j, const uid_generator& make_uid,
                            const std::vector<uint32_t>* only) {
  if (j.meta.name.empty())
    return status{errc::invalid_argument, "metadata.name: required"};
  if (j.meta.uid.empty())
    return status{errc::invalid_argument,
                  "metadata.uid: required (the PodGroup is named \"<job>-<uid>\")"};
  const std::string job_uid = j.meta.uid.str(); // Once: each object's uid derives from it.
  std::vector<std::string> names;
  names.reserve(j.tasks.size());
  for (std::size_t i = 0; i < j.tasks.size(); ++i) {
    if (j.tasks[i].replicas < 0)
      return status{errc::invalid_argument, "spec.tasks[" + std::to_string(i) +
                                                "].replicas: must be >= 0"};
    names.push_back(task_name(j.tasks[i], i));
  }
  {
    auto sorted = names;
    std::sort(sorted.begin(), sorted.end());
    if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end())
      return status{errc::invalid_argument, "spec.tasks: duplicate task name \"" + *dup + "\""};
  }

  expanded_job out;
  pod_group& g = out.group;
  g.meta.name = pod_group_name(j);
  if (g.meta.name.size() > max_subdomain_length)
    return too_long("PodGroup name", g.meta.name);
  g.meta.namespace_name = j.meta.namespace_name;
  g.meta.uid = make_uid(job_uid, g.meta.name);
  g.meta.labels = j.meta.labels;
  g.meta.annotations = j.meta.annotations;
  g.meta.creation_time = j.meta.creation_time;
  g.min_member = job_min_available(j);
  for (std::size_t i = 0; i < j.tasks.size(); ++i)
    g.min_task_member.push_back({names[i], task_min_available(j.tasks[i])});
  std::sort(g.min_task_member.begin(), g.min_task_member.end(),
            [](const auto& a, const auto& b) { return a.role < b.role; });
  g.min_resources = job_min_resources(j);
  g.queue = j.queue.empty() ? std::string(default_queue_name) : j.queue;
  g.priority_class_name = j.priority_class_name;
  g.priority = j.priority;
  if (auto sla = read_sla_waiting_time(g.meta); sla && *sla)
    g.sla_waiting_time = **sla;

  std::size_t total = 0;
  for (const auto& t : j.tasks)
    total += static_cast<std::size_t>(t.replicas);
  out.pods.reserve(only != nullptr ? only->size() : total);
  auto wanted = only != nullptr ? only->begin() : std::vector<uint32_t>::const_iterator{};
  uint32_t first = 0;  // The position of the task's first pod.
  // Made once: every pod's copy shares them (shared_string.hpp).
  const shared_string group_name = g.meta.name;
  const shared_string job_scheduler = j.scheduler_name;
  for (std::size_t ti = 0; ti < j.tasks.size(); ++ti) {
    const auto& t = j.tasks[ti];
    const uint32_t task_first = first;
    first += static_cast<uint32_t>(t.replicas);
    if (only != nullptr && (wanted == only->end() || *wanted >= first))
      continue;  // None of this task's pods.
    const std::string& tname = names[ti];
    const shared_string role_name = tname;
    const std::string template_uid = j.meta.name + "-" + tname;
    // The keys Volcano's job controller writes (createJobPod), over the template's own. All but
    // the task index are the same for every pod of the task: set once, then each pod's copy
    // shares them until its index is added.
    label_set task_annotations = label_set::builder(t.pod_template.meta.annotations)
                                     .add(task_spec_key, tname)
                                     .add(pod_group_annotation, g.meta.name)
                                     .add(job_name_key, j.meta.name)
                                     .add(queue_name_key, g.queue)
                                     .add(job_version_key, "0")
                                     .add(template_uid_key, template_uid)
                                     .add(job_retry_count_key, "0")
                                     // Each pod replaces the index (below): pod 0 shares the
                                     // task's set, the others hold a 32-byte replacing delta
                                     // rather than a 48-byte adding one (label_set's block).
                                     .add(task_index_key, "0")
                                     .build();
    label_set task_labels = label_set::builder(t.pod_template.meta.labels)
                                .add(job_name_key, j.meta.name)
                                .add(task_spec_key, tname)
                                .add(job_namespace_key, j.meta.namespace_name)
                                .add(queue_name_key, g.queue)
                                .add(task_index_key, "0")
                                .build();
    // Each pod's name is written into one buffer: the pod's name block is its only allocation.
    const std::string task_prefix = job_task_prefix(j.meta.name, tname);
    std::string name_text;
    auto make = [&](int32_t ix) -> status {
      pod p = t.pod_template;  // Copies the shared constraints and spec_json pointers.
      write_job_pod_name(name_text, task_prefix, ix);
      p.meta.name = name_text;
      if (p.meta.name.size() > max_subdomain_length)
        return too_long("pod name", p.meta.name);
      p.meta.namespace_name = j.meta.namespace_name;
      p.meta.uid = make_uid(job_uid, p.meta.name);
      p.meta.creation_time = j.meta.creation_time;
      p.meta.resource_version = 0;
      p.group = group_name;
      p.role = role_name;
      if (p.scheduler_name.empty())
        p.scheduler_name = job_scheduler;
      const std::string index = std::to_string(ix);
      p.meta.annotations = task_annotations;
      p.meta.annotations.set(task_index_key, index);
      p.meta.labels = task_labels;
      p.meta.labels.set(task_index_key, index);
      p.phase = pod_phase::pending;
      p.node_name.clear();
      p.start_time = {};
      p.finish_time = {};
      out.pods.push_back(std::move(p));
      return {};
    };
    if (only == nullptr) {
      for (int32_t ix = 0; ix < t.replicas; ++ix)
        if (auto s = make(ix); !s.ok())
          return s;
      continue;
    }
    // Earlier tasks took the positions below task_first.
    for (; wanted != only->end() && *wanted < first; ++wanted)
      if (auto s = make(static_cast<int32_t>(*wanted - task_first)); !s.ok())
        return s;
  }
  return out;
}

} // namespace

result<expanded_job> expand_job(const job& j, const uid_generator& make_uid) {
  return expand(j, make_uid, nullptr);
}

result<std::vector<pod>> make_job_pods(const job& j, const std::vector<uint32_t>& positions,
                                       const uid_generator& make_uid) {
  if (!std::is_sorted(positions.begin(), positions.end()) ||
      std::adjacent_find(positions.begin(), positions.end()) != positions.end())
    return status{errc::invalid_argument, "make_job_pods: positions must ascend"};
  auto expanded = expand(j, make_uid, &positions);
  if (!expanded)
    return expanded.error();
  if (expanded->pods.size() != positions.size())
    return status{errc::invalid_argument, "make_job_pods: a position past the job's last pod"};
  return std::move(expanded->pods);
}

void prepare_job_pod(pod& p, uint64_t resource_version) {
  p.meta.resource_version = resource_version;
  p.requests.pods = 1;
}

std::vector<std::string> job_pod_keys(const job& j) {
  std::vector<std::string> out;
  for (std::size_t ti = 0; ti < j.tasks.size(); ++ti) {
    const auto name = task_name(j.tasks[ti], ti);
    for (int32_t ix = 0; ix < j.tasks[ti].replicas; ++ix)
      out.push_back(j.meta.namespace_name + "/" + job_pod_name(j.meta.name, name, ix));
  }
  return out;
}

bool has_task_dependencies(const job& j) noexcept {
  return std::any_of(j.tasks.begin(), j.tasks.end(),
                     [](const job_task& t) { return !t.depends_on.empty(); });
}

bool pods_are_expansion(const job& j, const job_status& s) noexcept {
  return !j.suspended && s.version == 0 && !has_task_dependencies(j);
}

std::vector<job_task_range> job_task_ranges(const job& j) {
  std::vector<job_task_range> out;
  uint32_t first = 0;
  for (std::size_t t = 0; t < j.tasks.size(); ++t) {
    const int32_t replicas = std::max(j.tasks[t].replicas, 0);
    if (replicas > 0)
      out.push_back({job_task_prefix(j.meta.name, task_name(j.tasks[t], t)), first, replicas});
    first += static_cast<uint32_t>(replicas);
  }
  return out;
}

std::optional<std::pair<std::string_view, int32_t>> split_job_pod_name(std::string_view name) {
  auto dash = name.rfind('-');
  if (dash == std::string_view::npos)
    return std::nullopt;
  auto digits = name.substr(dash + 1);
  int32_t index = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  // After the last dash, so no sign; "07" is no index job_pod_name writes.
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() ||
      (digits.size() > 1 && digits[0] == '0'))
    return std::nullopt;
  return std::pair{name.substr(0, dash), index};
}

} // namespace phalanx::scheduler
