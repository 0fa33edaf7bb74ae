// The vocabulary of the session, supervisor and gateway actors (actors/session,
// actors/supervisor, actors/gateway): what a turn answers, what a compaction reports,
// a snapshot of a session, the supervisor's counters. Plain values plus their CAF
// inspect(); included by messages/mneme_types.hpp inside the "session, gateway,
// supervisor" section of the type-ID block (it uses no __COUNTER__). Owned by the
// runtime module (issue 6). Safe to use from any thread; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "caf/meta/type_name.hpp"

#include "messages/agent_turn.hpp"
#include "messages/transcript.hpp"
#include "messages/trigger.hpp"

namespace mneme {

// What one compaction did (SPEC §3, §5). `committed` is false for a no-op, a
// refusal by a lock and an aborted summary.
struct compaction_report {
  trigger by = trigger::none;
  bool committed = false;
  bool nothing_to_compact = false;
  bool summary_failed = false;   // the summarizer call failed
  bool used_fallback = false;    // the local fallback summary was committed
  // The summarizer refused the credentials or quota (401, 403, quota): nothing
  // was committed and no fallback written (policies/summary_failure.hpp).
  bool summary_auth_failed = false;
  bool effective = false;        // saved at least anti_thrash_min_savings
  int64_t tokens_before = 0;     // live context estimate before / after
  int64_t tokens_after = 0;
  int64_t archived_rows = 0;     // rows that left the live context
  int64_t summary_id = 0;        // the stored summary row, 0 when nothing committed
  int64_t messages_after = 0;    // live rows after
  int64_t overhead_us = 0;       // wall time of the pipeline minus the summarizer wait
  // The size guard (SPEC §5.6): the result would not have been smaller than its input,
  // so nothing was committed (the rows stay live); counts as an ineffective attempt.
  bool grew = false;
  // Run by the window guard (SPEC §5.6) before a model call, whatever the locks said.
  bool window_guard = false;
};

// A built-in tool call mneme ran itself inside a turn's tool loop (issue 29 item 7,
// policies/builtin_tools.hpp): the call as the model sent it and its result's size.
struct builtin_call_report {
  std::string id;
  std::string name;
  std::string arguments;
  int64_t result_bytes = 0;
};

// The answer of one turn (session) or of one inbound message (gateway).
struct turn_reply {
  std::string session_id;        // the session that answered (a reset changes it)
  std::string answer;            // the model's answer; empty for channel commands
  std::string notice;            // a note for the user (reset, command result), may be empty
  std::vector<compaction_report> compactions; // compactions this turn ran, in order
  int64_t live_messages = 0;     // live rows after the turn
  int64_t live_tokens = 0;       // local estimate of the live context after the turn
  int64_t prompt_tokens = 0;     // usage.prompt_tokens of the model call, 0 if none
  // Agent turns (SPEC §8.1): the calls of the model's answer, exactly as it sent them,
  // now pending until the client sends their results; empty for a text answer.
  std::vector<tool_call> tool_calls;
  // "tool_calls" when tool_calls is not empty, "length" when the model stopped at
  // max_tokens, else "stop"; empty when no model answered (channel commands, a reset).
  std::string finish_reason;
  // finish_reason "stop" because the model produced one of the request's stop sequences:
  // that sequence (chat_answer::stop_sequence); "" otherwise. Not stored: a replay has "".
  std::string stop_sequence;
  // The built-in tool calls mneme ran during this turn, in order (never pending).
  std::vector<builtin_call_report> builtin_calls;
  // The answer of an earlier request with the same Idempotency-Key, rebuilt from its
  // stored rows (actors/gateway/gateway_appends.cpp): nothing ran now.
  bool replayed = false;
};

// A session's numbers at one moment (ss_state_atom).
struct session_snapshot {
  session_record record;         // the session row, triggers as held in memory
  int64_t live_messages = 0;
  int64_t live_tokens = 0;
  int64_t threshold_tokens = 0;
  int64_t context_window = 0;    // the declared window (T7 may have lowered it)
  bool compaction_in_flight = false;
  int64_t pending_turns = 0;     // turns waiting behind the running one
  std::vector<int64_t> compactions_by_trigger; // indexed by trigger's value
  // The attempt budget of the current turn (or of the last one when none runs; SPEC
  // §5.3): attempts spent since the last effective compaction, and the budget
  // (compression.max_attempts). 0 <= attempts_used <= max_attempts.
  int64_t attempts_used = 0;
  int64_t max_attempts = 0;
};

// The supervisor's counters (sv_stats_atom).
struct supervisor_stats {
  int64_t hosted = 0;            // session actors alive now
  int64_t spawned = 0;           // spawns and rehydrations since start
  int64_t restarts = 0;          // crashed sessions restarted from the store
  int64_t exhausted = 0;         // compaction_exhausted reports received
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, compaction_report& x) {
  return f(caf::meta::type_name("mneme::compaction_report"), x.by, x.committed,
           x.nothing_to_compact, x.summary_failed, x.used_fallback, x.summary_auth_failed,
           x.effective,
           x.tokens_before, x.tokens_after, x.archived_rows, x.summary_id, x.messages_after,
           x.overhead_us, x.grew, x.window_guard);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, builtin_call_report& x) {
  return f(caf::meta::type_name("mneme::builtin_call_report"), x.id, x.name, x.arguments,
           x.result_bytes);
}

// The answer to an append carrying an Idempotency-Key (gw_idem_atom): the row's id and
// session, and whether it was written by an earlier request with the same key
// (replayed: nothing was written now).
struct idempotent_append {
  int64_t id = 0;
  std::string session_id;
  bool replayed = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, idempotent_append& x) {
  return f(caf::meta::type_name("mneme::idempotent_append"), x.id, x.session_id, x.replayed);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, turn_reply& x) {
  return f(caf::meta::type_name("mneme::turn_reply"), x.session_id, x.answer, x.notice,
           x.compactions, x.live_messages, x.live_tokens, x.prompt_tokens, x.tool_calls,
           x.finish_reason, x.stop_sequence, x.builtin_calls, x.replayed);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, tool_result_input& x) {
  return f(caf::meta::type_name("mneme::tool_result_input"), x.tool_call_id, x.content,
           x.is_error);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, turn_options& x) {
  return f(caf::meta::type_name("mneme::turn_options"), x.has_max_tokens, x.max_tokens,
           x.has_temperature, x.temperature, x.extra_json, x.model, x.builtin_tools,
           x.compact_threshold);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, turn_input& x) {
  return f(caf::meta::type_name("mneme::turn_input"), x.content, x.tool_results, x.set_tools,
           x.tools_json, x.abandon_pending, x.repair_pending, x.options, x.idempotency_key,
           x.idempotency_checked);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, session_snapshot& x) {
  return f(caf::meta::type_name("mneme::session_snapshot"), x.record, x.live_messages,
           x.live_tokens, x.threshold_tokens, x.context_window, x.compaction_in_flight,
           x.pending_turns, x.compactions_by_trigger, x.attempts_used, x.max_attempts);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, supervisor_stats& x) {
  return f(caf::meta::type_name("mneme::supervisor_stats"), x.hosted, x.spawned, x.restarts,
           x.exhausted);
}

} // namespace mneme
