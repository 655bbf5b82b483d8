#pragma once

// Helpers for the k8s tests: a temporary directory, a reflector sink that records what it is
// given and lets the test wait for a condition, and waits with generous bounds.

#include "k8s/reflector.hpp"

#include <boost/json.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace phalanx::k8s::test {

/// A directory removed with everything in it at the end of the scope.
class temp_dir {
 public:
  temp_dir() {
    std::string t = (std::filesystem::temp_directory_path() / "phalanx-k8s-test-XXXXXX").string();
    if (!::mkdtemp(t.data()))
      throw std::runtime_error("mkdtemp failed");
    path_ = t;
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::string& path() const { return path_; }

  /// Writes `text` to path()/name; the file's path.
  std::string write(const std::string& name, const std::string& text) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
    return p;
  }

 private:
  std::string path_;
};

/// Polls `done` every 20 ms until it holds or `limit` passes; its last value. For waits on
/// other threads and the apiserver, with limits far above what they need.
inline bool eventually(const std::function<bool()>& done,
                       std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

/// metadata.name of an object, or "".
inline std::string name_of(const boost::json::value& v) {
  if (auto* m = v.as_object().if_contains("metadata"); m && m->is_object())
    if (auto* n = m->as_object().if_contains("name"); n && n->is_string())
      return std::string(n->get_string());
  return {};
}

/// A sink that records every call.
class recording_sink : public reflector_sink {
 public:
  struct event {
    event_type type;
    std::string name;
    std::string resource_version;
    boost::json::value object;
  };
  struct list {
    std::vector<boost::json::value> items;
    std::string resource_version;
  };

  void on_list(std::vector<boost::json::value> items, const std::string& rv) override {
    std::lock_guard lock(mutex_);
    lists_.push_back({std::move(items), rv});
  }
  void on_event(event_type type, boost::json::value object, const std::string& rv) override {
    std::lock_guard lock(mutex_);
    events_.push_back({type, name_of(object), rv, std::move(object)});
  }
  void on_bookmark(const std::string& rv) override {
    std::lock_guard lock(mutex_);
    bookmarks_.push_back(rv);
  }
  void on_error(const status& error) override {
    std::lock_guard lock(mutex_);
    errors_.push_back(error);
  }

  std::vector<list> lists() const {
    std::lock_guard lock(mutex_);
    return lists_;
  }
  std::vector<event> events() const {
    std::lock_guard lock(mutex_);
    return events_;
  }
  std::vector<std::string> bookmarks() const {
    std::lock_guard lock(mutex_);
    return bookmarks_;
  }
  std::vector<status> errors() const {
    std::lock_guard lock(mutex_);
    return errors_;
  }
  std::size_t list_count() const {
    std::lock_guard lock(mutex_);
    return lists_.size();
  }
  std::size_t event_count() const {
    std::lock_guard lock(mutex_);
    return events_.size();
  }
  std::size_t bookmark_count() const {
    std::lock_guard lock(mutex_);
    return bookmarks_.size();
  }
  /// The errors, one per line, for failure messages.
  std::string error_text() const {
    std::lock_guard lock(mutex_);
    std::string out;
    for (const auto& e : errors_)
      out += e.to_string() + "\n";
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<list> lists_;
  std::vector<event> events_;
  std::vector<std::string> bookmarks_;
  std::vector<status> errors_;
};

} // namespace phalanx::k8s::test
