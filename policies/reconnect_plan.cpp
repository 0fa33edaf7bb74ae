// How long a store operation that lost its connection waits; see reconnect_plan.hpp.
#include "policies/reconnect_plan.hpp"

#include <algorithm>

namespace mneme::policies {

std::optional<int64_t> reconnect_wait_ms(const reconnect_limits& limits, int attempt,
                                         int64_t waited_ms) {
  if (attempt < 0 || limits.budget_ms <= 0)
    return std::nullopt;
  int64_t wait = limits.first_wait_ms;
  for (int i = 0; i < attempt && wait < limits.max_wait_ms; ++i)
    wait *= 2;
  wait = std::clamp<int64_t>(wait, 1, std::max<int64_t>(1, limits.max_wait_ms));
  if (waited_ms + wait > limits.budget_ms)
    return std::nullopt;
  return wait;
}

} // namespace mneme::policies
