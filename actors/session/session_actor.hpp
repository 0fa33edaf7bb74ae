// The session actor: one per hosted session (SPEC §2, §3, §5; ARCHITECTURE). It holds
// the live transcript, its token numbers and the persisted trigger state, runs turns
// (append the user message -> pre-call check T1 and the preflight loop T10 -> model call
// through the chat pool -> append the answer with its usage -> post-call check T2, or
// the error triggers T6-T9 and a retry), and compacts end to end: split -> summarizer
// pool -> local fallback on failure (unless abort_on_summary_failure) -> one atomic
// commit through the storage actor -> swap of the live transcript. Every decision comes
// from policies/; this actor only turns decisions into messages.
//
// Concurrency inside the actor (event-based, never blocks):
//   - turns run one at a time; later turns wait in a bounded FIFO (errc::overloaded
//     beyond session_params::max_pending_turns);
//   - at most one compaction is in flight; appends (ss_append_atom and the user
//     message of a turn) go on while a summary is in flight and land after the tail
//     (apply_plan keeps rows appended after planning);
//   - a compaction requested from outside while one runs is answered
//     errc::compaction_in_flight; the turn's own checks wait for it instead.
// Time: `now` comes from session_params::clock (the test seam), timers are
// delayed_send with generation numbers (stale ticks are ignored).
// Start: the actor loads its session row and live context from the storage actor
// (messages wait meanwhile) and repairs the stored trigger state; a session that cannot
// be loaded quits with the storage error.
// Child sessions (SPEC §3, compression.in_place: false): a committed compaction ends
// the stored session and continues in a child (store: continue_in_child); the actor
// then holds the child's id, record and live context, sends (sv_child_atom, parent
// id, child id, session key) to the supervisor, and the turn that compacted goes on in
// the child (its reply names the child). Appends arriving meanwhile wait and land in
// the child.
// Agent turns (SPEC §8.1; session_agent.cpp): a turn may offer tools (kept per session
// key through the storage actor, read back when the session loads) and continue a tool
// loop with the results of the model's calls; the pending calls are derived from the
// live rows (policies/tool_loop.hpp), so a rehydrated session continues the same loop.
// Every model call of a loop runs the same checks as a first call (T1, the window
// guard, T2 after the answer, T6-T9 on an error).
// Exhaustion (SPEC §5.3): the session sends (sv_exhaust_atom, session id, session key)
// to the supervisor and answers the turn with errc::compaction_exhausted, whose context
// is (text, turn_reply): the reply so far, i.e. the compactions the turn tried.
// Context service (issue 27 item 2; session_context.cpp): an agent that calls its model
// itself runs the same path as jobs of the turn queue, minus the model call: context
// (rows -> T1/T10/window guard -> the messages to send), usage (answer -> T2), model_error
// (T6-T9 -> the messages of the retry).
// A row that cannot fit (larger than compression.max_row_share of the window, policies/
// oversized_row.hpp) is replaced by a marker with an excerpt before the turn's
// compaction checks and after every answer; the original stays stored and searchable.
//
// Thread: a CAF event-based actor; talk to it only by messages.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "caf/all.hpp"

#include "actors/llm/llm_pool.hpp"
#include "actors/recall/recall_actor.hpp"
#include "actors/runtime_metrics.hpp"
#include "messages/mneme_types.hpp"
#include "policies/builtin_tools.hpp"
#include "policies/compression_params.hpp"

namespace mneme {

// The session's interface, session_actor, is declared in messages/actor_handles.hpp: the
// supervisor sends session handles inside messages, which needs a type ID.

// The part of the supervisor a session talks to. supervisor_actor converts to it.
using session_supervisor_actor = caf::typed_actor<
  // (session id, session key) ran out of compaction attempts.
  caf::reacts_to<sv_exhaust_atom, std::string, std::string>,
  // (parent id, child id, session key): the session continued in a child.
  caf::reacts_to<sv_child_atom, std::string, std::string, std::string>>;

// The part of the storage actor a session talks to. storage_actor converts to it.
using session_storage_actor = caf::typed_actor<
  caf::replies_to<st_append_atom, message>::with<int64_t>,
  caf::replies_to<st_live_atom, std::string>::with<std::vector<message>>,
  caf::replies_to<st_compact_atom, compaction_commit>::with<message>,
  caf::replies_to<st_child_atom, compaction_commit, int64_t>::with<std::vector<message>>,
  caf::replies_to<st_replace_atom, replacement_commit>::with<std::vector<message>>,
  caf::replies_to<st_session_atom, std::string>::with<session_record>,
  caf::replies_to<st_put_triggers_atom, std::string, trigger_state>::with<caf::ok_atom>,
  caf::replies_to<st_tools_put_atom, std::string, std::string, std::string,
                  int64_t>::with<caf::ok_atom>,
  caf::replies_to<st_tools_get_atom, std::string>::with<std::string>,
  // The user's facts, for the built-in memory tool (session_builtin_tools.cpp).
  caf::replies_to<st_fact_put_atom, fact_record, int64_t>::with<fact_record>,
  caf::replies_to<st_fact_del_atom, std::string, std::string, int64_t>::with<fact_record>,
  caf::replies_to<st_facts_atom, fact_query>::with<std::vector<fact_record>>,
  // The row of a compaction attempt that committed nothing (session_compaction_log.cpp).
  caf::replies_to<st_clog_put_atom, compaction_log_entry>::with<int64_t>>;

// Milliseconds since the Unix epoch from the system clock (the default clock).
time_ms system_clock_ms();

struct session_params {
  compression_params compression;
  model_params model;                       // name, context_length, max_tokens
  std::string summary_model;                // empty = the model block's name
  std::string summary_endpoint;             // the summarizer's URL, for log lines only
  std::string hygiene_endpoint;             // the hygiene pool's URL; empty = summary_endpoint
  std::chrono::milliseconds storage_timeout{30000};
  std::chrono::milliseconds chat_timeout{305000};    // > the chat pool's HTTP deadline
  std::chrono::milliseconds summary_timeout{305000}; // > the summarizer pool's deadline
  std::chrono::milliseconds hygiene_timeout{305000}; // > the hygiene pool's deadline
  // The memory tool's search text to a vector (embeddings.query_timeout_ms; issue 48).
  std::chrono::milliseconds query_embed_timeout{2000};
  size_t max_pending_turns = 64;
  int64_t max_tool_rounds = 64;             // gateway.max_tool_rounds (policies/tool_loop.hpp)
  int64_t max_tool_calls_per_message = 128; // gateway.max_tool_calls_per_message
  // The built-in tools offered to the model (gateway.builtin_tools after availability,
  // policies/builtin_tools.hpp) and the bound of each result.
  builtin_set builtin_tools;
  int64_t builtin_result_max_bytes = default_builtin_result_max_bytes;
  std::function<time_ms()> clock = system_clock_ms; // test seam: tests set the time
  std::shared_ptr<spdlog::logger> log;      // null = no logging
  std::shared_ptr<runtime_metrics> metrics; // null = not counted
};

// The actors a session talks to. `supervisor` may be null (no exhaustion report).
// `recall` answers the built-in session_search tool; null = that tool is not offered.
// `hygiene` summarizes the compactions the gateway's hygiene check asks for (T3, T4)
// with the hygiene timeouts; null = those use `summarizer` too.
struct session_deps {
  session_storage_actor storage;
  llm_pool_actor chat;
  llm_pool_actor summarizer;
  session_supervisor_actor supervisor;
  llm_pool_actor hygiene{};
  recall_actor recall{};
  // Semantic recall (issue 48): the memory tool's fact search asks it for its text's
  // vector first; null (embeddings off) = facts are searched by words only.
  query_embedder embedder{};
};

// Spawns the session actor of the stored session `session_id` (rehydrates it).
session_actor spawn_session(caf::actor_system& sys, session_params params, session_deps deps,
                            std::string session_id);

} // namespace mneme
