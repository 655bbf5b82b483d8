#include "actors/runtime_config.hpp"

#include "scheduler/quantity.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>

namespace phalanx::actors {

namespace {

status bad(const std::string& path, const std::string& rule) {
  return {errc::invalid_argument, "config " + path + ": " + rule};
}

template <class Duration>
status read_duration(const YAML::Node& v, const std::string& path, Duration& out) {
  if (!v.IsScalar())
    return bad(path, "must be a duration such as \"500ms\" or \"2s\"");
  auto ns = scheduler::parse_duration_ns(v.as<std::string>());
  if (!ns)
    return bad(path, ns.error().message());
  out = std::chrono::duration_cast<Duration>(std::chrono::nanoseconds{*ns});
  return {};
}

// Reads an integer in [lo, hi] into `out`, of any integer type that holds the range.
template <class Int>
status read_int(const YAML::Node& v, const std::string& path, int64_t lo, int64_t hi, Int& out) {
  int64_t x = 0;
  try {
    x = v.as<int64_t>();
  } catch (const YAML::Exception&) {
    return bad(path, "must be an integer");
  }
  if (x < lo || x > hi)
    return bad(path, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  out = static_cast<Int>(x);
  return {};
}

status read_bool(const YAML::Node& v, const std::string& path, bool& out) {
  try {
    out = v.as<bool>();
  } catch (const YAML::Exception&) {
    return bad(path, "must be true or false");
  }
  return {};
}

using field_reader = std::function<status(const YAML::Node&, const std::string&)>;

// Reads a map whose keys must all be known: an unknown key is an error naming it, so a typo never
// silently leaves a default in place.
status read_map(const YAML::Node& node, const std::string& path,
                const std::vector<std::pair<std::string, field_reader>>& fields) {
  if (!node.IsMap())
    return bad(path.empty() ? "(top level)" : path, "must be a map");
  for (const auto& kv : node) {
    auto key = kv.first.as<std::string>();
    auto field = path.empty() ? key : path + "." + key;
    auto f = std::find_if(fields.begin(), fields.end(),
                          [&](const auto& e) { return e.first == key; });
    if (f == fields.end()) {
      std::string known;
      for (const auto& e : fields)
        known += (known.empty() ? "" : ", ") + e.first;
      return bad(field, "unknown key (known here: " + known + ")");
    }
    if (auto s = f->second(kv.second, field); !s.ok())
      return s;
  }
  return {};
}

} // namespace

bool is_our_scheduler(const scheduling_config& config, std::string_view scheduler_name) {
  if (scheduler_name.empty())
    return true;
  return std::find(config.scheduler_names.begin(), config.scheduler_names.end(),
                   scheduler_name) != config.scheduler_names.end();
}

std::optional<int32_t> priority_of(const scheduling_config& config, std::string_view name) {
  auto i = config.priority_classes.find(name);
  if (i == config.priority_classes.end())
    return std::nullopt;
  return i->second;
}

result<runtime_config> parse_runtime_config(const std::string& yaml_text) {
  runtime_config c;
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return status{errc::invalid_argument, std::string("config is not valid YAML: ") + e.what()};
  }
  if (root.IsNull())
    return c;  // An empty file: every default.
  auto& s = c.scheduling;
  auto& p = s.planner;
  try {
    auto planner = [&](const YAML::Node& n, const std::string& path) {
      return read_map(n, path, {
        {"strategy", [&](const YAML::Node& v, const std::string& f) {
           auto strategy = scheduler::score_strategy_from_string(v.as<std::string>());
           if (!strategy)
             return bad(f, "Unsupported value \"" + v.as<std::string>() +
                               "\": supported values: \"binpack\", \"spread\"");
           p.strategy = *strategy;
           return status{};
         }},
        {"weights", [&](const YAML::Node& v, const std::string& f) {
           if (!v.IsMap())
             return bad(f, "must be a map of resource name to weight");
           std::vector<std::pair<std::string, int64_t>> pairs;
           for (const auto& w : v)
             pairs.emplace_back(w.first.as<std::string>(), w.second.as<int64_t>());
           auto weights = scheduler::score_weights::from_pairs(pairs);
           if (!weights)
             return bad(f, weights.error().message());
           p.weights = std::move(*weights);
           return status{};
         }},
        {"percentageOfNodesToScore", [&](const YAML::Node& v, const std::string& f) {
           return read_int(v, f, 0, 100, p.percentage_of_nodes_to_score);
         }},
        {"minFeasibleNodes", [&](const YAML::Node& v, const std::string& f) {
           return read_int(v, f, 1, 1000000, p.min_feasible_nodes);
         }},
        {"searchBudget", [&](const YAML::Node& v, const std::string& f) {
           return read_int(v, f, 0, int64_t{1} << 40, p.search_budget);
         }},
      });
    };
    auto scheduling = [&](const YAML::Node& n, const std::string& path) {
      return read_map(n, path, {
        {"gangScheduling", [&](const YAML::Node& v, const std::string& f) {
           return read_bool(v, f, s.gang_scheduling);
         }},
        {"overcommitFactor", [&](const YAML::Node& v, const std::string& f) {
           auto factor = scheduler::parse_overcommit_factor(v.as<std::string>());
           if (!factor)
             return bad(f, factor.error().message());
           s.enqueue.overcommit_factor = *factor;
           return status{};
         }},
        {"maxPlanningPerQueue", [&](const YAML::Node& v, const std::string& f) {
           return read_int(v, f, 1, 100000, s.max_planning_per_queue);
         }},
        {"maxReplans", [&](const YAML::Node& v, const std::string& f) {
           return read_int(v, f, 0, 100, s.max_replans);
         }},
        {"countReservesInFlight", [&](const YAML::Node& v, const std::string& f) {
           return read_bool(v, f, s.count_reserves_in_flight);
         }},
        {"backoffInitial", [&](const YAML::Node& v, const std::string& f) {
           return read_duration(v, f, s.backoff_initial);
         }},
        {"backoffMax", [&](const YAML::Node& v, const std::string& f) {
           return read_duration(v, f, s.backoff_max);
         }},
        {"fairShareDebounce", [&](const YAML::Node& v, const std::string& f) {
           return read_duration(v, f, s.fair_share_debounce);
         }},
        {"preemption", [&](const YAML::Node& v, const std::string& f) {
           return read_bool(v, f, s.preemption);
         }},
        {"reclaim", [&](const YAML::Node& v, const std::string& f) {
           return read_bool(v, f, s.reclaim);
         }},
        {"preemptionWait", [&](const YAML::Node& v, const std::string& f) {
           return read_duration(v, f, s.preemption_wait);
         }},
        {"starvationBound", [&](const YAML::Node& v, const std::string& f) {
           return read_duration(v, f, s.starvation_bound);
         }},
        {"parkIdleGangsAfter", [&](const YAML::Node& v, const std::string& f) {
           return read_duration(v, f, s.park_idle_gangs_after);
         }},
        {"schedulerNames", [&](const YAML::Node& v, const std::string& f) {
           if (!v.IsSequence())
             return bad(f, "must be a list of names");
           s.scheduler_names.clear();
           for (const auto& name : v)
             s.scheduler_names.push_back(name.as<std::string>());
           return status{};
         }},
        {"priorityClasses", [&](const YAML::Node& v, const std::string& f) {
           if (!v.IsMap())
             return bad(f, "must be a map of class name to priority");
           for (const auto& kv : v) {
             int32_t priority = 0;
             if (auto st = read_int(kv.second, f + "." + kv.first.as<std::string>(),
                                    -2147483648LL, 2147483647LL, priority);
                 !st.ok())
               return st;
             s.priority_classes[kv.first.as<std::string>()] = priority;
           }
           return status{};
         }},
        {"planner", planner},
      });
    };
    auto store = [&](const YAML::Node& n, const std::string& path) {
      return read_map(n, path, {
        {"commitWindow", [&](const YAML::Node& v, const std::string& f) {
           return read_duration(v, f, c.store.commit_window);
         }},
        {"maxBatchRecords", [&](const YAML::Node& v, const std::string& f) {
           return read_int(v, f, 1, 1000000, c.store.max_batch_records);
         }},
        {"flushWhenIdleAfter", [&](const YAML::Node& v, const std::string& f) {
           return read_duration(v, f, c.store.flush_when_idle_after);
         }},
        {"flushWhenIdleAbove", [&](const YAML::Node& v, const std::string& f) {
           return read_int(v, f, 0, int64_t{1} << 40, c.store.flush_when_idle_above);
         }},
      });
    };
    auto simulation = [&](const YAML::Node& n, const std::string& path) {
      return read_map(n, path, {
        {"podStartDelay", [&](const YAML::Node& v, const std::string& f) {
           return read_duration(v, f, c.simulation.pod_start_delay);
         }},
        {"stallCheckInterval", [&](const YAML::Node& v, const std::string& f) {
           return read_duration(v, f, c.simulation.stall_check_interval);
         }},
      });
    };
    auto top = read_map(root, "", {
      {"scheduling", scheduling},
      {"store", store},
      {"simulation", simulation},
      {"threads", [&](const YAML::Node& v, const std::string& f) {
         return read_int(v, f, 1, 256, c.threads);
       }},
      {"watchHistory", [&](const YAML::Node& v, const std::string& f) {
         return read_int(v, f, 1, 10'000'000, c.watch_history);
       }},
      {"seed", [&](const YAML::Node& v, const std::string&) {
         c.seed = v.as<uint64_t>();
         return status{};
       }},
    });
    if (!top.ok())
      return top;
  } catch (const YAML::Exception& e) {
    return status{errc::invalid_argument, std::string("config: ") + e.what()};
  }
  if (s.backoff_max < s.backoff_initial)
    return bad("scheduling.backoffMax", "must not be shorter than scheduling.backoffInitial");
  return c;
}

} // namespace phalanx::actors
