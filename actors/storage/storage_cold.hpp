// The storage actor's side of episodic cold storage (SPEC §7; store/store_maintenance.hpp,
// on SQLite store/sqlite/cold_storage.hpp):
// after a session ends (st_end_atom, st_reset_atom) and once at start, the JSONL of
// every ended session without a cold copy is written, at most
// cold_sweep_max_sessions per sweep. A failure is logged (warn) and the session
// stays unmarked, so the next sweep retries it; it never fails the request that
// ended the session and never touches database rows.
// Thread: the storage actor's own thread (it owns the writer connection).
#pragma once

#include <memory>

#include <spdlog/logger.h>

#include "messages/transcript.hpp"

namespace mneme {

class store_maintenance;
struct storage_metrics;

// Returns the number of copies written (0 when cold storage is off).
// `log` and `metrics` may be null; metrics counts files written, failures and retries
// (a session that failed in the previous sweep is tried again in this one: every sweep
// takes every unmarked ended session up to cold_sweep_max_sessions).
int64_t sweep_cold_copies(store_maintenance& store, const std::shared_ptr<spdlog::logger>& log,
                          time_ms now, storage_metrics* metrics = nullptr);

} // namespace mneme
