// How often a repeated event may be logged: at most `per_second` lines in each second
// (a window that starts at the first event after the previous window ended); the rest
// are counted and the next line let through reports how many were left out. Pure: the
// caller passes `now`. Not thread-safe: the caller serializes (the API holds a mutex).
#pragma once

#include <cstdint>

namespace mneme {

struct log_rate_gate {
  int64_t per_second = 5;
  int64_t window_start_ms = -1; // -1: no window yet
  int64_t used = 0;             // lines let through in the current window
  int64_t dropped = 0;          // events left out since the last line let through

  // True when this event may be logged; then `suppressed` is the number of events left
  // out before it (and the count starts again). REQUIRES: per_second >= 0.
  bool allow(int64_t now_ms, int64_t& suppressed) {
    if (window_start_ms < 0 || now_ms - window_start_ms >= 1000) {
      window_start_ms = now_ms;
      used = 0;
    }
    if (used >= per_second) {
      ++dropped;
      return false;
    }
    ++used;
    suppressed = dropped;
    dropped = 0;
    return true;
  }
};

} // namespace mneme
