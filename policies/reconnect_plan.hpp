// How long a store operation that lost its database connection waits before it runs
// again (docs/operations.md "PostgreSQL restarts"). Standard library only; pure
// functions, safe from any thread. Called by store/pg (pg_rows.hpp guarded()).
//
// The waits double from first_wait up to max_wait; the operation gives up (and its
// caller answers the error) once the next wait would take the waits past the budget.
// Invariant: the waits of one operation add up to at most budget_ms, so an outage
// longer than the budget fails each operation after at most budget_ms, never loops.
#pragma once

#include <cstdint>
#include <optional>

namespace mneme::policies {

struct reconnect_limits {
  int64_t first_wait_ms = 50;
  int64_t max_wait_ms = 1000;
  int64_t budget_ms = 30000; // a PostgreSQL restart takes a few seconds
};

// The wait before attempt `attempt` + 1 (attempt 0 just failed), given the waits so far
// of this operation; nullopt: give up.
std::optional<int64_t> reconnect_wait_ms(const reconnect_limits& limits, int attempt,
                                         int64_t waited_ms);

} // namespace mneme::policies
