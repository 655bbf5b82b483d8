#include "k8s/lease.hpp"

#include "api/codec.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <limits>
#include <optional>
#include <random>

namespace phalanx::k8s {

namespace json = boost::json;

namespace {

constexpr int64_t not_leading = std::numeric_limits<int64_t>::min();

int64_t to_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

lease_record read_record(const json::object& lease) {
  lease_record r;
  auto* spec = lease.if_contains("spec");
  if (!spec || !spec->is_object())
    return r;
  const auto& s = spec->get_object();
  auto str = [&](std::string_view k) -> std::string {
    auto* p = s.if_contains(k);
    return p && p->is_string() ? std::string(p->get_string()) : std::string();
  };
  auto num = [&](std::string_view k) -> int64_t {
    auto* p = s.if_contains(k);
    return p && p->is_int64() ? p->get_int64() : 0;
  };
  r.holder_identity = str("holderIdentity");
  r.lease_duration_seconds = num("leaseDurationSeconds");
  r.acquire_time = str("acquireTime");
  r.renew_time = str("renewTime");
  r.lease_transitions = num("leaseTransitions");
  return r;
}

std::optional<json::object> parse_object(const std::string& body) {
  api::parse_limits limits;
  limits.max_bytes = std::max<std::size_t>(limits.max_bytes, body.size());
  auto v = api::parse_json(body, limits);
  if (!v || !v->is_object())
    return std::nullopt;
  return std::move(v->get_object());
}

} // namespace

std::string format_micro_time(std::chrono::system_clock::time_point t) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  auto secs = static_cast<std::time_t>(us / 1'000'000);
  long frac = static_cast<long>(us % 1'000'000);
  if (frac < 0) {  // Before 1970: floor, so the fraction stays positive.
    frac += 1'000'000;
    --secs;
  }
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// lease_observation

void lease_observation::observe(const lease_record& r, steady::time_point now) {
  if (observed_ && r == record_)
    return;
  record_ = r;
  changed_at_ = now;
  observed_ = true;
}

bool lease_observation::expired(steady::time_point now) const {
  if (!observed_)
    return false;
  return changed_at_ + std::chrono::seconds(record_.lease_duration_seconds) <= now;
}

bool lease_observation::may_acquire(const std::string& identity, steady::time_point now) const {
  if (!observed_)
    return true;
  return record_.holder_identity.empty() || record_.holder_identity == identity || expired(now);
}

// ---------------------------------------------------------------------------------------------
// lease_elector

result<std::unique_ptr<lease_elector>> lease_elector::create(const connection_config& config,
                                                             lease_options options) {
  auto bad = [](const std::string& what) {
    return status{errc::invalid_argument, "lease: " + what};
  };
  if (options.namespace_name.empty())
    return bad("namespace_name must be set");
  if (options.name.empty())
    return bad("name must be set");
  if (options.identity.empty())
    return bad("identity must be set");
  if (options.lease_duration < std::chrono::seconds(1))
    return bad("lease_duration must be at least 1 s (leaseDurationSeconds is whole seconds)");
  if (options.renew_deadline >= options.lease_duration)
    return bad("renew_deadline must be shorter than lease_duration");
  if (options.retry_period.count() <= 0 ||
      options.renew_deadline.count() <= options.retry_period.count() * 12 / 10)
    return bad("renew_deadline must be longer than 1.2 x retry_period, and retry_period positive");
  if (options.request_timeout.count() < 0)
    return bad("request_timeout must not be negative");

  connection_config c = config;
  c.connections = 1;
  c.timeout = options.request_timeout.count() > 0 ? options.request_timeout
                                                   : options.renew_deadline / 3;
  c.user_agent = config.user_agent + "/leader-election";
  auto cl = client::create(std::move(c));
  if (!cl)
    return cl.error();
  return std::unique_ptr<lease_elector>(new lease_elector(std::move(*cl), std::move(options)));
}

lease_elector::lease_elector(std::unique_ptr<client> c, lease_options options)
  : client_(std::move(c)), options_(std::move(options)), valid_until_ns_(not_leading) {
  rng_.seed(options_.seed != 0 ? options_.seed : std::random_device{}());
}

lease_elector::~lease_elector() {
  stop();
}

void lease_elector::start() {
  if (started_.exchange(true))
    return;
  thread_ = std::thread([this] { run(); });
}

void lease_elector::stop() {
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id())
    thread_.join();
}

bool lease_elector::leading_now() const {
  return to_ns(steady::now()) < valid_until_ns_.load(std::memory_order_acquire);
}

lease_elector::steady::time_point lease_elector::valid_until() const {
  int64_t ns = valid_until_ns_.load(std::memory_order_acquire);
  if (ns == not_leading)
    return steady::time_point::min();
  return steady::time_point(
      std::chrono::duration_cast<steady::duration>(std::chrono::nanoseconds(ns)));
}

std::string lease_elector::observed_leader() const {
  std::lock_guard lock(leader_mutex_);
  return observed_leader_;
}

lease_counters lease_elector::counters() const {
  lease_counters c;
  c.tries = tries_.load();
  c.successes = successes_.load();
  c.acquisitions = acquisitions_.load();
  c.conflicts = conflicts_.load();
  c.failures = failures_.load();
  return c;
}

status lease_elector::last_error() const {
  std::lock_guard lock(leader_mutex_);
  return last_error_;
}

void lease_elector::fail(status error) {
  failures_.fetch_add(1);
  if (options_.on_failure)
    options_.on_failure(error);
  std::lock_guard lock(leader_mutex_);
  last_error_ = std::move(error);
}

request_spec lease_elector::read_request() const {
  request_spec r;
  r.target = lease_path(false);
  r.bypass_rate_limit = true;
  return r;
}

std::string lease_elector::lease_path(bool collection) const {
  std::string p = "/apis/coordination.k8s.io/v1/namespaces/" + options_.namespace_name + "/leases";
  return collection ? p : p + "/" + options_.name;
}

bool lease_elector::wait(std::chrono::milliseconds d) {
  std::unique_lock lock(stop_mutex_);
  return !stop_cv_.wait_for(lock, d, [&] { return stopping_.load(); });
}

void lease_elector::note_holder(const std::string& holder) {
  {
    std::lock_guard lock(leader_mutex_);
    observed_leader_ = holder;
  }
  if (reported_any_ && holder == reported_leader_)
    return;
  reported_any_ = true;
  reported_leader_ = holder;
  if (options_.on_new_leader)
    options_.on_new_leader(holder);
}

void lease_elector::lose_leadership() {
  // Stop acting as leader before anything else: leading_now() turns false here.
  valid_until_ns_.store(not_leading, std::memory_order_release);
  if (!leading_)
    return;
  leading_ = false;
  if (options_.on_stopped_leading)
    options_.on_stopped_leading();
}

// Writes `r` as the Lease's spec: a PUT of the object read last (its resourceVersion makes the
// write conditional), or a POST of a new Lease. Returns the HTTP status; 0 when the exchange
// failed.
int lease_elector::write_lease(const lease_record& r, bool create) {
  json::object obj;
  if (create) {
    obj["apiVersion"] = "coordination.k8s.io/v1";
    obj["kind"] = "Lease";
    obj["metadata"] = {{"name", options_.name}, {"namespace", options_.namespace_name}};
  } else {
    obj = lease_object_;
  }
  json::object spec;
  spec["holderIdentity"] = r.holder_identity;
  spec["leaseDurationSeconds"] = r.lease_duration_seconds;
  if (!r.acquire_time.empty())
    spec["acquireTime"] = r.acquire_time;
  if (!r.renew_time.empty())
    spec["renewTime"] = r.renew_time;
  spec["leaseTransitions"] = r.lease_transitions;
  obj["spec"] = std::move(spec);

  auto res = client_->request({.method = create ? "POST" : "PUT",
                               .target = lease_path(create),
                               .body = json::serialize(obj),
                               .content_type = "application/json",
                               .bypass_rate_limit = true});
  if (!res) {
    fail(res.error());
    return 0;
  }
  if (res->status == 409)
    conflicts_.fetch_add(1);
  else if (res->status != 200 && res->status != 201)
    fail(status_of(*res, std::string(create ? "POST " : "PUT ") + lease_path(create)));
  if (res->status != 200 && res->status != 201)
    return res->status;
  if (auto written = parse_object(res->body))
    lease_object_ = std::move(*written);
  else
    lease_object_.clear();
  observation_.observe(r, steady::now());
  note_holder(r.holder_identity);
  return res->status;
}

bool lease_elector::try_acquire_or_renew() {
  tries_.fetch_add(1);
  const std::string now_text = format_micro_time(std::chrono::system_clock::now());
  const int64_t duration_s =
      std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration).count();
  lease_record mine{options_.identity, duration_s, now_text, now_text, 0};

  // 1. The leader's fast path: write over the object we wrote last, assuming nobody changed it.
  if (leading_ && !lease_object_.empty() &&
      observation_.record().holder_identity == options_.identity) {
    mine.acquire_time = observation_.record().acquire_time;
    mine.lease_transitions = observation_.record().lease_transitions;
    int st = write_lease(mine, false);
    if (st == 200) {
      successes_.fetch_add(1);
      return true;
    }
    if (st != 409)  // Unreachable or refused: a read would fail the same way.
      return false;
  }

  // 2. Read the Lease; create it when missing.
  auto res = client_->request(read_request());
  if (!res) {
    fail(res.error());
    return false;
  }
  if (res->status == 404) {
    lease_object_.clear();
    mine.lease_transitions = 0;
    int st = write_lease(mine, true);
    if (st == 201 || st == 200) {
      successes_.fetch_add(1);
      return true;
    }
    return false;
  }
  if (res->status != 200) {
    fail(status_of(*res, "GET " + lease_path(false)));
    return false;
  }
  auto obj = parse_object(res->body);
  if (!obj) {
    fail({errc::corruption, "GET " + lease_path(false) + ": the answer is not a JSON object"});
    return false;
  }
  lease_object_ = std::move(*obj);
  lease_record current = read_record(lease_object_);
  auto now = steady::now();
  observation_.observe(current, now);
  note_holder(current.holder_identity);

  // 3. Held by someone else and not expired: not ours. A leader that reads this was deposed.
  if (!observation_.may_acquire(options_.identity, now)) {
    if (leading_)
      lose_leadership();
    return false;
  }

  // 4. Write ourselves in, keeping acquireTime and the transition count when it was ours.
  if (current.holder_identity == options_.identity) {
    mine.acquire_time = current.acquire_time;
    mine.lease_transitions = current.lease_transitions;
  } else {
    mine.lease_transitions = current.lease_transitions + 1;
  }
  if (write_lease(mine, false) == 200) {
    successes_.fetch_add(1);
    return true;
  }
  return false;
}

void lease_elector::release() {
  // A few rounds: a renewal that timed out on our side may still have landed and moved the
  // resourceVersion (409), as client-go's tryRelease retries on conflict.
  for (int round = 0; round < 3; ++round) {
    auto res = client_->request(read_request());
    if (!res || res->status != 200)
      return;
    auto obj = parse_object(res->body);
    if (!obj)
      return;
    lease_record current = read_record(*obj);
    if (current.holder_identity != options_.identity)
      return;
    lease_object_ = std::move(*obj);
    const std::string now_text = format_micro_time(std::chrono::system_clock::now());
    lease_record released{"", 1, now_text, now_text, current.lease_transitions};
    int st = write_lease(released, false);
    if (st != 409)
      return;
  }
}

void lease_elector::run() {
  const auto jitter_max = options_.retry_period.count() * 12 / 10;
  std::uniform_int_distribution<int64_t> jitter(0, jitter_max);
  bool holds = false;  // The last try wrote us as holder.
  while (!stopping_) {
    const auto attempt_start = steady::now();
    holds = try_acquire_or_renew();
    if (holds) {
      valid_until_ns_.store(to_ns(attempt_start + options_.renew_deadline),
                            std::memory_order_release);
      if (!leading_ && !stopping_) {
        leading_ = true;
        acquisitions_.fetch_add(1);
        if (options_.on_started_leading)
          options_.on_started_leading();
      }
    } else if (leading_ && steady::now() >= valid_until()) {
      lose_leadership();
    }
    // A leader renews on the period; a candidate adds client-go's jitter so that candidates
    // do not try in step.
    auto period = leading_ ? options_.retry_period
                           : options_.retry_period + std::chrono::milliseconds(jitter(rng_));
    if (!wait(period))
      break;
  }
  // Stop acting first, then hand the lease over, then tell the caller.
  const bool was_leading = leading_;
  valid_until_ns_.store(not_leading, std::memory_order_release);
  if (options_.release_on_stop && (was_leading || holds))
    release();
  if (was_leading)
    lose_leadership();
}

} // namespace phalanx::k8s
