// Free space before index ticks; see index_space_gate.hpp.
#include "actors/storage/index_space_gate.hpp"

#include <algorithm>

#include "policies/client_text.hpp"
#include "policies/index_space.hpp"

namespace mneme {

bool index_space_gate::admit(index_tick_plan& plan, const index_schedule& schedule,
                             storage_metrics* metrics, spdlog::logger* log) {
  index_space_inputs in;
  in.free_bytes = probe_ ? probe_() : -1;
  in.reserve_bytes = reserve_bytes_;
  in.backlog_rows = schedule.unindexed();
  in.refused_last = schedule.refused_last();
  auto space = decide_index_space(in);
  if (space.verdict == index_space_verdict::wait_for_space) {
    if (metrics)
      metrics->index_ticks_skipped_for_space.fetch_add(1, std::memory_order_relaxed);
    if (!waiting_ && log)
      log->warn("session=- event=index_waits_for_space free_bytes={} reserve_bytes={} backlog={}",
                in.free_bytes, in.reserve_bytes, in.backlog_rows);
    waiting_ = true;
    return false;
  }
  if (waiting_ && log)
    log->info("session=- event=index_resumes free_bytes={} reserve_bytes={} backlog={}",
              in.free_bytes, in.reserve_bytes, in.backlog_rows);
  waiting_ = false;
  plan.max_bytes = std::max<int64_t>(1, std::min(plan.max_bytes, space.max_text_bytes));
  return true;
}

void publish_index_cap(const index_schedule& schedule, storage_metrics* metrics) {
  if (!metrics)
    return;
  metrics->index_cap_rows.store(schedule.cap().rows, std::memory_order_relaxed);
  metrics->index_cap_bytes.store(schedule.cap().bytes, std::memory_order_relaxed);
}

bool truncate_log_after_refusal(store_maintenance& maintenance, spdlog::logger* log) {
  auto done = maintenance.truncate_log();
  if (!done) {
    if (log)
      log->warn("session=- event=wal_truncate_failed error={}",
                log_quoted(render_error(done.error())));
    return false;
  }
  if (log)
    log->info("session=- event=wal_truncated log_pages={} busy={}", done->log_pages, done->busy);
  return !done->busy;
}

} // namespace mneme
