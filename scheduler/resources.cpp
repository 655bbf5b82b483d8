#include "scheduler/resources.hpp"

#include "scheduler/quantity.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

namespace phalanx::scheduler {

namespace {

constexpr int64_t int64_max = std::numeric_limits<int64_t>::max();
constexpr int64_t int64_min = std::numeric_limits<int64_t>::min();

int64_t saturate(__int128 v) noexcept {
  if (v > int64_max)
    return int64_max;
  if (v < int64_min)
    return int64_min;
  return int64_t(v);
}

// The process-wide intern table. Append-only: a name's slot is written before its id is
// published (under the exclusive lock, with a release store), so str() reads a slot without a
// lock once it holds a handle. Never destroyed, so handles stay valid during static destruction.
struct name_table {
  std::shared_mutex mutex;
  // Keys view the strings owned by `names`, which never move or die.
  std::unordered_map<std::string_view, uint32_t> ids;
  std::array<std::atomic<const std::string*>, resource_name::max_names> names{};
  std::atomic<uint32_t> count{0};
};

name_table& table() {
  static name_table* t = new name_table(); // Leaked on purpose; see name_table.
  return *t;
}

} // namespace

bool is_standard_resource(std::string_view name) noexcept {
  return name == cpu_resource || name == memory_resource || name == ephemeral_storage_resource ||
         name == pods_resource;
}

// ---------------------------------------------------------------------------------------------
// resource_name

std::optional<resource_name> resource_name::find(std::string_view name) {
  auto& t = table();
  std::shared_lock lock(t.mutex);
  auto it = t.ids.find(name);
  if (it == t.ids.end())
    return std::nullopt;
  return resource_name(it->second);
}

std::optional<resource_name> resource_name::intern(std::string_view name) {
  if (name.empty() || is_standard_resource(name))
    return std::nullopt;
  if (auto existing = find(name))
    return existing;
  auto& t = table();
  std::unique_lock lock(t.mutex);
  // Another thread may have interned it between the two locks.
  if (auto it = t.ids.find(name); it != t.ids.end())
    return resource_name(it->second);
  uint32_t id = t.count.load(std::memory_order_relaxed);
  if (id >= max_names)
    return std::nullopt;
  auto owned = std::make_unique<const std::string>(name);
  const std::string* raw = owned.release(); // Owned by the table from here on, forever.
  t.names[id].store(raw, std::memory_order_release);
  t.ids.emplace(std::string_view(*raw), id);
  t.count.store(id + 1, std::memory_order_release);
  return resource_name(id);
}

uint32_t resource_name::interned_count() noexcept {
  return table().count.load(std::memory_order_acquire);
}

std::string_view resource_name::str() const noexcept {
  if (id_ >= max_names)
    return {};
  const std::string* s = table().names[id_].load(std::memory_order_acquire);
  return s ? std::string_view(*s) : std::string_view();
}

// ---------------------------------------------------------------------------------------------
// ratio

std::strong_ordering operator<=>(const ratio& a, const ratio& b) noexcept {
  __int128 an = a.num, ad = a.den, bn = b.num, bd = b.den;
  if (ad < 0) {
    an = -an;
    ad = -ad;
  }
  if (bd < 0) {
    bn = -bn;
    bd = -bd;
  }
  // |num| and |den| are below 2^63, so each product is below 2^126.
  __int128 left = an * bd;
  __int128 right = bn * ad;
  if (left < right)
    return std::strong_ordering::less;
  if (left > right)
    return std::strong_ordering::greater;
  return std::strong_ordering::equal;
}

// ---------------------------------------------------------------------------------------------
// resources

namespace {

int64_t* standard_field(resources& r, std::string_view name) noexcept {
  if (name == cpu_resource)
    return &r.cpu_milli;
  if (name == memory_resource)
    return &r.memory_bytes;
  if (name == ephemeral_storage_resource)
    return &r.ephemeral_bytes;
  if (name == pods_resource)
    return &r.pods;
  return nullptr;
}

const int64_t* standard_field(const resources& r, std::string_view name) noexcept {
  return standard_field(const_cast<resources&>(r), name);
}

bool by_handle(const extended_amount& e, resource_name n) noexcept {
  return e.name < n;
}

// Merges two sorted extended vectors with `op` on the amounts (a missing entry is 0), keeping the
// invariant: sorted by handle, no zero amounts.
template <class Op>
std::vector<extended_amount> merge_extended(const std::vector<extended_amount>& a,
                                            const std::vector<extended_amount>& b, Op op) {
  std::vector<extended_amount> out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() || j < b.size()) {
    resource_name name =
        (j == b.size() || (i < a.size() && a[i].name < b[j].name)) ? a[i].name : b[j].name;
    int64_t x = 0;
    int64_t y = 0;
    if (i < a.size() && a[i].name == name)
      x = a[i++].amount;
    if (j < b.size() && b[j].name == name)
      y = b[j++].amount;
    int64_t v = op(x, y);
    if (v != 0)
      out.push_back({name, v});
  }
  return out;
}

} // namespace

int64_t resources::get(std::string_view name) const noexcept {
  if (const int64_t* f = standard_field(*this, name))
    return *f;
  if (extended_.empty())
    return 0; // Skips the intern table's lock for the common case.
  auto handle = resource_name::find(name);
  return handle ? get(*handle) : 0;
}

int64_t resources::get(resource_name name) const noexcept {
  auto it = std::lower_bound(extended_.begin(), extended_.end(), name, by_handle);
  return (it != extended_.end() && it->name == name) ? it->amount : 0;
}

bool resources::set(std::string_view name, int64_t amount) {
  if (int64_t* f = standard_field(*this, name)) {
    *f = amount;
    return true;
  }
  if (amount == 0) {
    // Clearing never interns: a zero is the same as absent.
    if (auto handle = resource_name::find(name))
      set(*handle, 0);
    return true;
  }
  auto handle = resource_name::intern(name);
  if (!handle)
    return false;
  set(*handle, amount);
  return true;
}

void resources::set(resource_name name, int64_t amount) {
  auto it = std::lower_bound(extended_.begin(), extended_.end(), name, by_handle);
  bool present = it != extended_.end() && it->name == name;
  if (amount == 0) {
    if (present)
      extended_.erase(it);
  } else if (present) {
    it->amount = amount;
  } else {
    extended_.insert(it, extended_amount{name, amount});
  }
}

bool resources::is_zero() const noexcept {
  return cpu_milli == 0 && memory_bytes == 0 && ephemeral_bytes == 0 && pods == 0 &&
         extended_.empty();
}

bool resources::any_negative() const noexcept {
  if (cpu_milli < 0 || memory_bytes < 0 || ephemeral_bytes < 0 || pods < 0)
    return true;
  return std::any_of(extended_.begin(), extended_.end(),
                     [](const extended_amount& e) { return e.amount < 0; });
}

resources& resources::operator+=(const resources& other) {
  cpu_milli = saturating_add(cpu_milli, other.cpu_milli);
  memory_bytes = saturating_add(memory_bytes, other.memory_bytes);
  ephemeral_bytes = saturating_add(ephemeral_bytes, other.ephemeral_bytes);
  pods = saturating_add(pods, other.pods);
  if (!other.extended_.empty())
    extended_ = merge_extended(extended_, other.extended_, saturating_add);
  return *this;
}

resources& resources::operator-=(const resources& other) {
  cpu_milli = saturating_sub(cpu_milli, other.cpu_milli);
  memory_bytes = saturating_sub(memory_bytes, other.memory_bytes);
  ephemeral_bytes = saturating_sub(ephemeral_bytes, other.ephemeral_bytes);
  pods = saturating_sub(pods, other.pods);
  if (!other.extended_.empty())
    extended_ = merge_extended(extended_, other.extended_, saturating_sub);
  return *this;
}

resources resources::times(int64_t n) const {
  resources out;
  out.cpu_milli = saturating_mul(cpu_milli, n);
  out.memory_bytes = saturating_mul(memory_bytes, n);
  out.ephemeral_bytes = saturating_mul(ephemeral_bytes, n);
  out.pods = saturating_mul(pods, n);
  if (n != 0) {
    out.extended_.reserve(extended_.size());
    for (const auto& e : extended_)
      out.extended_.push_back({e.name, saturating_mul(e.amount, n)});
  }
  return out;
}

namespace {

int64_t scale_one(int64_t x, int64_t num, int64_t den) noexcept {
  __int128 p = __int128(x) * num; // Below 2^126 in magnitude.
  if (p == 0)
    return 0;
  if (den == 0)
    return p > 0 ? int64_max : int64_min;
  __int128 d = den;
  if (d < 0) {
    p = -p;
    d = -d;
  }
  __int128 q = p / d;
  if (p % d != 0 && p < 0)
    --q; // Division truncates toward zero; the contract is floor.
  return saturate(q);
}

} // namespace

resources resources::scaled(int64_t num, int64_t den) const {
  resources out;
  out.cpu_milli = scale_one(cpu_milli, num, den);
  out.memory_bytes = scale_one(memory_bytes, num, den);
  out.ephemeral_bytes = scale_one(ephemeral_bytes, num, den);
  out.pods = scale_one(pods, num, den);
  out.extended_.reserve(extended_.size());
  for (const auto& e : extended_) {
    int64_t v = scale_one(e.amount, num, den);
    if (v != 0)
      out.extended_.push_back({e.name, v});
  }
  return out;
}

resources resources::clamped_at_zero() const {
  resources out;
  out.cpu_milli = std::max<int64_t>(cpu_milli, 0);
  out.memory_bytes = std::max<int64_t>(memory_bytes, 0);
  out.ephemeral_bytes = std::max<int64_t>(ephemeral_bytes, 0);
  out.pods = std::max<int64_t>(pods, 0);
  for (const auto& e : extended_)
    if (e.amount > 0)
      out.extended_.push_back(e);
  return out;
}

resources resources::min(const resources& a, const resources& b) {
  resources out;
  out.cpu_milli = std::min(a.cpu_milli, b.cpu_milli);
  out.memory_bytes = std::min(a.memory_bytes, b.memory_bytes);
  out.ephemeral_bytes = std::min(a.ephemeral_bytes, b.ephemeral_bytes);
  out.pods = std::min(a.pods, b.pods);
  out.extended_ =
      merge_extended(a.extended_, b.extended_, [](int64_t x, int64_t y) { return std::min(x, y); });
  return out;
}

resources resources::max(const resources& a, const resources& b) {
  resources out;
  out.cpu_milli = std::max(a.cpu_milli, b.cpu_milli);
  out.memory_bytes = std::max(a.memory_bytes, b.memory_bytes);
  out.ephemeral_bytes = std::max(a.ephemeral_bytes, b.ephemeral_bytes);
  out.pods = std::max(a.pods, b.pods);
  out.extended_ =
      merge_extended(a.extended_, b.extended_, [](int64_t x, int64_t y) { return std::max(x, y); });
  return out;
}

namespace {

// Extended entries in display order (by name), as views.
std::vector<std::pair<std::string_view, int64_t>>
extended_by_name(const std::vector<extended_amount>& extended) {
  std::vector<std::pair<std::string_view, int64_t>> out;
  out.reserve(extended.size());
  for (const auto& e : extended)
    out.emplace_back(e.name.str(), e.amount);
  std::sort(out.begin(), out.end());
  return out;
}

void append_amount(std::string& out, std::string_view name, int64_t amount) {
  if (!out.empty())
    out += ", ";
  out += name;
  out += ": ";
  out += format_resource_amount(name, amount);
}

} // namespace

std::string resources::to_string() const {
  std::string out;
  if (cpu_milli != 0)
    append_amount(out, cpu_resource, cpu_milli);
  if (memory_bytes != 0)
    append_amount(out, memory_resource, memory_bytes);
  if (ephemeral_bytes != 0)
    append_amount(out, ephemeral_storage_resource, ephemeral_bytes);
  if (pods != 0)
    append_amount(out, pods_resource, pods);
  for (const auto& [name, amount] : extended_by_name(extended_))
    append_amount(out, name, amount);
  return out.empty() ? "none" : out;
}

// ---------------------------------------------------------------------------------------------
// fits, shortfalls, dominant share

bool fits(const resources& request, const resources& available) noexcept {
  auto ok = [](int64_t req, int64_t avail) { return req <= 0 || req <= avail; };
  if (!ok(request.cpu_milli, available.cpu_milli) ||
      !ok(request.memory_bytes, available.memory_bytes) ||
      !ok(request.ephemeral_bytes, available.ephemeral_bytes) || !ok(request.pods, available.pods))
    return false;
  // Both vectors are sorted by handle: one merge pass, no lookups.
  const auto& req = request.extended();
  const auto& avail = available.extended();
  std::size_t j = 0;
  for (const auto& e : req) {
    if (e.amount <= 0)
      continue;
    while (j < avail.size() && avail[j].name < e.name)
      ++j;
    int64_t have = (j < avail.size() && avail[j].name == e.name) ? avail[j].amount : 0;
    if (e.amount > have)
      return false;
  }
  return true;
}

std::vector<shortfall> shortfalls(const resources& request, const resources& available) {
  std::vector<shortfall> out;
  auto check = [&](std::string_view name, int64_t req, int64_t avail) {
    if (req > 0 && req > avail)
      out.push_back({std::string(name), req, avail});
  };
  check(cpu_resource, request.cpu_milli, available.cpu_milli);
  check(memory_resource, request.memory_bytes, available.memory_bytes);
  check(ephemeral_storage_resource, request.ephemeral_bytes, available.ephemeral_bytes);
  check(pods_resource, request.pods, available.pods);
  std::size_t first_extended = out.size();
  for (const auto& e : request.extended())
    check(e.name.str(), e.amount, available.get(e.name));
  std::sort(out.begin() + std::ptrdiff_t(first_extended), out.end(),
            [](const shortfall& a, const shortfall& b) { return a.resource < b.resource; });
  return out;
}

ratio dominant_share(const resources& amount, const resources& total) noexcept {
  ratio best{0, 1};
  auto consider = [&](int64_t a, int64_t t) {
    if (a <= 0)
      return;
    ratio share = t <= 0 ? ratio{1, 1} : ratio{a, t};
    if (share > best)
      best = share;
  };
  consider(amount.cpu_milli, total.cpu_milli);
  consider(amount.memory_bytes, total.memory_bytes);
  consider(amount.ephemeral_bytes, total.ephemeral_bytes);
  consider(amount.pods, total.pods);
  for (const auto& e : amount.extended())
    consider(e.amount, total.get(e.name));
  return best;
}

// ---------------------------------------------------------------------------------------------
// resource_limit

bool resource_limit::set(std::string_view name, int64_t cap) {
  if (name.empty())
    return false;
  if (!is_standard_resource(name) && !resource_name::intern(name))
    return false;
  auto it = std::lower_bound(caps_.begin(), caps_.end(), name,
                             [](const cap_entry& c, std::string_view n) { return c.name < n; });
  if (it != caps_.end() && it->name == name)
    it->cap = cap;
  else
    caps_.insert(it, cap_entry{std::string(name), cap});
  return true;
}

std::optional<int64_t> resource_limit::get(std::string_view name) const noexcept {
  auto it = std::lower_bound(caps_.begin(), caps_.end(), name,
                             [](const cap_entry& c, std::string_view n) { return c.name < n; });
  if (it != caps_.end() && it->name == name)
    return it->cap;
  return std::nullopt;
}

bool resource_limit::allows(const resources& amount) const noexcept {
  return std::all_of(caps_.begin(), caps_.end(),
                     [&](const cap_entry& c) { return amount.get(c.name) <= c.cap; });
}

resources resource_limit::clamp(const resources& amount) const {
  resources out = amount;
  for (const auto& c : caps_) {
    int64_t have = amount.get(c.name);
    if (have > c.cap)
      out.set(c.name, c.cap); // Interned by set(), so this cannot fail.
  }
  return out;
}

std::string resource_limit::to_string() const {
  if (caps_.empty())
    return "unlimited";
  std::string out;
  for (std::string_view standard :
       {cpu_resource, memory_resource, ephemeral_storage_resource, pods_resource}) {
    if (auto cap = get(standard))
      append_amount(out, standard, *cap);
  }
  for (const auto& c : caps_) // Already sorted by name.
    if (!is_standard_resource(c.name))
      append_amount(out, c.name, c.cap);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Saturating helpers

int64_t saturating_add(int64_t a, int64_t b) noexcept {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? int64_max : int64_min;
  return r;
}

int64_t saturating_sub(int64_t a, int64_t b) noexcept {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    return b < 0 ? int64_max : int64_min;
  return r;
}

int64_t saturating_mul(int64_t a, int64_t b) noexcept {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return ((a < 0) != (b < 0)) ? int64_min : int64_max;
  return r;
}

} // namespace phalanx::scheduler
