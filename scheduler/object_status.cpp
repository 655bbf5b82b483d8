#include "scheduler/object_status.hpp"

namespace phalanx::scheduler {

std::string_view to_string(job_phase p) noexcept {
  switch (p) {
    case job_phase::pending:
      return "Pending";
    case job_phase::aborting:
      return "Aborting";
    case job_phase::aborted:
      return "Aborted";
    case job_phase::running:
      return "Running";
    case job_phase::restarting:
      return "Restarting";
    case job_phase::completing:
      return "Completing";
    case job_phase::completed:
      return "Completed";
    case job_phase::terminating:
      return "Terminating";
    case job_phase::terminated:
      return "Terminated";
    case job_phase::failed:
      return "Failed";
  }
  return "Unknown";
}

} // namespace phalanx::scheduler
