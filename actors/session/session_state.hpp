// The state of one session actor and the steps its handlers are made of, shared by
// session_actor.cpp (start, turns, triggers, timers) and session_compaction.cpp (the
// compaction pipeline). Internal to actors/session: nothing else includes it.
// Touched only by the owning actor, inside its handlers.
//
// Invariants (between handlers):
//   1. live_tokens == sum of token_estimate over live; every live row has an id,
//      except a rolling summary whose micro-fold sync failed (then micro_debt).
//   2. compacting implies exactly one compaction pipeline is running.
//   3. turn_running is false implies pending_turns is empty (a finished turn starts
//      the next one).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/request_timeouts.hpp"
#include "actors/session/session_actor.hpp"
#include "policies/external_compaction.hpp"
#include "policies/failure_protection.hpp"
#include "policies/identifier_retention.hpp"
#include "policies/threshold.hpp"
#include "policies/trigger_eval.hpp"

namespace mneme::session_detail {

// A request of the context service (issue 27 item 2; session_context.cpp): it runs as a
// turn of the queue whose model call is the agent's own.
struct context_job {
  context_request rq;
  caf::typed_response_promise<context_reply> promise;
  context_reply reply; // filled on the way, delivered by end_turn
};

struct pending_turn {
  turn_input input;
  caf::typed_response_promise<turn_reply> promise; // unused for a context job
  std::shared_ptr<context_job> context;             // null = a turn
};

struct session_state {
  static inline const char* name = "session";

  session_params params;
  session_deps deps;
  session_record record;             // record.triggers is the authoritative trigger state
  bool ready = false;                // loaded from the store

  std::vector<message> live;
  int64_t live_tokens = 0;
  int64_t window = 0;                // declared window (T7 may lower it)
  int64_t threshold = 0;

  // Turns.
  std::deque<pending_turn> pending_turns;
  bool turn_running = false;
  caf::typed_response_promise<turn_reply> turn_promise;
  turn_reply reply;
  turn_attempts attempts{3};
  int preflight_passes = 0;
  int appends_in_flight = 0;
  // tool_call_id of each tool row whose append the store has not answered yet
  // (check_answered_once: a second answer sent before the first is stored is refused).
  std::vector<std::string> answers_in_flight;

  // The running job when it is a context service request (session_context.cpp), else
  // null; the model name its threshold follows ("" = params.model.name; set by a
  // context request naming a model, in memory only).
  std::shared_ptr<context_job> context;
  std::string threshold_model;

  // Agent turns (session_agent.cpp): the key's tools (a JSON array, "" or "[]" = none;
  // read at load) and the model settings of the running turn's request.
  std::string tools_json;
  turn_options turn_opts;
  // The running turn's stream receiver (`"stream": true`), null otherwise: every model
  // call of the turn streams into it.
  answer_stream_ptr turn_stream;

  // Built-in tools (session_builtin_tools.cpp): the tools array sent to the model (the
  // key's tools followed by the offered builtins) and the builtins offered, derived from
  // tools_json and params.builtin_tools (none when the turn's options turn them off);
  // recomputed when either changes.
  struct tool_offer {
    bool ready = false;
    std::string source;   // the tools_json it was derived from
    bool builtins = true; // and turn_opts.builtin_tools
    std::string tools;    // "" = no tools
    builtin_set offered;
  };
  mutable tool_offer offer;

  // Compaction.
  bool compacting = false;
  std::vector<std::function<void()>> after_compaction; // run once the pipeline ends
  std::vector<int64_t> compactions_by_trigger = std::vector<int64_t>(trigger_count, 0);
  std::chrono::steady_clock::time_point compaction_started; // for overhead_us
  std::chrono::microseconds summary_wait{0};               // summarizer round trip
  // The window guard (SPEC §5.6; session_actor.cpp) asks the next start_compaction for a
  // guard compaction: no abort without a fallback, the minimal tail when asked. The
  // request is consumed when the pipeline starts; `pipeline_guard` marks the running one.
  bool guard_requested = false;
  bool guard_minimal_tail = false;
  bool pipeline_guard = false;
  // The compaction log (session_compaction_log.cpp): what the running pipeline will
  // write in its row, set when it plans (the identifiers of its middle) and when it
  // asks for a summary.
  struct attempt_record {
    trigger by = trigger::none;
    std::vector<identifier> identifiers; // of the middle (policies/identifier_retention)
    std::string mode;                    // summarizer, fallback, external
    std::string model;                   // who was asked ("" for the fallback)
    int64_t summary_tokens = 0;          // what the summary call spent
    int32_t attempt = 1;
    std::string detail;                  // why the summarizer was not used
    const char* failure = "failed";      // the outcome of a failed summary: failed, timeout
    std::string summary;                 // the summary the attempt produced, once it has one
  };
  attempt_record attempt;
  // in_place: false (session_compaction.cpp): while the store ends this session and
  // opens its child, new appends wait here and then go to the child.
  bool switching_to_child = false;
  std::vector<std::function<void()>> after_switch;

  // External compaction (session_external.cpp): who compacts besides mneme, decided
  // by set_window; whether the server reported a compaction with this turn's answer.
  external_compaction_decision external;
  bool server_compacted_this_turn = false;

  // Special paths (session_paths.cpp): tool output eviction, proactive pruning,
  // micro-compaction. They run as a pipeline under `compacting` like a compaction.
  int turns_since_fold = 0;          // completed turns since the last micro-fold
  bool micro_debt = false;           // a fold's DB sync failed: the store owes a reconcile
  bool reconciled_for_compaction = false; // one-shot: the next compaction skips reconcile
  size_t prune_refused_at = SIZE_MAX;     // live size when a prune commit was last refused

  // Idle timer (T5).
  uint64_t idle_generation = 0;
  time_ms last_activity_ms = 0;

  spdlog::logger& log() const;
  time_ms now() const { return params.clock(); }
};

using session_ptr = session_actor::stateful_pointer<session_state>;

// --- Turns (session_actor.cpp)

// Appends one row through the storage actor; on success it joins the live context and
// `ok` gets its id, else `fail` the error (a tool row answering no live call is refused
// with errc::bad_request before anything is stored).
void append_row(session_ptr self, message m, std::function<void(int64_t)> ok,
                std::function<void(caf::error)> fail);

// Ends the running turn with its reply (no error) or `err`; starts the next turn.
// REQUIRES: st.turn_running.
void end_turn(session_ptr self, caf::error err);

// The checks before a model call (T1, T10, pruning, exhaustion), then the guarded call.
void pre_call_check(session_ptr self);

// The checks after a model answer (T2), then after_answer.
void post_call_check(session_ptr self);

// A model call failed: T6-T9 compact and call again, any other failure ends the turn
// with `err`.
void on_model_error(session_ptr self, caf::error err);

// errc::overloaded when the turn queue is full (session_params::max_pending_turns), else
// no error.
caf::error queue_full(const session_state& st);

// Queues a job behind the running one and starts it when none runs.
void queue_job(session_ptr self, pending_turn job);

// --- Context service (issue 27 item 2; session_context.cpp)

// Queues a context service request (errc::overloaded when the queue is full).
caf::result<context_reply> enqueue_context(session_ptr self, context_request rq);

// Starts the running context job. REQUIRES: st.turn_running, st.context.
void begin_context(session_ptr self);

// Delivers the running context job's reply, or `err`. Called by end_turn.
// REQUIRES: st.context.
void finish_context(session_ptr self, caf::error err);

// Where after_answer starts: for a context job the answer's checks are done (the agent
// runs its own tools), so the trigger state is written and the job ends; true then.
bool end_context_after_answer(session_ptr self);

// The request's tools for the window guard's estimate: the context job's when one
// runs, else tools_to_send.
const std::string& tools_for_estimate(const session_state& st);

// --- Agent turns (session_agent.cpp)

// Validates the turn against the pending tool calls (policies/tool_loop.hpp), stores
// what it brings (tools, stub results, the user row or the tool rows) and goes on with
// pre_call_check, or ends the turn with the refusal. REQUIRES: st.turn_running.
void begin_turn(session_ptr self, turn_input in);

// Ends the turn with errc::tool_round_cap: the loop ran gateway.max_tool_rounds rounds
// (the results are stored, the model is not called again).
void end_at_round_cap(session_ptr self);

// --- Built-in tools (issue 29 item 7; session_builtin_tools.cpp)

// The tools sent with a chat request now: the key's tools (when a non-empty array)
// followed by the offered built-in tools; "" when there are none.
const std::string& tools_to_send(const session_state& st);

// The built-in tools offered with the current tools (a client tool of the same name
// shadows one).
const builtin_set& offered_builtins(const session_state& st);

// After an answer and its checks (T2): the answer's built-in calls are run and their
// results stored; then the turn ends with the client's calls pending when it had any,
// else the model is called again (the round cap and T1 first). A text answer unloads
// the skills skill_view loaded in the loop, then ends the turn.
void after_answer(session_ptr self);

// The figures the trigger rules compare against, for the session's current window; the
// running turn's compact_threshold (turn_options) replaces the threshold when set.
trigger_limits limits_of(const session_state& st);

// Recomputes the threshold after the window changed.
void set_window(session_state& st, int64_t window);

// Writes the trigger state through the storage actor (errors are logged).
void persist_triggers(session_ptr self);

// What a compaction pipeline hands back: a report, or an error (commit failed,
// errc::compaction_failed for an aborted summary, errc::bad_request for a bad local
// center). Called exactly once.
using compaction_done = std::function<void(compaction_report, caf::error)>;

// Where a local compaction (T13) centers: live index and radius.
using local_window = std::optional<std::pair<size_t, size_t>>;

// The summary budget of a middle of `middle_tokens` on the session's window
// (policies/summary_budget; 1 when the inputs give none).
int64_t summary_budget_of(const session_state& st, int64_t middle_tokens);

// The compression parameters of a plan with the minimal tail: the last real user
// message and everything after it (the window guard's smallest context).
compression_params minimal_tail_params(compression_params p);

// Runs one compaction end to end. REQUIRES: !st.compacting, st.ready.
void start_compaction(session_ptr self, trigger by, lock_decision lock, std::string focus,
                      local_window local, compaction_done done);

// --- The compaction log (issue 45; session_compaction_log.cpp)

// Starts the record of the pipeline's attempt: what started it and the identifiers
// of the rows it will replace.
void begin_attempt_record(session_state& st, trigger by, const std::vector<message>& middle);

// The log row of the running attempt with `outcome` (store/compaction_log.hpp), its
// tokens from `out`, its duration since the pipeline started and, when the attempt
// produced a summary, what that summary kept of the middle's identifiers.
compaction_log_entry attempt_entry(const session_state& st, const compaction_outcome& out,
                                   const char* outcome, std::string_view summary);

// Writes the row of an attempt that committed nothing and counts it in the metrics.
// Fire and forget: a failed write is logged, it never fails the pipeline.
void log_uncommitted_attempt(session_ptr self, compaction_log_entry e);

// Counts a committed attempt's row in the metrics (its row went with the commit).
void count_logged_attempt(session_state& st, const compaction_log_entry& e);

// Writes the row of a turn's compaction that was not attempted because `outcome`
// (exhausted, refused_by_guard): mode none, the live tokens before and after.
void log_refusal(session_ptr self, trigger by, const char* outcome, std::string detail);

// --- Special paths (SPEC §6, §5.5; session_paths.cpp)

// After an assistant answer was stored: tool output eviction, proactive pruning
// when due, micro-compaction when due, each committed through the storage
// actor, then `next`. Waits for a running pipeline first.
void run_answer_paths(session_ptr self, std::function<void()> next);

// Before a turn's compaction checks (and first among the answer paths): every live row
// larger than compression.max_row_share of the window is replaced by a marker with an
// excerpt (policies/oversized_row.hpp), committed through the storage actor; then
// `next` (also when the commit failed). Waits for a running pipeline first.
void evict_oversized_rows(session_ptr self, std::function<void()> next);

// Before a model call whose compaction did not run: starts proactive pruning when
// it is due and returns true (then calls `next` once it ended, committed or not);
// false when nothing was started.
bool prune_if_due(session_ptr self, std::function<void()> next);

// The last step before compaction exhaustion after the model refused a request as too
// large (T6-T9): evicts every tool output over tool_output_eviction_chars, read or not
// (policies/eviction_plan.hpp, plan_refused_output_eviction), and returns true; then
// calls done(committed). False (and nothing happens) when no output qualifies.
// REQUIRES: !st.compacting.
bool evict_refused_outputs(session_ptr self, std::function<void(bool committed)> done);

// Before a full compaction: when a micro-fold's sync failed, reconciles the store
// with the live transcript first, then calls `next` (also when that failed) and
// returns true; false (and nothing happens) when there is no debt.
// REQUIRES: !st.compacting.
bool reconcile_first(session_ptr self, std::function<void()> next);

// --- External compaction (SPEC §6; session_external.cpp)

// Recomputes st.external from the configuration, the model and st.threshold/window.
void decide_external(session_state& st);

// The threshold mneme's automatic triggers compare against: the decision's
// mneme_threshold when the server compacts first, else st.threshold.
int64_t automatic_threshold(const session_state& st);

// False when `by` is an automatic trigger (T1-T5, T10, T11) and the decision leaves
// automatic compaction to the backend or to nobody. Error (T6-T9) and manual
// (T12-T15) triggers are always allowed.
bool automatic_allowed(const session_state& st, trigger by);

// Turns a decision to compact into "no rule matched" when !automatic_allowed.
void gate_automatic(const session_state& st, trigger_decision& d);

// Adds what the decision asks of every chat request (server_compact_threshold).
void decorate_chat_request(const session_state& st, chat_request& req);

// After a chat answer: a server-side compaction is logged, counted and remembered
// for this turn (mneme then does not compact on the same answer).
void note_chat_answer(session_state& st, const chat_answer& answer);

// True when the summary of a compaction comes from the backend's compaction endpoint.
bool uses_compaction_endpoint(const session_state& st);

// The compaction endpoint request for `middle` (purpose compaction).
chat_request endpoint_compaction_request(const session_state& st,
                                         const std::vector<message>& middle,
                                         int64_t budget_tokens, const std::string& focus);

} // namespace mneme::session_detail
