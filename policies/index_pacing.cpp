// Pacing of the background full-text indexer; see index_pacing.hpp.
#include "policies/index_pacing.hpp"

#include <algorithm>
#include <limits>

namespace mneme {

namespace {

constexpr int64_t all_ids = std::numeric_limits<int64_t>::max();

bool writer_quiet(const index_pacing_params& p, int64_t now_ms, int64_t last_append_ms) {
  return last_append_ms < 0 || now_ms - last_append_ms >= std::max<int64_t>(0, p.quiet_ms);
}

// Commit time of row `id`: the first mark covering it; `now_ms` above every mark.
int64_t committed_at(const std::deque<commit_mark>& commits, int64_t now_ms, int64_t id) {
  auto i = std::lower_bound(commits.begin(), commits.end(), id,
                            [](const commit_mark& m, int64_t x) { return m.last_id < x; });
  return i == commits.end() ? now_ms : i->committed_at_ms;
}

} // namespace

index_tick_plan plan_index_tick(const index_pacing_params& params, int64_t now_ms,
                                int64_t last_append_ms, const std::deque<commit_mark>& commits) {
  index_tick_plan plan;
  plan.max_rows = std::max<int64_t>(1, params.batch_rows);
  plan.max_bytes = std::max<int64_t>(1, params.batch_bytes);
  plan.large_row_bytes = std::max<int64_t>(1, params.large_row_bytes);
  // No overflow, and at least 1: the cache is subtracted only from a larger budget.
  auto cache = std::max<int64_t>(0, params.writer_cache_bytes);
  plan.max_log_bytes = params.log_bytes > cache ? params.log_bytes - cache : 1;
  plan.run = first_index_run(params);
  plan.max_run = {std::max(plan.run.rows, params.max_run_rows),
                  std::max(plan.run.bytes, params.max_run_bytes)};
  if (writer_quiet(params, now_ms, last_append_ms)) {
    plan.large_rows_through = all_ids;
    return plan;
  }
  // The newest mark old enough; marks are ascending in time and id.
  auto old_enough = now_ms - std::max<int64_t>(0, params.large_row_max_wait_ms);
  auto i = std::upper_bound(commits.begin(), commits.end(), old_enough,
                            [](int64_t t, const commit_mark& m) { return t < m.committed_at_ms; });
  plan.large_rows_through = i == commits.begin() ? 0 : std::prev(i)->last_id;
  return plan;
}

int64_t index_tick_due_ms(const index_pacing_params& params, int64_t now_ms,
                          int64_t last_append_ms, int64_t caught_up_ms,
                          int64_t backlog_rows) {
  auto gather_ms = std::max<int64_t>(0, params.gather_ms);
  if (writer_quiet(params, now_ms, last_append_ms) || caught_up_ms < 0
      || now_ms - caught_up_ms >= gather_ms
      || backlog_rows >= std::max<int64_t>(0, params.gather_rows))
    return now_ms;
  auto by_quiet = last_append_ms + std::max<int64_t>(0, params.quiet_ms);
  return std::max(now_ms, std::min(caught_up_ms + gather_ms, by_quiet));
}

index_run_limit first_index_run(const index_pacing_params& params) {
  return {std::max<int64_t>(1, params.min_run_rows), std::max<int64_t>(1, params.min_run_bytes)};
}

index_run_limit next_index_run(const index_run_limit& previous, const index_run_limit& max_run) {
  // Doubling saturates at the maximum (no overflow: v <= hi / 2 before * 2).
  auto grow = [](int64_t v, int64_t hi) {
    hi = std::max<int64_t>(1, hi);
    v = std::clamp<int64_t>(v, 1, hi);
    return v > hi / 2 ? hi : v * 2;
  };
  return {grow(previous.rows, max_run.rows), grow(previous.bytes, max_run.bytes)};
}

bool tick_log_spent(const index_tick_plan& plan, int64_t log_bytes) {
  return log_bytes >= std::max<int64_t>(1, plan.max_log_bytes);
}

bool may_index_row(const index_tick_plan& plan, int64_t id, int64_t bytes) {
  return bytes <= plan.large_row_bytes || id <= plan.large_rows_through;
}

std::array<int, 3> index_fill_order(const std::array<int64_t, 3>& through) {
  std::array<int, 3> order{0, 1, 2};
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return through[static_cast<std::size_t>(a)]
                                              < through[static_cast<std::size_t>(b)]; });
  return order;
}

int64_t large_row_due_ms(const index_pacing_params& params, int64_t now_ms,
                         int64_t last_append_ms, const std::deque<commit_mark>& commits,
                         int64_t id) {
  if (writer_quiet(params, now_ms, last_append_ms))
    return now_ms;
  auto by_quiet = last_append_ms + std::max<int64_t>(0, params.quiet_ms);
  auto by_age = committed_at(commits, now_ms, id)
                + std::max<int64_t>(0, params.large_row_max_wait_ms);
  return std::max(now_ms, std::min(by_quiet, by_age));
}

} // namespace mneme
