// The storage actor's check of free space before an idle-time index tick and its
// handling of a tick the disk refused (policies/index_space decides; this unit reads
// the free space, counts, logs and publishes). Owned by the storage actor
// (actors/storage/storage_actor.cpp), on its thread; nothing else touches it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include <spdlog/logger.h>

#include "actors/storage/index_schedule.hpp"
#include "actors/storage/storage_metrics.hpp"
#include "policies/index_pacing.hpp"
#include "store/store_maintenance.hpp"

namespace mneme {

// Reads the free space, in bytes, of the database's filesystem (-1: unknown). Empty: the
// store's own (store_maintenance::free_space_bytes, a statvfs of the database's folder);
// tests pass one of their own. Called on the storage actor's thread before index ticks.
using free_space_probe = std::function<int64_t()>;

class index_space_gate {
 public:
  index_space_gate() = default;
  // `reserve_bytes`: store_params::index_free_space_reserve_bytes (<= 0: no reserve).
  index_space_gate(free_space_probe probe, int64_t reserve_bytes)
    : probe_(std::move(probe)), reserve_bytes_(reserve_bytes) {}

  // Whether the tick of `plan` may run now. False while the free space is below the
  // reserve (after a refusal: a little above it): the tick is counted as skipped and
  // the first of a series logged; the caller comes back in index_space_poll_ms. True
  // otherwise, with plan.max_bytes lowered to the text the space above the reserve
  // holds (the first tick after a series of skipped ones is logged).
  bool admit(index_tick_plan& plan, const index_schedule& schedule, storage_metrics* metrics,
             spdlog::logger* log);

 private:
  free_space_probe probe_;
  int64_t reserve_bytes_ = 0;
  bool waiting_ = false; // the last tick was skipped for space
};

// Publishes the cap of the next index transaction (storage_metrics::index_cap_*).
void publish_index_cap(const index_schedule& schedule, storage_metrics* metrics);

// After the disk refused an index transaction: copies the log back and cuts its file
// (store_maintenance::truncate_log), so the pages the refused transaction wrote to it
// return to the filesystem. A failure (the copy may need space too; a reader may keep
// it busy) is logged; a later commit after a background checkpoint cuts the file to
// SQLite's journal_size_limit anyway. True when the whole log was copied back and cut.
bool truncate_log_after_refusal(store_maintenance& maintenance, spdlog::logger* log);

} // namespace mneme
