#include "scheduler/job_volumes.hpp"

#include "scheduler/random.hpp"

#include <algorithm>
#include <cstdint>

namespace phalanx::scheduler {

namespace {

// FNV-1a over `text`, its bits then spread by SplitMix64's finalizer: fixed by its definition,
// the same on every platform and in every build (std::hash is neither).
uint64_t stable_hash(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return mix64(h);
}

// 12 characters of [0-9a-z] from `bits` (36^12 < 2^64: every character carries some of them).
std::string base36_12(uint64_t bits) {
  static constexpr std::string_view digits = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string out(12, '0');
  for (auto i = out.size(); i-- > 0;) {
    out[i] = digits[bits % digits.size()];
    bits /= digits.size();
  }
  return out;
}

} // namespace

std::string generated_claim_name(std::string_view job_name, std::string_view job_uid,
                                 std::size_t volume) {
  return std::string(job_name) + "-pvc-" +
         base36_12(stable_hash(std::string(job_uid) + "/" + std::to_string(volume)));
}

bool name_volume_claims(job& j) {
  bool named = false;
  for (std::size_t i = 0; i < j.volumes.size(); ++i)
    if (j.volumes[i].volume_claim_name.empty()) {
      j.volumes[i].volume_claim_name =
          generated_claim_name(j.meta.name.view(), j.meta.uid.str(), i);
      named = true;
    }
  return named;
}

std::string pod_volume_name(std::string_view job_name, std::string_view claim) {
  return std::string(job_name) + "-" + base36_12(stable_hash(claim));
}

std::vector<std::string> named_claims(const job& j) {
  std::vector<std::string> out;
  for (const auto& v : j.volumes)
    if (!v.volume_claim_name.empty() &&
        std::find(out.begin(), out.end(), v.volume_claim_name) == out.end())
      out.push_back(v.volume_claim_name);
  return out;
}

std::string claim_resource_key(std::string_view claim) {
  return "volume-pvc-" + std::string(claim);
}

std::string claim_not_found_message(std::string_view claim) {
  return "pvc " + std::string(claim) +
         " is not found, the job will be in the Pending state until the PVC is created";
}

} // namespace phalanx::scheduler
