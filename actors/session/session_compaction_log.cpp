// The compaction log of a session's pipeline (issue 45; store/compaction_log.hpp): the
// record of the running attempt and the row it becomes. A committed compaction's row
// travels with its commit (compaction_commit::log, one transaction); a row of an attempt
// that committed nothing is written here on its own, fire and forget.
//
// Decisions where the issue is silent:
//   - origin: manual for T12-T15, hygiene for T3/T4, automatic otherwise;
//   - a no-op (nothing to compact) writes no row: nothing was attempted;
//   - a summarizer failure that ended in the local fallback is one row, mode fallback,
//     its detail naming the failure;
//   - summary_tokens: the usage the summarizer reported (prompt + answer), else the
//     estimate of the request and the answer; 0 for the fallback.
#include <chrono>

#include "actors/session/session_state.hpp"
#include "policies/client_text.hpp"
#include "store/compaction_log.hpp"

namespace mneme::session_detail {

namespace {

const char* origin_of(trigger by) {
  switch (by) {
    case trigger::t12_manual_session:
    case trigger::t13_manual_local:
    case trigger::t14_channel_command:
    case trigger::t15_acp_command:
      return "manual";
    case trigger::t3_hygiene_message_cap:
    case trigger::t4_hygiene_tokens:
      return "hygiene";
    default:
      return "automatic";
  }
}

} // namespace

void begin_attempt_record(session_state& st, trigger by, const std::vector<message>& middle) {
  st.attempt = session_state::attempt_record{};
  st.attempt.by = by;
  std::vector<std::string_view> texts;
  texts.reserve(middle.size());
  for (const auto& m : middle)
    texts.push_back(m.content);
  st.attempt.identifiers = extract_identifiers(texts);
}

compaction_log_entry attempt_entry(const session_state& st, const compaction_outcome& out,
                                   const char* outcome, std::string_view summary) {
  compaction_log_entry e;
  e.session_id = st.record.id;
  e.at_ms = st.now();
  e.trigger = std::string{to_string(out.by)};
  e.origin = origin_of(out.by);
  e.mode = st.attempt.mode.empty() ? "none" : st.attempt.mode;
  e.outcome = outcome;
  e.tokens_before = out.tokens_before;
  e.tokens_after = out.tokens_after;
  e.summarizer_model = st.attempt.model;
  e.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::steady_clock::now() - st.compaction_started)
                    .count();
  e.summary_tokens = st.attempt.summary_tokens;
  e.attempt = st.attempt.attempt;
  if (!summary.empty()) {
    auto kept = retention_of(st.attempt.identifiers, summary);
    e.identifiers_in = kept.identifiers_in;
    e.identifiers_kept = kept.identifiers_kept;
  } else {
    e.identifiers_in = static_cast<int64_t>(st.attempt.identifiers.size());
  }
  e.detail = out.failure_reason.empty() ? st.attempt.detail : out.failure_reason;
  return e;
}

void count_logged_attempt(session_state& st, const compaction_log_entry& e) {
  if (st.params.metrics)
    st.params.metrics->record_attempt(e);
}

void log_uncommitted_attempt(session_ptr self, compaction_log_entry e) {
  auto& st = self->state;
  count_logged_attempt(st, e);
  st.log().info("session={} event=compaction_attempt outcome={} mode={} by={} "
                "identifiers_in={}", e.session_id, e.outcome, e.mode, e.trigger,
                e.identifiers_in);
  then_forgetting(self,
      self->request(st.deps.storage, st.params.storage_timeout, st_clog_put_atom_v,
                    std::move(e)),
      [](int64_t) {},
      [self](caf::error& err) {
        self->state.log().warn("session={} event=compaction_log_failed error={}",
                               self->state.record.id, log_quoted(render_error(err)));
      });
}

void log_refusal(session_ptr self, trigger by, const char* outcome, std::string detail) {
  auto& st = self->state;
  compaction_log_entry e;
  e.session_id = st.record.id;
  e.at_ms = st.now();
  e.trigger = std::string{to_string(by)};
  e.origin = origin_of(by);
  e.mode = "none";
  e.outcome = outcome;
  e.tokens_before = e.tokens_after = st.live_tokens;
  e.detail = std::move(detail);
  log_uncommitted_attempt(self, std::move(e));
}

} // namespace mneme::session_detail
