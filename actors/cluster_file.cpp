#include "actors/cluster_file.hpp"

#include "scheduler/quantity.hpp"
#include "scheduler/validation.hpp"

#include <yaml-cpp/yaml.h>

namespace phalanx::actors {

namespace {

status bad(const std::string& path, const std::string& rule) {
  return {errc::invalid_argument, path + ": " + rule};
}

std::optional<scheduler::taint_effect> effect_from(const std::string& text) {
  for (int i = 0; i <= static_cast<int>(scheduler::taint_effect_last); ++i) {
    auto e = static_cast<scheduler::taint_effect>(i);
    if (scheduler::to_string(e) == text)
      return e;
  }
  return std::nullopt;
}

status set_amount(scheduler::node& n, const std::string& path, std::string_view resource,
                  const YAML::Node& value) {
  if (!value.IsScalar())
    return bad(path, "must be a quantity such as \"4\" or \"16Gi\"");
  auto amount = scheduler::parse_resource_amount(resource, value.as<std::string>());
  if (!amount)
    return bad(path, amount.error().message());
  if (!n.allocatable.set(resource, *amount))
    return bad(path, "too many distinct extended resource names");
  return {};
}

} // namespace

result<std::vector<scheduler::node>> parse_cluster_file(const std::string& yaml_text) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return status{errc::invalid_argument, std::string("cluster file is not valid YAML: ") +
                                              e.what()};
  }
  if (!root.IsMap() || !root["nodes"] || !root["nodes"].IsSequence())
    return bad("nodes", "the cluster file must have a list `nodes`");
  std::vector<scheduler::node> out;
  std::size_t index = 0;
  try {
    for (const auto& entry : root["nodes"]) {
      auto path = "nodes[" + std::to_string(index++) + "]";
      if (!entry.IsMap())
        return bad(path, "must be a map with name, count, cpu, memory, ...");
      scheduler::node shape;
      shape.allocatable.pods = 110;
      std::string name;
      int64_t count = 1;
      bool exact = false;
      for (const auto& kv : entry) {
        auto key = kv.first.as<std::string>();
        auto field = path + "." + key;
        const auto& v = kv.second;
        if (key == "name") {
          name = v.as<std::string>();
        } else if (key == "count") {
          count = v.as<int64_t>();
          if (count < 1 || count > max_cluster_file_nodes)
            return bad(field, "must be between 1 and " + std::to_string(max_cluster_file_nodes));
        } else if (key == "exact") {
          exact = v.as<bool>();
        } else if (key == "cpu") {
          if (auto s = set_amount(shape, field, scheduler::cpu_resource, v); !s.ok())
            return s;
        } else if (key == "memory") {
          if (auto s = set_amount(shape, field, scheduler::memory_resource, v); !s.ok())
            return s;
        } else if (key == "ephemeralStorage") {
          if (auto s = set_amount(shape, field, scheduler::ephemeral_storage_resource, v); !s.ok())
            return s;
        } else if (key == "gpu") {
          if (auto s = set_amount(shape, field, "nvidia.com/gpu", v); !s.ok())
            return s;
        } else if (key == "pods") {
          if (auto s = set_amount(shape, field, scheduler::pods_resource, v); !s.ok())
            return s;
        } else if (key == "extended") {
          if (!v.IsMap())
            return bad(field, "must be a map of resource name to amount");
          for (const auto& e : v)
            if (auto s = set_amount(shape, field + "." + e.first.as<std::string>(),
                                    e.first.as<std::string>(), e.second);
                !s.ok())
              return s;
        } else if (key == "labels") {
          if (!v.IsMap())
            return bad(field, "must be a map of label keys to values");
          for (const auto& l : v)
            shape.meta.labels.set(l.first.as<std::string>(), l.second.as<std::string>());
        } else if (key == "taints") {
          if (!v.IsSequence())
            return bad(field, "must be a list of {key, value, effect}");
          std::size_t ti = 0;
          for (const auto& t : v) {
            auto tpath = field + "[" + std::to_string(ti++) + "]";
            scheduler::taint taint;
            taint.key = t["key"] ? t["key"].as<std::string>() : "";
            taint.value = t["value"] ? t["value"].as<std::string>() : "";
            auto effect = t["effect"] ? t["effect"].as<std::string>() : "NoSchedule";
            auto e = effect_from(effect);
            if (!e)
              return bad(tpath + ".effect",
                         "Unsupported value \"" + effect +
                             "\": supported values: \"NoSchedule\", \"PreferNoSchedule\", "
                             "\"NoExecute\"");
            taint.effect = *e;
            shape.taints.push_back(std::move(taint));
          }
        } else if (key == "unschedulable") {
          shape.unschedulable = v.as<bool>();
        } else {
          return bad(field, "unknown field (known: name, count, exact, cpu, memory, "
                            "ephemeralStorage, gpu, pods, extended, labels, taints, "
                            "unschedulable)");
        }
      }
      if (name.empty())
        return bad(path + ".name", "Required value: every node shape needs a name");
      if (static_cast<int64_t>(out.size()) + count > max_cluster_file_nodes)
        return bad(path + ".count", "the file describes more than " +
                                        std::to_string(max_cluster_file_nodes) + " nodes");
      for (int64_t i = 0; i < count; ++i) {
        auto n = shape;
        n.meta.name = (exact && count == 1) ? name : name + "-" + std::to_string(i);
        auto errors = scheduler::validate(n);
        if (!errors.empty())
          return bad(path, errors.front().to_string());
        out.push_back(std::move(n));
      }
    }
  } catch (const YAML::Exception& e) {
    return status{errc::invalid_argument,
                  "nodes[" + std::to_string(index == 0 ? 0 : index - 1) + "]: " + e.what()};
  }
  return out;
}

} // namespace phalanx::actors
