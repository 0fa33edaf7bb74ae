// The HTTP front's connection bookkeeping; see connection_slots.hpp.
#include "apps/common/api/front/connection_slots.hpp"

namespace mneme::api {

using policies::connection_slot;

connection_slots::connection_slots(policies::connection_limits limits) : limits_(limits) {}

connection_slots::ticket connection_slots::take(const std::string& address,
                                                give_way on_give_way) {
  give_way displaced;
  ticket t;
  {
    std::lock_guard lock{mu_};
    auto found = per_address_.find(address);
    policies::connection_counts now;
    now.regular = regular_;
    now.from_address = found == per_address_.end() ? 0 : found->second;
    now.reserve = reserve_;
    now.reserve_waiting = static_cast<int64_t>(waiting_.size());
    t.slot = policies::slot_for_new_connection(limits_, now);
    switch (t.slot) {
      case connection_slot::regular:
        ++regular_;
        ++per_address_[address];
        break;
      case connection_slot::reserve_displacing_oldest:
        while (!order_.empty()) {
          auto oldest = order_.front();
          order_.pop_front();
          auto w = waiting_.find(oldest);
          if (w == waiting_.end())
            continue; // released or headed since
          displaced = std::move(w->second);
          waiting_.erase(w);
          break;
        }
        [[fallthrough]];
      case connection_slot::reserve:
        ++reserve_;
        t.id = next_id_++;
        order_.push_back(t.id);
        waiting_.emplace(t.id, std::move(on_give_way));
        break;
      case connection_slot::refuse:
        break;
    }
    // order_ holds at most the reserve's ids plus those not yet skipped: trim the front.
    while (!order_.empty() && waiting_.find(order_.front()) == waiting_.end())
      order_.pop_front();
  }
  if (displaced)
    displaced();
  return t;
}

void connection_slots::release(const std::string& address, const ticket& t) {
  std::lock_guard lock{mu_};
  switch (t.slot) {
    case connection_slot::regular: {
      --regular_;
      auto found = per_address_.find(address);
      if (found != per_address_.end() && --found->second <= 0)
        per_address_.erase(found);
      break;
    }
    case connection_slot::reserve:
    case connection_slot::reserve_displacing_oldest:
      --reserve_;
      waiting_.erase(t.id);
      break;
    case connection_slot::refuse:
      break;
  }
}

void connection_slots::head_arrived(const ticket& t) {
  if (t.id == 0)
    return;
  std::lock_guard lock{mu_};
  waiting_.erase(t.id);
}

} // namespace mneme::api
