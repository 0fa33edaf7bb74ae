// External compaction in a session (SPEC §6): the Codex app-server mode
// (compression.codex_app_server_auto) and OpenAI server-side compaction
// (compression.codex_responses_native). The decision itself is the pure table of
// policies/external_compaction.hpp; this unit applies it to the session's state.
// Touched only by the owning session actor, inside its handlers.
//
// Decisions where the SPEC is silent:
//   - backend_native and nobody gate every automatic trigger, the gateway's hygiene
//     triggers T3/T4 and the engine request T11 included: a refused automatic trigger
//     answers "nothing to do" (not an error), so a turn is never blocked by it;
//   - when the server reports a compaction with an answer, mneme's post-call check of
//     that answer is skipped (the server just made the context smaller); the next
//     turn's checks run as usual against mneme_threshold;
//   - the managed endpoint gets the middle of the split only (head and tail stay
//     verbatim as for a summary) and the summary budget as "target about N tokens".
#include <cassert>

#include <spdlog/spdlog.h>

#include "actors/session/session_state.hpp"

namespace mneme::session_detail {

void decide_external(session_state& st) {
  // REQUIRES: set_window computed a threshold for a positive window.
  assert(st.threshold > 0 && st.window > 0);
  auto before = st.external;
  st.external = decide_external_compaction(st.params.compression, st.params.model.backend,
                                           st.params.model.name, st.threshold, st.window);
  bool changed = st.external.who != before.who
                 || st.external.mneme_threshold != before.mneme_threshold
                 || st.external.server_compact_threshold != before.server_compact_threshold;
  // Every session starts as `mneme`: only a different compactor is worth an info line.
  if (changed)
    st.log().log(st.external.who == compactor::mneme ? spdlog::level::debug
                                                     : spdlog::level::info,
                 "session={} event=external_compaction who={} server_threshold={} "
                 "mneme_threshold={} window={}",
                 st.record.id, to_string(st.external.who), st.external.server_compact_threshold,
                 st.external.mneme_threshold, st.window);
}

int64_t automatic_threshold(const session_state& st) {
  return st.external.who == compactor::server_first ? st.external.mneme_threshold
                                                    : st.threshold;
}

bool automatic_allowed(const session_state& st, trigger by) {
  if (bypasses_locks(by))
    return true; // error and manual triggers
  return st.external.who != compactor::backend_native && st.external.who != compactor::nobody;
}

void gate_automatic(const session_state& st, trigger_decision& d) {
  if (d.compact && !automatic_allowed(st, d.fired)) {
    d.compact = false;
    d.skip = trigger_skip::no_rule_matched;
  }
}

void decorate_chat_request(const session_state& st, chat_request& req) {
  req.server_compact_threshold = st.external.server_compact_threshold;
}

void note_chat_answer(session_state& st, const chat_answer& answer) {
  st.server_compacted_this_turn = answer.server_compacted;
  if (!answer.server_compacted)
    return;
  st.log().info("session={} event=server_compaction prompt_tokens={} server_threshold={} "
                "mneme_threshold={}",
                st.record.id, answer.prompt_tokens, st.external.server_compact_threshold,
                st.external.mneme_threshold);
  if (st.params.metrics) {
    st.params.metrics->server_compactions.fetch_add(1, std::memory_order_relaxed);
    st.params.metrics->record_external(st.external.who,
                                       external_outcome_label::server_compacted);
  }
}

bool uses_compaction_endpoint(const session_state& st) {
  return st.external.who == compactor::backend_endpoint;
}

chat_request endpoint_compaction_request(const session_state& st,
                                         const std::vector<message>& middle,
                                         int64_t budget_tokens, const std::string& focus) {
  chat_request req;
  req.model = st.params.model.name;
  req.messages = middle;
  req.purpose = llm_purpose::compaction;
  req.instructions = "Compact this part of the conversation; target about "
                     + std::to_string(budget_tokens) + " tokens.";
  if (!focus.empty())
    req.instructions += " Focus on: " + focus;
  return req;
}

} // namespace mneme::session_detail
