#include "api/service.hpp"

#include <utility>

namespace phalanx::api {

std::string_view to_string(resource_kind k) noexcept {
  switch (k) {
    case resource_kind::pod:
      return "pods";
    case resource_kind::node:
      return "nodes";
    case resource_kind::pod_group:
      return "podgroups";
    case resource_kind::queue:
      return "queues";
    case resource_kind::job:
      return "jobs";
    case resource_kind::priority_class:
      return "priorityclasses";
  }
  return "unknown";
}

resource_kind kind_of(const object& o) noexcept {
  return static_cast<resource_kind>(o.index());
}

const scheduler::object_meta& meta_of(const object& o) noexcept {
  switch (o.index()) {
    case 0:
      return std::get<pod_object>(o).pod.meta;
    case 1:
      return std::get<node_object>(o).node.meta;
    case 2:
      return std::get<pod_group_object>(o).group.meta;
    case 3:
      return std::get<queue_object>(o).queue.meta;
    case 4:
      return std::get<job_object>(o).job.meta;
    default:
      return std::get<priority_class_object>(o).priority_class.meta;
  }
}

scheduler::object_meta& meta_of(object& o) noexcept {
  return const_cast<scheduler::object_meta&>(meta_of(std::as_const(o)));
}

std::string_view to_string(watch_event::type t) noexcept {
  switch (t) {
    case watch_event::type::added:
      return "ADDED";
    case watch_event::type::modified:
      return "MODIFIED";
    case watch_event::type::deleted:
      return "DELETED";
  }
  return "ERROR";
}

std::string_view to_string(object_action::type t) noexcept {
  switch (t) {
    case object_action::type::cordon:
      return "cordon";
    case object_action::type::uncordon:
      return "uncordon";
    case object_action::type::suspend:
      return "suspend";
    case object_action::type::resume:
      return "resume";
    case object_action::type::open:
      return "open";
    case object_action::type::close:
      return "close";
    case object_action::type::fail_pod:
      return "fail";
  }
  return "unknown";
}

} // namespace phalanx::api
