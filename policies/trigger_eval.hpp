// Trigger evaluation (SPEC §2 table): given a session's numbers at one moment
// of its life (before a call, after a call, the gateway's hygiene check, an idle
// tick, the preflight loop, an engine request, a manual command), decide whether
// to compact, which trigger fired, and whether failure protection
// (policies/failure_protection) lets it run.
//
// Pure function of its arguments: no clock (`now` is a parameter), no I/O, no
// exceptions; safe from any thread. Called by the session actor (T1, T2, T5,
// T6-T11, T12-T15) and by the gateway's hygiene check (T3, T4). The threshold
// and window figures are inputs (computed by policies/threshold), so this unit
// is testable alone.
//
// Rules, per phase (tokens = the API-reported prompt tokens when known, else the
// local estimate; SPEC §2 "overrides the estimate whenever it is known"):
//   pre_call        T1  tokens >= threshold
//   post_call       the call failed: T6 413, T7 429 long context (and the
//                   declared window is capped), T8 400 output too large, T9
//                   overflow; any other failure fires nothing (an unsupported
//                   parameter is not an overflow, and a failed call has no
//                   fresh usage for T2).
//                   the call succeeded: T2 API prompt tokens >= threshold (0 =
//                   unknown never fires: SPEC §5.4).
//   hygiene_check   T3  message count >= hygiene_hard_message_limit (<= 0 = off),
//                       whatever the tokens; checked first because it is the
//                       one that runs through a cooldown (fallback-only)
//                   T4  tokens >= hygiene token limit (85% of the window)
//   idle_tick       T5  idle_compact_after_seconds > 0 and idle seconds >= it
//                       and tokens >= the floor (64,000)
//   preflight       T10 tokens >= threshold, or message count >= the
//                       compressible window (> 0); at most max_attempts passes
//                       per turn (`preflight_passes_done` counts the passes that
//                       ran; one refused by a lock is not counted, SPEC §5.3)
//   engine_request  T11 always (an engine may ask below the threshold)
//   manual_command  T12-T15 as given; always runs
// Then: the master switch (compression.enabled: false) refuses T1-T11; failure
// protection's `check` refuses or qualifies (probe, fallback-only) T1-T5, T10,
// T11. The trigger whose rule matched is reported even when it may not run, so
// the caller can log it, count it, or prune proactively (SPEC §6).
//
// Decision where the SPEC is silent: T7's window cap is reported whenever the
// long-context 429 arrives, also with the master switch off: it is a fact about
// the API, not a compaction.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string_view>

#include "messages/transcript.hpp"
#include "policies/compression_params.hpp"
#include "policies/failure_protection.hpp"
#include "messages/llm_error_kind.hpp"
#include "messages/trigger.hpp"

namespace mneme {

// The moment of the session's life being evaluated.
enum class eval_phase : uint8_t {
  pre_call, post_call, hygiene_check, idle_tick, preflight, engine_request, manual_command
};

std::string_view to_string(eval_phase p);
std::ostream& operator<<(std::ostream& os, eval_phase p);

// The session's numbers at the moment evaluated.
struct trigger_inputs {
  eval_phase phase = eval_phase::pre_call;
  int64_t estimated_tokens = 0;      // local estimate of the live context / request
  int64_t api_prompt_tokens = 0;     // last API-reported usage.prompt_tokens, 0 = unknown
  int64_t message_count = 0;         // live messages
  int64_t idle_seconds = 0;          // since the last message (idle_tick)
  llm_error_kind last_error = llm_error_kind::none; // post_call: how the call failed
  trigger manual = trigger::none;    // manual_command: one of T12-T15
  int preflight_passes_done = 0;     // preflight: T10 passes already run this turn
};

std::ostream& operator<<(std::ostream& os, const trigger_inputs& in);

// The figures the rules compare against; from policies/threshold for the
// session's model. Each figure a phase compares against must be > 0 (a phase
// does not look at the others): threshold for pre_call, post_call and preflight,
// hygiene_token_limit for hygiene_check, idle_floor_tokens for idle_tick,
// context_window and long_context_cap_tokens for a long-context 429.
struct trigger_limits {
  int64_t threshold_tokens = 0;        // T1, T2, T10
  int64_t hygiene_token_limit = 0;     // T4: 85% of the window
  int64_t idle_floor_tokens = 0;       // T5: the 64,000 floor
  int64_t context_window = 0;          // the session's declared window (T7 caps it)
  int64_t long_context_cap_tokens = 0; // T7: the 200,000 cap
  int64_t compressible_window = 0;     // T10: message count forcing a pass; <= 0 = off
};

std::ostream& operator<<(std::ostream& os, const trigger_limits& l);

// Why no compaction runs.
enum class trigger_skip : uint8_t {
  none,                   // it runs
  no_rule_matched,
  master_switch_off,      // compression.enabled: false (T1-T11)
  locked,                 // failure protection refused; see decision.lock
  preflight_passes_spent, // T10 matched but max_attempts passes already ran
  bad_input,              // see decision.error
};

std::string_view to_string(trigger_skip s);
std::ostream& operator<<(std::ostream& os, trigger_skip s);

// Input that cannot be evaluated; nothing fires.
enum class trigger_input_error : uint8_t {
  none,
  negative_tokens,              // estimated_tokens or api_prompt_tokens < 0
  negative_message_count,
  negative_idle_seconds,
  negative_preflight_passes,
  non_positive_threshold,       // limits.threshold_tokens <= 0
  non_positive_hygiene_limit,   // limits.hygiene_token_limit <= 0
  non_positive_idle_floor,      // limits.idle_floor_tokens <= 0
  non_positive_context_window,  // limits.context_window <= 0
  non_positive_long_context_cap,// limits.long_context_cap_tokens <= 0
  manual_kind_not_manual,       // manual_command without one of T12-T15
};

std::string_view to_string(trigger_input_error e);
std::ostream& operator<<(std::ostream& os, trigger_input_error e);

struct trigger_decision {
  bool compact = false;               // run a compaction now
  trigger fired = trigger::none;      // the rule that matched (also when it may not run)
  trigger_skip skip = trigger_skip::no_rule_matched;
  trigger_input_error error = trigger_input_error::none;
  bool bypasses_locks = false;        // fired is T6-T9 or T12-T15
  lock_decision lock;                 // failure protection's verdict (probe, fallback-only)
  int64_t tokens_considered = 0;      // the API figure when known, else the estimate
  std::optional<int64_t> capped_context_window; // T7: the new declared window

  bool fallback_only() const { return compact && lock.fallback_only; }
  bool probe() const { return compact && lock.probe; }
};

std::ostream& operator<<(std::ostream& os, const trigger_decision& d);

trigger_decision evaluate_triggers(const trigger_inputs& in, const trigger_limits& limits,
                                   const compression_params& params, const trigger_state& state,
                                   time_ms now);

// T5 against idle eviction: true while a session's idle compaction is still due —
// T5 is on (idle_compact_after_seconds > 0), the live tokens reach the idle floor,
// and the session has been idle for less than idle_compact_after_seconds. Such a
// session stays resident until its idle tick has run (evicting it would drop the
// timer and T5 would never fire when idle_evict_seconds is the shorter delay).
// Bounded: only sessions above the floor, and only until their tick.
bool idle_compaction_pending(const compression_params& params, int64_t idle_ms,
                             int64_t live_tokens, int64_t idle_floor_tokens);

} // namespace mneme
