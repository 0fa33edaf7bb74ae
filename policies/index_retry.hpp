// When the idle-time indexer tries again after a tick that failed (a full disk, an I/O
// error; docs/operations.md "Disk full"): not before a delay that doubles with each
// failure in a row, from 1 s up to 60 s, so a disk that refuses writes costs one tick
// (one read of the backlog and a refused write) a minute at most instead of a tick per
// commit, and the backlog is caught up by itself once space returns, without a restart
// and without waiting for a new append. A tick that succeeds ends the series.
// Standard library only; pure; any thread. Used by actors/storage/index_schedule.
#pragma once

#include <algorithm>
#include <cstdint>

namespace mneme {

inline constexpr int64_t index_retry_first_ms = 1000;
inline constexpr int64_t index_retry_max_ms = 60000;

// The delay before the next tick after `failures_in_a_row` (>= 1) failed ticks.
inline int64_t index_retry_delay_ms(int64_t failures_in_a_row) {
  int64_t delay = index_retry_first_ms;
  for (int64_t i = 1; i < failures_in_a_row && delay < index_retry_max_ms; ++i)
    delay *= 2;
  return std::min(delay, index_retry_max_ms);
}

} // namespace mneme
