#pragma once

// Resource amounts as exact integers (DESIGN.md section 3): cpu in millicores, memory and
// ephemeral storage in bytes, pods as a count, and any extended resource ("nvidia.com/gpu",
// "hugepages-2Mi") as a count. No doubles, no epsilons.
//
// Two types with different meanings for a missing dimension:
// - `resources` is an amount: a request, usage, allocatable or free; missing means zero.
// - `resource_limit` is a cap: a queue's capability; missing means unlimited.
//
// Arithmetic saturates at the int64 range instead of wrapping, so a sum that cannot be represented
// stays visibly "huge" rather than turning small or negative. Validated inputs (validation.hpp caps
// every single quantity) cannot get anywhere near it in practice.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {

/// The names of the standard dimensions, as Kubernetes spells them.
inline constexpr std::string_view cpu_resource = "cpu";
inline constexpr std::string_view memory_resource = "memory";
inline constexpr std::string_view ephemeral_storage_resource = "ephemeral-storage";
inline constexpr std::string_view pods_resource = "pods";

/// True for "cpu", "memory", "ephemeral-storage" and "pods": the dimensions with fixed fields.
bool is_standard_resource(std::string_view name) noexcept;

/// Saturating int64 helpers, exposed for the code that accumulates amounts: the result is clamped
/// to [INT64_MIN, INT64_MAX] instead of wrapping.
int64_t saturating_add(int64_t a, int64_t b) noexcept;
int64_t saturating_sub(int64_t a, int64_t b) noexcept;
int64_t saturating_mul(int64_t a, int64_t b) noexcept;

/// An interned extended-resource name: a 4-byte handle, cheap to copy and compare.
///
/// Interning is thread-safe and append-only (like Ray's ResourceID map). Ids are process-local:
/// never persist them, persist `str()`. Handles order by id, which is stable within a process, so
/// sorted vectors of handles can be merged; display code sorts by `str()` when order shows.
class resource_name {
 public:
  /// The maximum number of distinct extended resource names a process accepts.
  static constexpr uint32_t max_names = 4096;

  /// Interns `name`; nullopt once `max_names` distinct names exist, and for an empty name or one
  /// of the standard dimensions (callers route those to the fixed fields, so "cpu" can never
  /// become an extended dimension). Thread-safe; interning an existing name takes a shared lock
  /// only. The name's characters are not validated here (validation.hpp does that).
  static std::optional<resource_name> intern(std::string_view name);

  /// The handle of an already interned name; nullopt otherwise. Never interns. Thread-safe.
  static std::optional<resource_name> find(std::string_view name);

  /// How many names are interned in this process (for tests and metrics).
  static uint32_t interned_count() noexcept;

  std::string_view str() const noexcept;
  uint32_t id() const noexcept { return id_; }

  friend auto operator<=>(resource_name, resource_name) = default;

 private:
  explicit resource_name(uint32_t id) : id_(id) {}
  uint32_t id_ = 0;
};

/// One extended dimension of a `resources` value.
struct extended_amount {
  resource_name name;
  int64_t amount = 0;
  friend bool operator==(const extended_amount&, const extended_amount&) = default;
};

/// An exact ratio num/den with den > 0, compared without rounding (128-bit cross products). Used
/// for shares. A negative den is compared as if both parts were negated.
struct ratio {
  int64_t num = 0;
  int64_t den = 1;
  double to_double() const noexcept { return den == 0 ? 0.0 : double(num) / double(den); }
  friend std::strong_ordering operator<=>(const ratio& a, const ratio& b) noexcept;
  friend bool operator==(const ratio& a, const ratio& b) noexcept {
    return (a <=> b) == std::strong_ordering::equal;
  }
};

/// A resource amount; a missing dimension is zero.
class resources {
 public:
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  int64_t ephemeral_bytes = 0;
  int64_t pods = 0;

  resources() = default;

  /// Builder-style setters for tests and literals: resources{}.cpu(500).memory(1 << 30).
  resources& with_cpu_milli(int64_t v) { cpu_milli = v; return *this; }
  resources& with_memory_bytes(int64_t v) { memory_bytes = v; return *this; }
  resources& with_ephemeral_bytes(int64_t v) { ephemeral_bytes = v; return *this; }
  resources& with_pods(int64_t v) { pods = v; return *this; }
  resources& with(std::string_view name, int64_t amount) { set(name, amount); return *this; }

  /// The amount of a dimension by its Kubernetes name; 0 when absent. An unknown extended name
  /// is absent (and is not interned by a read).
  int64_t get(std::string_view name) const noexcept;
  int64_t get(resource_name name) const noexcept;

  /// Sets a dimension by name. Returns false only when an extended name cannot be interned.
  bool set(std::string_view name, int64_t amount);
  void set(resource_name name, int64_t amount);

  /// Extended dimensions with a non-zero amount, sorted by handle.
  const std::vector<extended_amount>& extended() const noexcept { return extended_; }

  /// Sets every dimension to zero, keeping the storage (hot loops reuse one value).
  void reset() noexcept {
    cpu_milli = memory_bytes = ephemeral_bytes = pods = 0;
    extended_.clear();
  }

  bool is_zero() const noexcept;
  /// True when some dimension is below zero.
  bool any_negative() const noexcept;

  /// Saturating element-wise arithmetic.
  resources& operator+=(const resources& other);
  resources& operator-=(const resources& other);
  friend resources operator+(resources a, const resources& b) { return a += b; }
  friend resources operator-(resources a, const resources& b) { return a -= b; }

  /// Every dimension multiplied by n (saturating): the demand of n identical pods.
  resources times(int64_t n) const;
  /// Every dimension multiplied by num/den, rounded down (toward minus infinity), exact through
  /// 128-bit intermediates and saturating: allocatable * overcommit. Precondition: den != 0; with
  /// den == 0 every non-zero product saturates toward its sign (num/0 taken as infinite).
  resources scaled(int64_t num, int64_t den) const;
  /// Element-wise max(0, x).
  resources clamped_at_zero() const;
  /// Element-wise minimum and maximum.
  static resources min(const resources& a, const resources& b);
  static resources max(const resources& a, const resources& b);

  /// Calls f(std::string_view name, int64_t amount) for every non-zero dimension: the four
  /// standard ones first, then extended by handle order.
  template <class F>
  void for_each(F&& f) const {
    if (cpu_milli != 0) f(cpu_resource, cpu_milli);
    if (memory_bytes != 0) f(memory_resource, memory_bytes);
    if (ephemeral_bytes != 0) f(ephemeral_storage_resource, ephemeral_bytes);
    if (pods != 0) f(pods_resource, pods);
    for (const auto& e : extended_)
      f(e.name.str(), e.amount);
  }

  /// "cpu: 500m, memory: 2Gi, nvidia.com/gpu: 1", dimensions sorted as Kubernetes prints them
  /// (standard first, then extended by name); "none" when zero.
  std::string to_string() const;

  friend bool operator==(const resources&, const resources&) = default;

 private:
  // Sorted by handle, no zero amounts: equality and merges stay simple.
  std::vector<extended_amount> extended_;
};

/// True when every dimension the request uses (amount > 0) is <= that of `available`. As in
/// kube-scheduler, a dimension the request does not use always fits, so a node whose free amount
/// of some resource went negative (allocatable shrank) still takes pods that do not need it.
bool fits(const resources& request, const resources& available) noexcept;

/// A dimension where a request exceeds what is available.
struct shortfall {
  std::string resource;  // Kubernetes name: "cpu", "nvidia.com/gpu".
  int64_t requested = 0;
  int64_t available = 0;
  int64_t missing() const noexcept { return saturating_sub(requested, available); }
  friend bool operator==(const shortfall&, const shortfall&) = default;
};

/// The dimensions the request uses (amount > 0) where it exceeds `available`: standard ones first
/// (cpu, memory, ephemeral-storage, pods), then extended by name. Empty exactly when
/// fits(request, available).
std::vector<shortfall> shortfalls(const resources& request, const resources& available);

/// The largest amount_i / total_i over the dimensions where `amount` is positive (DRF's dominant
/// share), as an exact ratio. A dimension with total <= 0 and a positive amount counts as share 1
/// (fully used). 0/1 when no dimension of `amount` is positive. A share may exceed 1 when the
/// amount exceeds the total.
ratio dominant_share(const resources& amount, const resources& total) noexcept;

/// A cap per dimension; a dimension without a cap is unlimited.
class resource_limit {
 public:
  resource_limit() = default;
  static resource_limit unlimited() { return {}; }

  /// Caps a dimension by name (replacing an earlier cap). Returns false only when an extended name
  /// cannot be interned (it is interned so that clamp() can produce it).
  bool set(std::string_view name, int64_t cap);
  /// The cap of a dimension; nullopt when unlimited.
  std::optional<int64_t> get(std::string_view name) const noexcept;

  bool is_unlimited() const noexcept { return caps_.empty(); }

  /// True when every capped dimension of `amount` is <= its cap.
  bool allows(const resources& amount) const noexcept;

  /// For each capped dimension, min(cap, amount); uncapped dimensions take `amount`.
  resources clamp(const resources& amount) const;

  /// Calls f(std::string_view name, int64_t cap) for every capped dimension.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& c : caps_)
      f(std::string_view{c.name}, c.cap);
  }

  /// "cpu: 10, memory: 64Gi" or "unlimited"; standard dimensions first, then extended by name.
  std::string to_string() const;

  friend bool operator==(const resource_limit&, const resource_limit&) = default;

 private:
  struct cap_entry {
    std::string name;  // Kubernetes name, standard or extended.
    int64_t cap = 0;
    friend bool operator==(const cap_entry&, const cap_entry&) = default;
  };
  std::vector<cap_entry> caps_;  // Sorted by name.
};

} // namespace phalanx::scheduler
