// The special paths of a session (SPEC §6, §5.5): tool output eviction, proactive
// pruning and micro-compaction. The decisions come from policies/eviction_plan,
// policies/prune_plan and policies/micro_compaction; the replacements are stored by
// one atomic st_replace commit (messages/storage_types.hpp replacement_commit).
// Touched only by the owning session actor, inside its handlers.
//
// Each path runs as a pipeline under st.compacting, so it never overlaps another
// path or a compaction; a path that finds one running waits in after_compaction.
// Failure (SPEC §5.5):
//   - eviction and pruning swap the live transcript only after the store
//     acknowledged; a refused commit leaves the session exactly as it was;
//   - a micro-fold is applied in memory at once and stands when its DB sync fails
//     (micro_debt); the next fold or the next full compaction first reconciles the
//     store with memory (policies/micro_compaction.hpp reconcile) in one commit.
//
// Decisions where the SPEC is silent:
//   - order after an answer: eviction, then pruning, then micro-compaction, then
//     the post-call trigger check (T2);
//   - pruning is also tried before a model call whose compaction did not run;
//     "tokens now" is the local estimate of the live context (the API's last
//     usage describes a request before the answer and before any pruning);
//   - the main compaction counts as locked when the anti-thrash/cooldown check
//     refuses an automatic trigger (T1) now;
//   - a refused prune is not retried while the live context keeps its size (no
//     loop on a store that keeps refusing);
//   - a turn is one completed answer: micro_compact_every_n_turns counts answers.
#include <algorithm>
#include <cassert>
#include <memory>

#include "actors/session/session_state.hpp"
#include "policies/client_text.hpp"
#include "policies/eviction_plan.hpp"
#include "policies/micro_compaction.hpp"
#include "policies/oversized_row.hpp"
#include "policies/prune_plan.hpp"
#include "policies/row_replacement.hpp"
#include "policies/token_estimate.hpp"
#include "policies/utf8.hpp"

namespace mneme::session_detail {

namespace {

int64_t sum_tokens(std::vector<message>& rows) {
  int64_t total = 0;
  for (auto& m : rows) {
    if (m.token_estimate <= 0)
      m.token_estimate = estimate_message_tokens(m);
    total += m.token_estimate;
  }
  return total;
}

using path_done = std::function<void(bool committed)>;

// Ends a path's pipeline, then lets whoever waited for it run, then `next`.
void end_pipeline(session_ptr self) {
  auto& st = self->state;
  st.compacting = false;
  auto waiting = std::move(st.after_compaction);
  st.after_compaction.clear();
  for (auto& w : waiting)
    w();
}

// Commits `plan` (eviction or pruning) and swaps the live transcript when the store
// acknowledged. Calls done(committed) with the pipeline already ended.
void commit_replacements(session_ptr self, const char* path,
                         const std::vector<row_replacement>& plan, path_done done) {
  auto& st = self->state;
  assert(!st.compacting);
  auto applied = apply_replacements(st.live, plan);
  if (applied.status != replace_status::applied) {
    st.log().warn("session={} event={}_skipped status={}", st.record.id, path,
                  to_string(applied.status));
    done(false);
    return;
  }
  replacement_commit c;
  c.session_id = st.record.id;
  c.archive_ids = applied.archived_ids;
  int64_t reclaimed = 0;
  for (const auto& r : plan) {
    auto row = applied.live[r.index];
    row.session_id = st.record.id;
    c.rows.push_back(std::move(row));
    c.positions.push_back(r.original_id);
    reclaimed += r.tokens_reclaimed;
  }
  st.compacting = true;
  auto size_at_apply = st.live.size();
  auto new_live = std::make_shared<std::vector<message>>(std::move(applied.live));
  auto indices = std::make_shared<std::vector<size_t>>();
  for (const auto& r : plan)
    indices->push_back(r.index);
  auto rows = static_cast<int64_t>(plan.size());
  then_forgetting(self,
      self->request(st.deps.storage, st.params.storage_timeout, st_replace_atom_v, std::move(c)),
      [self, path, new_live, indices, size_at_apply, rows, reclaimed,
       done](std::vector<message>& stored) {
        auto& st = self->state;
        assert(stored.size() == indices->size());
        for (size_t i = 0; i < stored.size() && i < indices->size(); ++i) {
          auto& slot = (*new_live)[(*indices)[i]];
          if (stored[i].token_estimate <= 0)
            stored[i].token_estimate = slot.token_estimate;
          slot = std::move(stored[i]);
        }
        for (size_t i = size_at_apply; i < st.live.size(); ++i)
          new_live->push_back(std::move(st.live[i]));
        auto before = st.live_tokens;
        st.live = std::move(*new_live);
        st.live_tokens = sum_tokens(st.live);
        st.log().info("session={} event={} rows={} tokens_before={} tokens_after={} "
                      "planned_reclaim={}", st.record.id, path, rows, before, st.live_tokens,
                      reclaimed);
        end_pipeline(self);
        done(true);
      },
      [self, path, done](caf::error& err) {
        auto& st = self->state;
        st.log().warn("session={} event={}_commit_failed error={}", st.record.id, path,
                      log_quoted(render_error(err)));
        end_pipeline(self);
        done(false);
      });
}

// --- micro-compaction store sync

// For each rolling summary to insert (memory index), the archived DB row whose place
// it takes: the first row owed to the archive after the stored memory row preceding
// it, in the store's live order. Empty when some summary cannot be placed.
std::vector<int64_t> places_for(const std::vector<message>& memory,
                                const std::vector<message>& db_live,
                                const micro_reconciliation& rec) {
  std::vector<int64_t> out;
  std::vector<bool> used(db_live.size(), false);
  auto owed = [&](int64_t id) {
    return std::find(rec.archive_ids.begin(), rec.archive_ids.end(), id)
           != rec.archive_ids.end();
  };
  for (auto k : rec.insert_indices) {
    int64_t before = 0;
    for (size_t j = k; j-- > 0;)
      if (memory[j].id != 0) {
        before = memory[j].id;
        break;
      }
    size_t from = 0;
    if (before != 0) {
      auto at = std::find_if(db_live.begin(), db_live.end(),
                             [&](const message& m) { return m.id == before; });
      from = at == db_live.end() ? db_live.size() : static_cast<size_t>(at - db_live.begin()) + 1;
    }
    size_t pick = db_live.size();
    for (size_t i = from; i < db_live.size(); ++i)
      if (!used[i] && owed(db_live[i].id)) {
        pick = i;
        break;
      }
    if (pick == db_live.size())
      return {};
    used[pick] = true;
    out.push_back(db_live[pick].id);
  }
  return out;
}

// Brings the store in line with the live transcript after failed fold syncs:
// archives what memory folded, inserts the unstored rolling summaries. Clears
// micro_debt on success. The caller holds the pipeline (st.compacting).
void reconcile_store(session_ptr self, std::function<void()> next) {
  auto& st = self->state;
  then_forgetting(self,
      self->request(st.deps.storage, st.params.storage_timeout, st_live_atom_v, st.record.id),
      [self, next](std::vector<message>& db_live) {
        auto& st = self->state;
        std::vector<int64_t> db_ids;
        for (const auto& m : db_live)
          db_ids.push_back(m.id);
        auto rec = reconcile(st.live, db_ids);
        if (rec.in_sync()) {
          st.micro_debt = false;
          next();
          return;
        }
        if (!rec.unknown_ids.empty()) {
          st.log().warn("session={} event=micro_reconcile_refused unknown_live_rows={}",
                        st.record.id, rec.unknown_ids.size());
          next();
          return;
        }
        replacement_commit c;
        c.session_id = st.record.id;
        c.archive_ids = rec.archive_ids;
        c.positions = places_for(st.live, db_live, rec);
        if (c.archive_ids.empty() || c.positions.size() != rec.insert_indices.size()) {
          st.log().warn("session={} event=micro_reconcile_refused reason=no_place "
                        "inserts={} archive={}", st.record.id, rec.insert_indices.size(),
                        rec.archive_ids.size());
          next();
          return;
        }
        for (auto k : rec.insert_indices) {
          auto row = st.live[k];
          row.session_id = st.record.id;
          c.rows.push_back(std::move(row));
        }
        for (auto it = st.live.rbegin(); it != st.live.rend(); ++it)
          if (it->id != 0 && is_rolling_summary(*it)) {
            c.archived_by = it->id;
            break;
          }
        auto indices = rec.insert_indices;
        auto archived = c.archive_ids.size();
        then_forgetting(
          self,
          self->request(st.deps.storage, st.params.storage_timeout, st_replace_atom_v,
                        std::move(c)),
            [self, next, indices, archived](std::vector<message>& stored) {
              auto& st = self->state;
              for (size_t i = 0; i < stored.size() && i < indices.size(); ++i)
                st.live[indices[i]].id = stored[i].id;
              st.micro_debt = false;
              if (st.params.metrics)
                st.params.metrics->micro_reconciles.fetch_add(1, std::memory_order_relaxed);
              st.log().info("session={} event=micro_reconciled archived={} inserted={}",
                            st.record.id, archived, stored.size());
              next();
            },
            [self, next](caf::error& err) {
              auto& st = self->state;
              if (st.params.metrics)
                st.params.metrics->micro_sync_failures.fetch_add(1, std::memory_order_relaxed);
              st.log().warn("session={} event=micro_reconcile_failed error={}", st.record.id,
                            log_quoted(render_error(err)));
              next();
            });
      },
      [self, next](caf::error& err) {
        auto& st = self->state;
        st.log().warn("session={} event=micro_reconcile_failed error={}", st.record.id,
                      log_quoted(render_error(err)));
        next();
      });
}

// Folds the oldest exchange when due. The fold stands in memory; its sync failing
// leaves micro_debt for the next fold or full compaction.
void run_micro(session_ptr self, std::function<void()> next) {
  auto& st = self->state;
  if (st.compacting) {
    st.after_compaction.emplace_back([self, next] { run_micro(self, next); });
    return;
  }
  const auto& params = st.params.compression;
  if (!micro_fold_due(params, st.turns_since_fold)) {
    next();
    return;
  }
  auto plan = plan_micro_fold(st.live, params, st.window, st.turns_since_fold);
  if (plan.outcome != micro_outcome::fold) {
    st.log().debug("session={} event=micro_fold_skipped outcome={}", st.record.id,
                   to_string(plan.outcome));
    next();
    return;
  }
  auto folded = apply_micro_fold(st.live, plan);
  if (folded.status != micro_apply_status::applied) {
    next();
    return;
  }
  auto before = st.live_tokens;
  auto summary_index = folded.summary_index;
  auto archived_ids = folded.archived_ids;
  st.live = std::move(folded.live);
  st.live[summary_index].session_id = st.record.id;
  st.live_tokens = sum_tokens(st.live);
  st.turns_since_fold = 0;
  st.compacting = true;
  if (st.params.metrics)
    st.params.metrics->micro_folds.fetch_add(1, std::memory_order_relaxed);
  st.log().info("session={} event=micro_fold rows={} defragmented={} tokens_before={} "
                "tokens_after={}", st.record.id, plan.folded_ids.size(), plan.defragmented,
                before, st.live_tokens);
  auto finish = [self, next] {
    end_pipeline(self);
    next();
  };
  if (st.micro_debt) { // earlier syncs failed: one reconcile covers them and this fold
    reconcile_store(self, finish);
    return;
  }
  replacement_commit c;
  c.session_id = st.record.id;
  c.archive_ids = archived_ids;
  c.rows = {st.live[summary_index]};
  c.positions = {plan.folded_ids.front()};
  then_forgetting(self,
      self->request(st.deps.storage, st.params.storage_timeout, st_replace_atom_v, std::move(c)),
      [self, summary_index, finish](std::vector<message>& stored) {
        auto& st = self->state;
        if (!stored.empty() && summary_index < st.live.size())
          st.live[summary_index].id = stored.front().id;
        finish();
      },
      [self, finish](caf::error& err) {
        auto& st = self->state;
        st.micro_debt = true;
        if (st.params.metrics)
          st.params.metrics->micro_sync_failures.fetch_add(1, std::memory_order_relaxed);
        st.log().warn("session={} event=micro_fold_sync_failed error={} (the fold stands in "
                      "memory; the next compaction reconciles)", st.record.id,
                      log_quoted(render_error(err)));
        finish();
      });
}

bool main_compaction_locked(const session_state& st) {
  return !check(st.record.triggers, trigger::t1_pre_call, st.now(), st.params.compression)
            .allowed();
}

// Starts pruning when due and worth it; true when started (done is then called).
bool start_prune(session_ptr self, path_done done) {
  auto& st = self->state;
  if (st.compacting || st.live.size() == st.prune_refused_at)
    return false;
  auto plan = plan_proactive_prune(st.live, st.params.compression, st.window,
                                   main_compaction_locked(st), st.live_tokens, st.threshold);
  if (plan.outcome != prune_outcome::prune) {
    if (plan.outcome != prune_outcome::not_due) {
      st.log().debug("session={} event=prune_skipped outcome={} reclaimable={}", st.record.id,
                     to_string(plan.outcome), plan.tokens_reclaimable);
      if (st.params.metrics)
        st.params.metrics->record_prune(prune_outcome_label::skipped);
    }
    return false;
  }
  int64_t reclaim = 0;
  for (const auto& r : plan.replacements)
    reclaim += r.tokens_reclaimed;
  commit_replacements(self, "proactive_prune", plan.replacements,
                      [self, done, reclaim](bool committed) {
                        auto& st = self->state;
                        if (st.params.metrics)
                          st.params.metrics->record_prune(committed
                                                            ? prune_outcome_label::committed
                                                            : prune_outcome_label::refused,
                                                          reclaim);
                        st.prune_refused_at = committed ? SIZE_MAX : st.live.size();
                        done(committed);
                      });
  return true;
}

void run_prune(session_ptr self, std::function<void()> next) {
  auto& st = self->state;
  if (st.compacting) {
    st.after_compaction.emplace_back([self, next] { run_prune(self, next); });
    return;
  }
  if (!start_prune(self, [next](bool) { next(); }))
    next();
}

void run_eviction(session_ptr self, std::function<void()> next) {
  auto& st = self->state;
  if (st.compacting) {
    st.after_compaction.emplace_back([self, next] { run_eviction(self, next); });
    return;
  }
  auto plan = plan_tool_output_eviction(st.live, st.params.compression.tool_output_eviction_chars);
  if (plan.empty()) {
    next();
    return;
  }
  int64_t chars = 0;
  for (const auto& r : plan)
    chars += static_cast<int64_t>(count_code_points(st.live[r.index].content))
             - static_cast<int64_t>(count_code_points(r.content));
  auto rows = static_cast<uint64_t>(plan.size());
  commit_replacements(self, "tool_output_eviction", plan,
                      [self, next, rows, chars](bool committed) {
                        auto& m = self->state.params.metrics;
                        if (committed && m) {
                          m->evicted_outputs.fetch_add(rows, std::memory_order_relaxed);
                          m->eviction_chars_reclaimed.fetch_add(chars,
                                                                std::memory_order_relaxed);
                        }
                        next();
                      });
}

} // namespace

void run_answer_paths(session_ptr self, std::function<void()> next) {
  ++self->state.turns_since_fold;
  evict_oversized_rows(self, [self, next] {
    run_eviction(self, [self, next] {
      run_prune(self, [self, next] { run_micro(self, next); });
    });
  });
}

void evict_oversized_rows(session_ptr self, std::function<void()> next) {
  auto& st = self->state;
  if (st.compacting) {
    st.after_compaction.emplace_back([self, next] { evict_oversized_rows(self, next); });
    return;
  }
  auto limit = max_row_tokens(st.window, st.params.compression.max_row_share);
  auto plan = plan_oversized_rows(st.live, limit);
  if (plan.empty()) {
    next();
    return;
  }
  int64_t largest = 0;
  for (const auto& r : plan)
    largest = std::max(largest, st.live[r.index].token_estimate);
  st.log().warn("session={} event=oversized_row_eviction rows={} largest_tokens={} "
                "limit_tokens={}", st.record.id, plan.size(), largest, limit);
  auto rows = static_cast<uint64_t>(plan.size());
  commit_replacements(self, "oversized_row_eviction", plan, [self, next, rows](bool committed) {
    if (auto& m = self->state.params.metrics; committed && m)
      m->oversized_rows.fetch_add(rows, std::memory_order_relaxed);
    next(); // a failed commit leaves the row live: the window guard then refuses the call
  });
}

bool prune_if_due(session_ptr self, std::function<void()> next) {
  return start_prune(self, [next](bool) { next(); });
}

bool evict_refused_outputs(session_ptr self, std::function<void(bool committed)> done) {
  auto& st = self->state;
  assert(!st.compacting);
  auto plan = plan_refused_output_eviction(st.live,
                                           st.params.compression.tool_output_eviction_chars);
  if (plan.empty())
    return false;
  st.log().warn("session={} event=refused_output_eviction rows={}", st.record.id, plan.size());
  commit_replacements(self, "refused_output_eviction", plan, std::move(done));
  return true;
}

bool reconcile_first(session_ptr self, std::function<void()> next) {
  auto& st = self->state;
  assert(!st.compacting);
  if (!st.micro_debt || st.reconciled_for_compaction) {
    st.reconciled_for_compaction = false;
    return false;
  }
  st.compacting = true;
  reconcile_store(self, [self, next] {
    auto& st = self->state;
    st.compacting = false; // the compaction that follows drains the waiters
    st.reconciled_for_compaction = true;
    next();
  });
  return true;
}

} // namespace mneme::session_detail
