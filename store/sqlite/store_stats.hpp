// Database-wide session counts for the metrics exporter (SPEC §8 Prometheus metrics):
// how many sessions are stored and open, and how many open sessions sit in a summary
// failure cooldown or an anti-thrash lock right now (their persisted trigger state,
// store/sqlite/migrations.cpp columns cooldown_until_ms / lock_until_ms).
//
// Thread: the owner of `db` (a read-only connection opened on a non-actor thread, or
// a detached actor). One statement, no writes.
#pragma once

#include <cstdint>

#include "caf/expected.hpp"

#include "messages/transcript.hpp"

namespace mneme {

class db_connection;

struct session_counts {
  int64_t stored = 0;            // every session row, ended ones included
  int64_t open = 0;              // ended_at_ms = 0
  int64_t cooldowns_active = 0;  // open sessions with cooldown_until_ms > now
  int64_t locks_active = 0;      // open sessions with lock_until_ms > now
};

// Errors: storage_* for SQLite failures.
caf::expected<session_counts> count_sessions(db_connection& db, time_ms now);

} // namespace mneme
