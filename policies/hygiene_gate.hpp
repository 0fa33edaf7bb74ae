// The gateway's hygiene failure cooldown (SPEC §2 T3/T4, §5.4, §9
// compression.hygiene_failure_cooldown_seconds): after a hygiene compaction of a
// session key failed, the gateway does not ask that key's session for another
// hygiene LLM summary until the cooldown has passed. The turn itself always runs.
//
// Pure functions: no clock (`now` is a parameter), no I/O, no exceptions; any
// thread. Called by the gateway actor, which keeps one `cooldown_until_ms` per key
// (in memory: a restarted process starts without it, the session's own persisted
// summary cooldown still applies).
//
// Decision (where the SPEC is silent), per trigger while the key's cooldown runs:
//   T3 (message cap)  still compacts, fallback-only: the session inserts the local
//                     fallback summary and calls no summarizer. The message cap is
//                     what keeps a live context bounded during an outage (SPEC §5.4,
//                     the death spiral), so it is never skipped — except with
//                     abort_on_summary_failure: true, where no fallback summary may
//                     be written; then it is skipped like T4.
//   T4 (85% estimate) skipped: the session's own T1/T10 checks still run with the
//                     turn (through the normal summarizer, with its own locks).
// Outside the cooldown, or with hygiene_failure_cooldown_seconds = 0, every hygiene
// trigger compacts normally. Any other trigger passes through unchanged.
//
// How the cooldown moves (hygiene_cooldown_after):
//   failed             the summary call failed (a report with summary_failed, also
//                      when the fallback then committed), or the session answered an
//                      error other than a refusal (an aborted summary, a timeout, a
//                      storage error): until = now + cooldown seconds (0: no cooldown);
//   summarized         an LLM summary was committed: the summarizer answers again,
//                      the cooldown clears;
//   no_summary_call    nothing was asked of the summarizer (fallback-only, nothing
//                      to compact, the rule no longer matched): unchanged;
//   refused            the session refused (locked, another compaction running):
//                      unchanged — a refusal is not a failed attempt.
//
// Invariants: the returned until is 0 or > now when it was set by a failure;
// a cooldown never lasts longer than hygiene_failure_cooldown_seconds from the
// last failure.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

#include "messages/transcript.hpp"
#include "policies/compression_params.hpp"
#include "messages/trigger.hpp"

namespace mneme {

enum class hygiene_action : uint8_t {
  compact,                 // ask the session for the hygiene compaction
  compact_fallback_only,   // ask for it with the local fallback summary only
  skip,                    // no compaction; the turn runs
};

std::string_view to_string(hygiene_action a);
std::ostream& operator<<(std::ostream& os, hygiene_action a);

enum class hygiene_result : uint8_t { summarized, no_summary_call, failed, refused };

std::string_view to_string(hygiene_result r);
std::ostream& operator<<(std::ostream& os, hygiene_result r);

// The result of a compaction the session reported (compaction_report's flags).
hygiene_result hygiene_result_of(bool committed, bool used_fallback, bool summary_failed);

// True while the key's hygiene cooldown runs at `now`.
bool in_hygiene_cooldown(time_ms cooldown_until_ms, time_ms now);

// What the gateway does with the hygiene trigger `fired`.
hygiene_action gate_hygiene(trigger fired, time_ms cooldown_until_ms, time_ms now,
                            const compression_params& params);

// The key's cooldown_until after a hygiene compaction ended with `result` at `now`.
time_ms hygiene_cooldown_after(hygiene_result result, time_ms cooldown_until_ms, time_ms now,
                               const compression_params& params);

} // namespace mneme
