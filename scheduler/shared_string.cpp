#include "scheduler/shared_string.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <ostream>

namespace phalanx::scheduler {

shared_string::shared_string(std::string_view text) {
  if (text.empty())
    return; // The empty string holds no block: a default shared_string is empty.
  void* memory = std::malloc(offsetof(block, text) + text.size() + 1);
  if (memory == nullptr)
    throw std::bad_alloc();
  block_ = static_cast<block*>(memory);
  new (&block_->references) std::atomic<uint32_t>(1);
  block_->size = static_cast<uint32_t>(text.size());
  std::memcpy(block_->text, text.data(), text.size());
  block_->text[text.size()] = '\0';
}

shared_string& shared_string::operator=(const shared_string& other) noexcept {
  if (block_ != other.block_) {
    other.retain();
    release();
    block_ = other.block_;
  }
  return *this;
}

shared_string& shared_string::operator=(shared_string&& other) noexcept {
  if (this != &other) {
    release();
    block_ = std::exchange(other.block_, nullptr);
  }
  return *this;
}

void shared_string::release() noexcept {
  if (block_ && block_->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    block_->references.~atomic();
    std::free(block_);
  }
}

shared_string shared_string_pool::share(std::string_view text) {
  if (text.empty())
    return {};
  if (auto it = texts_.find(text); it != texts_.end())
    return *it;
  if (texts_.size() >= sweep_at_)
    sweep();
  return *texts_.emplace(text).first;
}

void shared_string_pool::sweep() {
  std::erase_if(texts_, [](const shared_string& s) { return s.use_count() == 1; });
  sweep_at_ = std::max<std::size_t>(256, 2 * texts_.size());
}

std::ostream& operator<<(std::ostream& out, const shared_string& s) {
  return out << s.view();
}

} // namespace phalanx::scheduler
