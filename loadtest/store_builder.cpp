#include "loadtest/store_builder.hpp"

#include "scheduler/job.hpp"
#include "storage/store.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

namespace phalanx::loadtest {

namespace sch = phalanx::scheduler;
namespace ps = phalanx::storage;

status validate(const restart_store_spec& s) {
  auto bad = [](const std::string& flag, const std::string& rule) {
    return status{errc::invalid_argument, "--" + flag + ": " + rule};
  };
  if (s.groups < 1)
    return bad("podgroups", "must be at least 1");
  if (s.pods < s.groups)
    return bad("pods", "must be at least --podgroups (every PodGroup has a pod)");
  if (s.nodes < 1)
    return bad("nodes", "must be at least 1");
  if (s.queues < 1)
    return bad("queues", "must be at least 1");
  if (s.jobs < 0 || s.jobs > s.groups)
    return bad("jobs", "must be between 0 and --podgroups");
  if (s.spec_bytes < 64 || s.spec_bytes > 1 << 20)
    return bad("spec-bytes", "must be between 64 and 1048576");
  return {};
}

namespace {

std::string uid(int kind, int64_t i64) {
  auto i = static_cast<uint32_t>(i64);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-4%03x-8%03x-%012x", i * 2654435761u, kind & 0xffff,
                i & 0xfffu, (i >> 12) & 0xfffu, i * 40503u);
  return buf;
}

std::string spec_json(int64_t group, int task, int64_t bytes) {
  // The container asks for what the record's `requests` say (1 cpu, 2Gi), as the spec of a pod
  // created through the API does: describe reads a pod's requests from its containers.
  std::string s = "{\"containers\":[{\"name\":\"main\",\"image\":\"registry.example.com/train:" +
                  std::to_string(group % 50) + "\",\"args\":[\"--task=" + std::to_string(task) +
                  "\"],\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"2Gi\"}},"
                  "\"env\":[";
  // Padded to about `bytes` with variables; valid JSON (no trailing comma), or the daemon shows
  // the pod without its spec.
  for (bool first = true; static_cast<int64_t>(s.size()) < bytes - 40; first = false)
    s += std::string(first ? "" : ",") + "{\"name\":\"VAR_" + std::to_string(s.size()) +
         "\",\"value\":\"x\"}";
  s += "]}]}";
  return s;
}

} // namespace

result<restart_store_stats> build_restart_store(const restart_store_spec& c,
                                                const std::string& dir) {
  if (auto s = validate(c); !s.ok())
    return s;
  auto started = std::chrono::steady_clock::now();
  auto sim = c.end_like_kill ? ps::power_loss_simulator::create() : nullptr;
  ps::store_options o;
  o.path = dir;
  o.fault_injection = sim;
  auto opened = ps::store::open(o);
  if (!opened)
    return status{opened.error().code(), "open " + dir + ": " + opened.error().message()};
  if (!(*opened)->recovery().created)
    return status{errc::already_exists, dir + " already holds a store"};
  auto& st = **opened;
  restart_store_stats stats;
  ps::write_batch batch;
  status failed;
  auto flush = [&](bool force) {
    if (batch.size() >= 1000 || (force && !batch.empty())) {
      stats.records += static_cast<int64_t>(batch.size());
      auto s = st.write(batch);
      if (!s.ok() && failed.ok())
        failed = s;
      batch = ps::write_batch();
    }
  };
  uint64_t version = 1;
  for (int64_t i = 0; i < c.queues; ++i) {
    ps::queue_record q;
    q.queue.meta.name = "queue-" + std::to_string(i);
    q.queue.meta.uid = uid(1, i);
    q.queue.meta.resource_version = version++;
    q.queue.weight = static_cast<int32_t>(1 + i % 4);
    (void)q.queue.capability.set("cpu", 10'000'000);
    batch.put(q);
  }
  for (int64_t i = 0; i < c.nodes; ++i) {
    sch::node n;
    n.meta.name = "node-" + std::to_string(i);
    n.meta.uid = uid(2, i);
    n.meta.resource_version = version++;
    n.meta.labels.set("kubernetes.io/hostname", n.meta.name);
    n.meta.labels.set("topology.kubernetes.io/zone", "zone-" + std::to_string(i % 3));
    n.meta.labels.set("node.kubernetes.io/instance-type", "m5.8xlarge");
    n.allocatable.cpu_milli = 32'000;
    n.allocatable.memory_bytes = int64_t{128} << 30;
    n.allocatable.pods = 110;
    if (i % 10 == 0) {
      (void)n.allocatable.set("nvidia.com/gpu", 8);
      n.taints.push_back({"nvidia.com/gpu", "present", sch::taint_effect::no_schedule});
    }
    batch.put(n);
    flush(false);
  }
  const int64_t per_group = c.pods / c.groups;
  const int64_t extra = c.pods % c.groups;
  int64_t pod_index = 0;
  for (int64_t g = 0; g < c.groups; ++g) {
    std::string ns = "team-" + std::to_string(g % 20);
    std::string name = "job-" + std::to_string(g);
    std::string queue = "queue-" + std::to_string(g % c.queues);
    int64_t members = per_group + (g < extra ? 1 : 0);
    // Two tasks per group ("ps" and "worker"), each from one template.
    std::shared_ptr<const sch::placement_constraints> task_constraints[2];
    scheduler::shared_string task_spec[2];
    for (int t = 0; t < 2; ++t) {
      sch::placement_constraints pc;
      pc.node_selector.set("topology.kubernetes.io/zone", "zone-" + std::to_string(g % 3));
      if (t == 1)
        pc.tolerations.push_back({"nvidia.com/gpu", sch::toleration_operator::exists, "",
                                  sch::taint_effect::no_schedule, std::nullopt});
      task_constraints[t] = std::make_shared<const sch::placement_constraints>(std::move(pc));
      task_spec[t] = scheduler::shared_string(spec_json(g, t, c.spec_bytes));
    }
    // Every second pod (every pod with all_bound) bound and started as the runtime records it:
    // two state updates merged into its key (the whole pod was written before, or it is its
    // job's expansion and never is).
    auto bind_some = [&](sch::pod& p) {
      if (!c.all_bound && pod_index % 2 != 0)
        return;
      p.node_name = "node-" + std::to_string(pod_index % std::max<int64_t>(1, c.nodes));
      p.meta.resource_version = version++;
      batch.put_pod_state(std::make_shared<const sch::pod>(p), sch::runtime_of(p));
      p.phase = sch::pod_phase::running;
      p.start_time = sch::timestamp{std::chrono::seconds(1'700'000'000 + pod_index)};
      p.meta.resource_version = version++;
      batch.put_pod_state(std::make_shared<const sch::pod>(p), sch::runtime_of(p));
      ++stats.bound_pods;
    };

    if (g < c.jobs) {
      // As the runtime stores a job: the job and its PodGroup, and its pods (the job's
      // expansion) only through their state updates (storage/README.md).
      ps::job_record j;
      j.job.meta.name = name;
      j.job.meta.namespace_name = ns;
      j.job.meta.uid = uid(4, g);
      j.job.meta.resource_version = version++;
      j.job.queue = queue;
      j.job.scheduler_name = "phalanx";
      for (int t = 0; t < 2; ++t) {
        sch::job_task task;
        task.name = t == 0 ? "ps" : "worker";
        task.replicas = static_cast<int32_t>(t == 0 ? 1 : members - 1);
        task.pod_template.requests.cpu_milli = 1000;
        task.pod_template.requests.memory_bytes = int64_t{2} << 30;
        task.pod_template.requests.pods = 1;
        task.pod_template.constraints = task_constraints[t];
        task.pod_template.spec_json = task_spec[t];
        j.job.tasks.push_back(std::move(task));
      }
      j.job.plugins = {{"env", {}}, {"svc", {}}};
      j.status.phase = sch::job_phase::running;
      auto expanded = sch::expand_job(j.job);
      if (!expanded)
        return expanded.error();
      expanded->group.meta.resource_version = j.job.meta.resource_version;
      batch.put(j);
      batch.put(ps::pod_group_record{expanded->group});
      for (auto& p : expanded->pods) {
        sch::prepare_job_pod(p, j.job.meta.resource_version);
        bind_some(p);
        ++pod_index;
      }
      flush(false);
      continue;
    }

    ps::pod_group_record pg;
    pg.group.meta.name = name;
    pg.group.meta.namespace_name = ns;
    pg.group.meta.uid = uid(3, g);
    pg.group.meta.resource_version = version++;
    pg.group.min_member = static_cast<int32_t>(members);
    pg.group.queue = queue;
    pg.group.min_resources.cpu_milli = 1000 * members;
    batch.put(pg);
    for (int64_t m = 0; m < members; ++m, ++pod_index) {
      int t = m == 0 ? 0 : 1;
      sch::pod p;
      p.meta.name = name + (t == 0 ? "-ps-" : "-worker-") + std::to_string(m);
      p.meta.namespace_name = ns;
      p.meta.uid = uid(5, pod_index);
      p.meta.resource_version = version++;
      if (!c.bare_pods) {
        p.meta.labels.set(sch::job_name_key, name);
        p.meta.labels.set(sch::job_namespace_key, ns);
        p.meta.labels.set(sch::queue_name_key, queue);
        p.meta.labels.set(sch::task_spec_key, t == 0 ? "ps" : "worker");
        p.meta.annotations.set(sch::pod_group_annotation, name);
        p.meta.annotations.set(sch::task_index_key, std::to_string(m));
      }
      p.group = name;
      p.role = t == 0 ? "ps" : "worker";
      p.requests.cpu_milli = 1000;
      p.requests.memory_bytes = int64_t{2} << 30;
      p.requests.pods = 1;
      p.scheduler_name = "phalanx";
      p.constraints = task_constraints[t];
      p.spec_json = task_spec[t];
      batch.put(p);
      bind_some(p);
    }
    flush(false);
  }
  flush(true);
  if (sim)
    sim->kill(); // The store closes without flushing: the WAL keeps what it holds.
  opened->reset();
  if (sim)
    sim->reset();
  if (!failed.ok())
    return failed;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return stats;
}

} // namespace phalanx::loadtest
