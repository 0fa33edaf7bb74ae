// The compaction pipeline of a session (SPEC §3, §5): plan the split, ask the
// summarizer pool (or build the local fallback), apply the plan to the live transcript
// as it is when the summary arrives (rows appended meanwhile stay after the tail),
// commit archive + summary + trigger state in one storage transaction, then swap.
//
// Decisions where the SPEC is silent:
//   - pre-existing tool-call orphans in the kept head/tail stay stored as they are
//     (the plan's orphan_fixes are not committed): the store's commit takes one
//     contiguous archived slice and one new row, so it can neither archive a dropped
//     orphan result elsewhere in the same transaction nor place a synthetic answer
//     right after its assistant. The cuts themselves never create orphans
//     (policies/split.hpp), an orphan result cannot be appended through a session
//     (policies/tool_pairing.hpp), and every chat request is repaired as it is built
//     (policies/request_pairing.hpp: the same fixes, applied to what the model sees,
//     nothing invented is stored), so SPEC §3's pairing rule holds for the model;
//   - savings are judged on the rows the plan saw: rows appended while the summary was
//     in flight are left out of tokens_after;
//   - the summary of a T3/T4 compaction (the gateway's hygiene check) comes from
//     session_deps::hygiene, the pool with the hygiene timeouts, when it is set;
//     every other trigger, and T3/T4 without that pool, use session_deps::summarizer;
//     a failed hygiene summary is a failed summary like any other: it arms the
//     session's own summary cooldown (SPEC §5) besides the gateway's hygiene cooldown;
//   - a failed commit changes nothing (store, live context, trigger state) and is
//     reported to the caller as the storage error.
//   - in_place: false (SPEC §3): the commit is the store's continue_in_child; the
//     actor adopts the child's id, record (parent link, started now, the trigger
//     state this compaction leaves) and the live context the store returns, which
//     already holds every row acknowledged before the commit; appends that arrive
//     while it is in flight wait and go to the child. Every other rule (cooldown,
//     anti-thrash, attempts, fallback, locks) is the in-place one: only the commit
//     differs. Checkpoints stay with the parent. A preflight loop that compacts
//     twice makes a child and a grandchild.
#include <algorithm>
#include <cassert>
#include <chrono>
#include <numeric>

#include "actors/session/session_state.hpp"
#include "policies/client_text.hpp"
#include "policies/fallback_summary.hpp"
#include "policies/retention_retry.hpp"
#include "policies/split.hpp"
#include "policies/split_apply.hpp"
#include "policies/summary_budget.hpp"
#include "policies/summary_cut.hpp"
#include "policies/summary_failure.hpp"
#include "policies/summary_markers.hpp"
#include "policies/summary_request.hpp"
#include "policies/token_estimate.hpp"
#include "messages/llm_errc.hpp"

namespace mneme::session_detail {

namespace {

int64_t sum_tokens(const std::vector<message>& rows, size_t from = 0) {
  int64_t total = 0;
  for (size_t i = from; i < rows.size(); ++i)
    total += rows[i].token_estimate;
  return total;
}

compaction_report report_of(const compaction_outcome& out, const compression_params& params) {
  compaction_report r;
  r.by = out.by;
  r.committed = out.committed();
  r.nothing_to_compact = out.nothing_to_compact;
  r.summary_failed = out.summary_failed;
  r.used_fallback = out.used_fallback;
  r.summary_auth_failed = out.auth_failed;
  r.effective = is_effective(out, params);
  r.tokens_before = out.tokens_before;
  r.tokens_after = out.tokens_after;
  r.grew = out.grew;
  return r;
}

// Ends the pipeline: the caller's continuation first, then whoever waited for it.
void finish(session_ptr self, compaction_report report, caf::error err,
            const compaction_done& done) {
  auto& st = self->state;
  st.compacting = false;
  report.window_guard = st.pipeline_guard;
  st.pipeline_guard = false;
  report.messages_after = static_cast<int64_t>(st.live.size());
  auto total = std::chrono::duration_cast<std::chrono::microseconds>(
    std::chrono::steady_clock::now() - st.compaction_started);
  report.overhead_us = std::max<int64_t>(0, (total - st.summary_wait).count());
  if (st.params.metrics) {
    auto outcome = err                       ? compaction_outcome_label::failed
                   : report.nothing_to_compact ? compaction_outcome_label::nothing
                   : report.grew               ? compaction_outcome_label::grew
                   : !report.committed         ? compaction_outcome_label::failed
                   : report.used_fallback      ? compaction_outcome_label::fallback
                                               : compaction_outcome_label::committed;
    st.params.metrics->record_compaction(report.by, outcome, report.tokens_before,
                                         report.tokens_after);
    if (uses_compaction_endpoint(st))
      st.params.metrics->record_external(st.external.who,
                                         external_label_of(outcome));
  }
  done(std::move(report), std::move(err));
  auto waiting = std::move(st.after_compaction);
  st.after_compaction.clear();
  for (auto& next : waiting)
    next();
}

// A compaction that commits nothing (no-op or aborted summary) still moves the
// failure protection state machine; that state is persisted on its own.
void finish_uncommitted(session_ptr self, compaction_outcome out, caf::error err,
                        const compaction_done& done) {
  auto& st = self->state;
  auto rejected = on_compaction_done(st.record.triggers, out, st.now(), st.params.compression);
  assert(rejected == outcome_error::none);
  (void) rejected;
  persist_triggers(self);
  if (!out.nothing_to_compact) { // a no-op attempted nothing: no row
    const char* outcome = out.grew          ? "grew"
                          : out.auth_failed ? "auth_failed"
                                            : st.attempt.failure;
    log_uncommitted_attempt(self, attempt_entry(st, out, outcome, st.attempt.summary));
  }
  st.log().info("session={} event=compaction by={} committed=false nothing_to_compact={} "
                "summary_failed={} grew={} tokens_before={} tokens_after={}", st.record.id,
                to_string(out.by), out.nothing_to_compact, out.summary_failed, out.grew,
                out.tokens_before, out.tokens_after);
  finish(self, report_of(out, st.params.compression), std::move(err), done);
}

// Ends the switch to a child (committed or not): the appends that waited run now,
// against whichever session the actor holds.
void end_switch(session_ptr self) {
  auto& st = self->state;
  st.switching_to_child = false;
  auto waiting = std::move(st.after_switch);
  st.after_switch.clear();
  for (auto& next : waiting)
    next();
}

// The commit of a compaction with in_place: false: the store ends this session and
// continues in a child holding head + summary + tail; the actor switches to it.
void commit_in_child(session_ptr self, compaction_commit cc, trigger_state next,
                     compaction_outcome out, compaction_done done) {
  auto& st = self->state;
  // REQUIRES: one switch at a time (it runs inside the one compaction pipeline).
  assert(!st.switching_to_child);
  st.switching_to_child = true;
  auto now = st.now();
  auto archived = static_cast<int64_t>(cc.archive_ids.size());
  auto [lo, hi] = std::minmax_element(cc.archive_ids.begin(), cc.archive_ids.end());
  auto range = std::make_pair(*lo, *hi);
  auto entry = cc.log;
  then_forgetting(self,
      self->request(st.deps.storage, st.params.storage_timeout, st_child_atom_v, std::move(cc),
                    now),
      [self, now, next, out, archived, range, done, entry](std::vector<message>& live) {
        auto& st = self->state;
        count_logged_attempt(st, entry);
        auto summary = std::find_if(live.begin(), live.end(), [&](const message& m) {
          return m.is_summary && m.replaced_first_id == range.first
                 && m.replaced_last_id == range.second;
        });
        // REQUIRES: the store's answer is the child's context with the new summary.
        assert(!live.empty() && summary != live.end());
        auto summary_id = summary == live.end() ? int64_t{0} : summary->id;
        auto parent_id = st.record.id;
        session_record child = st.record;
        child.id = live.front().session_id;
        child.parent_id = parent_id;
        child.started_at_ms = now;
        child.ended_at_ms = 0;
        child.end_reason.clear();
        child.triggers = next;
        st.record = std::move(child);
        for (auto& m : live)
          if (m.token_estimate == 0)
            m.token_estimate = estimate_message_tokens(m);
        st.live = std::move(live);
        st.live_tokens = sum_tokens(st.live);
        ++st.compactions_by_trigger[static_cast<size_t>(out.by)];
        auto report = report_of(out, st.params.compression);
        report.archived_rows = archived;
        report.summary_id = summary_id;
        st.log().info("session={} event=compaction by={} committed=true fallback={} "
                      "tokens_before={} tokens_after={} archived={} live={} parent={}",
                      st.record.id, to_string(out.by), out.used_fallback, out.tokens_before,
                      out.tokens_after, archived, st.live.size(), parent_id);
        if (st.deps.supervisor)
          caf::anon_send(st.deps.supervisor, sv_child_atom_v, parent_id, st.record.id,
                         st.record.session_key);
        end_switch(self);
        finish(self, std::move(report), caf::error{}, done);
      },
      [self, out, done, entry](caf::error& err) mutable {
        auto& st = self->state;
        st.log().warn("session={} event=child_commit_failed by={} error={}", st.record.id,
                      to_string(out.by), log_quoted(render_error(err)));
        entry.outcome = "commit_failed";
        entry.detail = render_error(err);
        log_uncommitted_attempt(self, std::move(entry));
        end_switch(self);
        finish(self, report_of(out, st.params.compression), std::move(err), done);
      });
}

void commit(session_ptr self, compaction_plan plan, std::string summary_text,
            compaction_outcome out, compaction_done done) {
  auto& st = self->state;
  auto applied = apply_plan(st.live, plan, summary_text);
  if (applied.status != apply_status::applied) {
    finish(self, report_of(out, st.params.compression),
           caf::make_error(errc::internal, "compaction plan could not be applied: "
                                             + std::string{to_string(applied.status)}),
           done);
    return;
  }
  st.attempt.summary = summary_text;
  auto& summary = applied.live[applied.summary_index];
  summary.session_id = st.record.id;
  summary.token_estimate = estimate_message_tokens(summary);
  // Rows appended since planning are not part of what was compacted.
  int64_t appended_since_plan = sum_tokens(st.live, plan.transcript_size);
  out.tokens_after = sum_tokens(applied.live) - appended_since_plan;
  if (out.tokens_after >= out.tokens_before) {
    // The size guard (SPEC §5.6): a compaction that does not shrink the context is not
    // committed; the rows stay live and it counts as an ineffective attempt (a strike).
    out.grew = true;
    finish_uncommitted(self, out, caf::error{}, done);
    return;
  }
  trigger_state next = st.record.triggers;
  auto rejected = on_compaction_done(next, out, st.now(), st.params.compression);
  assert(rejected == outcome_error::none);
  (void) rejected;
  compaction_commit cc;
  cc.session_id = st.record.id;
  cc.archive_ids = applied.archived_ids;
  cc.summary = summary;
  cc.update_triggers = true;
  cc.triggers = next;
  cc.has_log = true;
  cc.log = attempt_entry(st, out, "committed", summary_text);
  if (!st.params.compression.in_place) {
    commit_in_child(self, std::move(cc), next, out, std::move(done));
    return;
  }
  auto live_size_at_apply = st.live.size();
  auto summary_index = applied.summary_index;
  auto new_live = std::make_shared<std::vector<message>>(std::move(applied.live));
  auto archived = static_cast<int64_t>(cc.archive_ids.size());
  auto entry = cc.log;
  then_forgetting(self,
      self->request(st.deps.storage, st.params.storage_timeout, st_compact_atom_v, std::move(cc)),
      [self, new_live, summary_index, live_size_at_apply, next, out, archived,
       done, entry](message& stored) {
        auto& st = self->state;
        count_logged_attempt(st, entry);
        if (stored.token_estimate == 0)
          stored.token_estimate = estimate_message_tokens(stored);
        (*new_live)[summary_index] = std::move(stored);
        for (size_t i = live_size_at_apply; i < st.live.size(); ++i)
          new_live->push_back(std::move(st.live[i]));
        st.live = std::move(*new_live);
        st.live_tokens = sum_tokens(st.live);
        st.record.triggers = next;
        ++st.compactions_by_trigger[static_cast<size_t>(out.by)];
        auto report = report_of(out, st.params.compression);
        report.archived_rows = archived;
        report.summary_id = st.live[summary_index].id;
        st.log().info("session={} event=compaction by={} committed=true fallback={} "
                      "tokens_before={} tokens_after={} archived={} live={}",
                      st.record.id, to_string(out.by), out.used_fallback, out.tokens_before,
                      out.tokens_after, archived, st.live.size());
        finish(self, std::move(report), caf::error{}, done);
      },
      [self, out, done, entry](caf::error& err) mutable {
        auto& st = self->state;
        st.log().warn("session={} event=compaction_commit_failed by={} error={}",
                      st.record.id, to_string(out.by), log_quoted(render_error(err)));
        entry.outcome = "commit_failed";
        entry.detail = render_error(err);
        log_uncommitted_attempt(self, std::move(entry));
        finish(self, report_of(out, st.params.compression), std::move(err), done);
      });
}

// An auth/quota failure of the summarizer (policies/summary_failure.hpp rule 1):
// nothing committed, no fallback row, the cooldown armed with the auth reason,
// the failure counted, the runtime's summarizer health auth_failed, and one
// error line per endpoint per minute across all sessions (the endpoint without
// credentials; the key is never logged: the LLM client redacts it from errors).
// Counts and logs (once per endpoint per minute) a summarizer answer refusing the
// credentials or quota; the cooldown reason names it. Returns the endpoint as logged.
std::string note_auth_failure(session_ptr self, compaction_outcome& out, bool hygiene) {
  auto& st = self->state;
  const std::string detail = out.failure_reason;
  out.failure_reason = auth_cooldown_reason_for(detail);
  const auto& url = hygiene && !st.params.hygiene_endpoint.empty() ? st.params.hygiene_endpoint
                                                                   : st.params.summary_endpoint;
  const std::string endpoint = endpoint_for_log(url);
  int64_t suppressed = 0;
  bool log_it = true;
  if (auto& m = st.params.metrics) {
    m->record_summarizer(summarizer_event::auth_failed);
    log_it = m->allow_auth_failure_log(endpoint, st.now(), suppressed);
  }
  if (log_it)
    st.log().error("session={} event=summarizer_auth_failed endpoint={} by={} "
                   "suppressed_since_last={} detail={}",
                   st.record.id, endpoint, to_string(out.by), suppressed, detail);
  else
    st.log().debug("session={} event=summarizer_auth_failed endpoint={} by={}", st.record.id,
                   endpoint, to_string(out.by));
  return endpoint;
}

// The auth/quota abort: nothing committed, no fallback row, the session cools down.
void abort_for_auth(session_ptr self, compaction_outcome out, bool hygiene,
                    const compaction_done& done) {
  const std::string detail = out.failure_reason;
  const std::string endpoint = note_auth_failure(self, out, hygiene);
  out.auth_failed = true;
  finish_uncommitted(self, out,
                     caf::make_error(errc::compaction_failed,
                                     "summary refused (credentials or quota of the summarizer "
                                     "at " + endpoint + "): " + detail),
                     done);
}

std::vector<message> middle_of(const std::vector<message>& live, const compaction_plan& plan) {
  return {live.begin() + static_cast<std::ptrdiff_t>(plan.head_end),
          live.begin() + static_cast<std::ptrdiff_t>(plan.tail_begin)};
}

// The retry below compression.min_retention (policies/retention_retry.hpp): the first
// summary's row is logged as `retried`, the summarizer is asked once more with the
// identifiers it dropped, and its answer is committed as attempt 2. A failed or empty
// retry commits the first summary (still attempt 2, its detail says why): a summary
// that kept too little is better than none.
void retry_for_retention(session_ptr self, compaction_plan plan, std::string first_summary,
                         compaction_outcome out, compaction_done done,
                         const std::vector<message>& middle, summary_request_params rp,
                         bool hygiene) {
  auto& st = self->state;
  auto first = attempt_entry(st, out, "retried", first_summary);
  first.detail = "kept " + std::to_string(first.identifiers_kept) + " of "
                 + std::to_string(first.identifiers_in) + " identifiers, below min_retention";
  log_uncommitted_attempt(self, std::move(first));
  st.attempt.attempt = 2;
  st.attempt.summary_tokens = 0;
  auto request = build_summary_request(middle, rp);
  const int64_t request_tokens = estimate_messages_tokens(request.messages);
  const int64_t budget_tokens = rp.budget_tokens;
  const auto& pool = hygiene ? st.deps.hygiene : st.deps.summarizer;
  auto timeout = hygiene ? st.params.hygiene_timeout : st.params.summary_timeout;
  then_forgetting(self, self->request(pool, timeout, llm_call_atom_v, std::move(request)),
      [self, plan, out, done, first_summary, budget_tokens,
       request_tokens](chat_answer& answer) mutable {
        auto& st = self->state;
        st.attempt.summary_tokens = answer.prompt_tokens + answer.completion_tokens > 0
                                      ? answer.prompt_tokens + answer.completion_tokens
                                      : request_tokens + estimate_text_tokens(answer.content);
        if (answer.content.empty()) {
          st.attempt.detail = "the retry answered nothing; the first summary kept";
          commit(self, std::move(plan), std::move(first_summary), out, std::move(done));
          return;
        }
        auto cut = cut_summary_to_tokens(answer.content, summary_cut_limit(budget_tokens));
        commit(self, std::move(plan), wrap_summary(cut.text), out, std::move(done));
      },
      [self, plan, out, done, first_summary](caf::error& err) mutable {
        self->state.attempt.detail = "the retry failed (" + render_error(err)
                                     + "); the first summary kept";
        commit(self, std::move(plan), std::move(first_summary), out, std::move(done));
      });
}

} // namespace

int64_t summary_budget_of(const session_state& st, int64_t middle_tokens) {
  auto b = compute_summary_budget(middle_tokens, st.window, st.params.compression.target_ratio);
  if (b.ok())
    return b.tokens;
  return std::max<int64_t>(1, std::min(summary_budget_floor_tokens, middle_tokens / 2));
}

compression_params minimal_tail_params(compression_params p) {
  p.tail_mode = tail_mode::count;
  p.protect_last_n = 1;
  p.min_tail_user_messages = 1;
  return p;
}

void start_compaction(session_ptr self, trigger by, lock_decision lock, std::string focus,
                      local_window local, compaction_done done) {
  auto& st = self->state;
  // REQUIRES: one pipeline at a time, on a loaded session.
  assert(!st.compacting && st.ready);
  if (reconcile_first(self, [=] { start_compaction(self, by, lock, focus, local, done); }))
    return; // a failed micro-fold sync is made good first (SPEC §5.5)
  st.compacting = true;
  st.compaction_started = std::chrono::steady_clock::now();
  st.summary_wait = std::chrono::microseconds{0};
  const bool guard = st.guard_requested;
  const bool minimal_tail = guard && st.guard_minimal_tail;
  st.pipeline_guard = guard;
  st.guard_requested = st.guard_minimal_tail = false;
  const auto& params = st.params.compression;
  auto plan = local ? plan_local_compaction(st.live, local->first, local->second, params,
                                            st.window)
                    : plan_compaction(st.live,
                                      minimal_tail ? minimal_tail_params(params) : params,
                                      st.window);
  compaction_outcome out;
  out.by = by;
  out.tokens_before = st.live_tokens;
  out.tokens_after = st.live_tokens;
  if (plan.outcome == split_outcome::center_out_of_range
      || plan.outcome == split_outcome::center_in_protected_head
      || plan.outcome == split_outcome::center_in_protected_tail
      || plan.outcome == split_outcome::middle_not_stored) {
    // Not a compaction attempt: the request named something that cannot be compacted.
    finish(self, report_of(out, params),
           caf::make_error(errc::bad_request,
                           "compaction: " + std::string{describe(plan.outcome)}),
           done);
    return;
  }
  if (plan.nothing_to_compact()) {
    out.nothing_to_compact = true;
    finish_uncommitted(self, out, caf::error{}, done);
    return;
  }
  plan.orphan_fixes.clear(); // applied per request instead (see the header comment)
  auto middle = middle_of(st.live, plan);
  begin_attempt_record(st, by, middle);
  // Summary and fallback share one budget that scales with the window and never
  // exceeds half the middle (SPEC §5.6 size guard; policies/summary_budget.hpp).
  const int64_t budget_tokens = summary_budget_of(st, plan.middle_tokens);
  if (lock.fallback_only) {
    st.attempt.mode = "fallback";
    st.attempt.detail = "fallback only (locked or hygiene cooldown)";
    out.used_fallback = true;
    commit(self, std::move(plan),
           wrap_summary(build_fallback_summary_within(middle, budget_tokens)), out,
           std::move(done));
    return;
  }
  summary_request_params rp;
  rp.model = st.params.summary_model.empty() ? st.params.model.name : st.params.summary_model;
  rp.budget_tokens = budget_tokens;
  rp.focus = std::move(focus);
  auto request = uses_compaction_endpoint(st)
                   ? endpoint_compaction_request(st, middle, rp.budget_tokens, rp.focus)
                   : build_summary_request(middle, rp);
  st.attempt.mode = uses_compaction_endpoint(st) ? "external" : "summarizer";
  st.attempt.model = rp.model;
  const int64_t request_tokens = estimate_messages_tokens(request.messages);
  auto asked = std::chrono::steady_clock::now();
  auto waited = [self, asked] {
    auto& st = self->state;
    st.summary_wait = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - asked);
    if (st.params.metrics)
      st.params.metrics->summarizer_latency.observe_us(st.summary_wait.count());
  };
  auto count_failure = [self](errc code) {
    if (self->state.params.metrics)
      self->state.params.metrics->record_summary_failure(code);
  };
  // The hygiene compactions call the hygiene pool (see below); its endpoint is
  // the one an auth error line names.
  const bool hygiene = (by == trigger::t3_hygiene_message_cap
                        || by == trigger::t4_hygiene_tokens)
                       && st.deps.hygiene;
  auto on_failure = [self, plan, middle, out, done, hygiene, guard,
                     budget_tokens](std::string reason, llm_error_kind kind) mutable {
    auto& st = self->state;
    out.summary_failed = true;
    out.failure_reason = reason;
    st.attempt.failure = kind == llm_error_kind::idle_timeout
                             || kind == llm_error_kind::total_timeout
                           ? "timeout"
                           : "failed";
    const auto action = on_summary_failure(kind, st.params.compression.abort_on_summary_failure);
    // The window guard needs room now: it takes the fallback even when the summarizer
    // refused its credentials or abort_on_summary_failure would leave the transcript
    // unchanged (SPEC §5.6); the refusal is still counted and logged.
    if (action == summary_failure_action::abort_auth) {
      if (!guard) {
        abort_for_auth(self, std::move(out), hygiene, done);
        return;
      }
      note_auth_failure(self, out, hygiene);
    } else if (st.params.metrics) {
      st.params.metrics->record_summarizer(summarizer_event::other_failure);
    }
    st.log().warn("session={} event=summary_failed by={} reason={}", st.record.id,
                  to_string(out.by), reason);
    if (action == summary_failure_action::abort && !guard) {
      finish_uncommitted(self, out,
                         caf::make_error(errc::compaction_failed, "summary failed: " + reason),
                         done);
      return;
    }
    out.used_fallback = true;
    st.attempt.mode = "fallback";
    commit(self, std::move(plan),
           wrap_summary(build_fallback_summary_within(middle, budget_tokens)), out,
           std::move(done));
  };
  // The gateway's hygiene compactions call the hygiene pool (its own, usually
  // shorter, timeouts) when the runtime has one.
  const auto& pool = hygiene ? st.deps.hygiene : st.deps.summarizer;
  auto timeout = hygiene ? st.params.hygiene_timeout : st.params.summary_timeout;
  auto middle_rows = std::make_shared<const std::vector<message>>(middle);
  then_forgetting(self, self->request(pool, timeout, llm_call_atom_v, std::move(request)),
      [self, plan, out, done, on_failure, waited, count_failure, budget_tokens,
       request_tokens, middle_rows, rp, hygiene](chat_answer& answer) mutable {
        waited();
        self->state.attempt.summary_tokens =
          answer.prompt_tokens + answer.completion_tokens > 0
            ? answer.prompt_tokens + answer.completion_tokens
            : request_tokens + estimate_text_tokens(answer.content);
        if (answer.content.empty()) {
          count_failure(errc::llm_empty_answer);
          on_failure("empty summary", llm_error_kind::empty_answer);
          return;
        }
        if (self->state.params.metrics)
          self->state.params.metrics->record_summarizer(summarizer_event::answered);
        // An answer longer than budget x 1.5 is cut at a line before the size guard.
        auto cut = cut_summary_to_tokens(answer.content, summary_cut_limit(budget_tokens));
        if (cut.cut)
          self->state.log().info("session={} event=summary_cut budget={} tokens_before={} "
                                 "tokens_after={}", self->state.record.id, budget_tokens,
                                 cut.tokens_before, cut.tokens_after);
        auto& st = self->state;
        auto kept = retention_of(st.attempt.identifiers, cut.text);
        retention_retry_inputs ri;
        ri.min_retention = st.params.compression.min_retention;
        ri.from_summarizer = st.attempt.mode == "summarizer";
        ri.attempt = st.attempt.attempt;
        ri.identifiers_in = kept.identifiers_in;
        ri.identifiers_kept = kept.identifiers_kept;
        if (decide_retention_retry(ri) == retention_action::retry) {
          rp.must_keep = missing_identifiers_list(kept.missing);
          retry_for_retention(self, std::move(plan), wrap_summary(cut.text), out,
                              std::move(done), *middle_rows, std::move(rp), hygiene);
          return;
        }
        commit(self, std::move(plan), wrap_summary(cut.text), out, std::move(done));
      },
      [on_failure, waited, count_failure](caf::error& err) mutable {
        waited();
        const errc code = err.category() == caf::atom("mneme") ? static_cast<errc>(err.code())
                                                               : errc::llm_total_timeout;
        count_failure(code);
        on_failure(render_error(err), llm_kind_of(code).value_or(llm_error_kind::total_timeout));
      });
}

} // namespace mneme::session_detail
