#include "scheduler/queue_book.hpp"

namespace phalanx::scheduler {

bool queue_order_less::operator()(const queue_order_key& a,
                                  const queue_order_key& b) const noexcept {
  if (a.elastic != b.elastic)
    return !a.elastic;
  auto c = compare_gangs(*a.group, *b.group);
  if (c != 0)
    return c < 0;
  return a.gang < b.gang;
}

} // namespace phalanx::scheduler
