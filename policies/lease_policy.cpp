// Session-key leases between nodes; see lease_policy.hpp.
#include "policies/lease_policy.hpp"

#include <algorithm>

namespace mneme {

const char* to_string(lease_action a) {
  switch (a) {
    case lease_action::grant: return "grant";
    case lease_action::reacquire: return "reacquire";
    case lease_action::take_over: return "take_over";
    case lease_action::elsewhere: return "elsewhere";
  }
  return "unknown";
}

lease_action decide_lease(const std::optional<lease_row>& current, const std::string& self_node) {
  if (!current)
    return lease_action::grant;
  if (current->owner_node == self_node)
    return lease_action::reacquire;
  return current->remaining_ms <= 0 ? lease_action::take_over : lease_action::elsewhere;
}

int64_t lease_renew_period_ms(int64_t lease_ms) {
  return std::max<int64_t>(100, lease_ms / 3);
}

bool should_forward(bool arrived_forwarded, const std::string& owner_url,
                    const std::string& self_url) {
  return !arrived_forwarded && !owner_url.empty() && owner_url != self_url;
}

} // namespace mneme
