// The storage actor's cold-storage sweep; see storage_cold.hpp.
#include "actors/storage/storage_cold.hpp"

#include <algorithm>

#include "actors/storage/storage_metrics.hpp"
#include "messages/errc.hpp"
#include "policies/client_text.hpp"
#include "store/store_maintenance.hpp"

namespace mneme {

int64_t sweep_cold_copies(store_maintenance& store, const std::shared_ptr<spdlog::logger>& log,
                          time_ms now, storage_metrics* metrics) {
  auto folder = store.cold_copy_folder();
  if (folder.empty() || store.in_transaction())
    return 0;
  auto r = store.sweep_cold_copies(folder, cold_sweep_max_sessions, now);
  if (metrics) {
    auto pending = metrics->cold_pending_failures.exchange(r.failed, std::memory_order_relaxed);
    metrics->cold_retries.fetch_add(std::min<int64_t>(pending, r.written + r.failed),
                                    std::memory_order_relaxed);
    metrics->cold_files_written.fetch_add(r.written, std::memory_order_relaxed);
    metrics->cold_write_failures.fetch_add(r.failed, std::memory_order_relaxed);
  }
  if (log && r.written > 0)
    log->info("session=- event=cold_copies_written count={} folder={}", r.written, folder);
  if (log && r.failed > 0)
    log->warn("session=- event=cold_copy_failed count={} folder={} error={}", r.failed, folder,
              log_quoted(render_error(r.first_error)));
  return r.written;
}

} // namespace mneme
