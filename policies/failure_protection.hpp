// Failure protection of automatic compaction (SPEC §5): the summary-failure
// cooldown, the anti-thrash lock with its probe, and the per-turn attempt budget.
//
// Pure functions over the persisted `trigger_state` (messages/transcript.hpp) and
// a small `turn_attempts` value. No clock (the caller passes `now`), no I/O, no
// exceptions. Owned by one session actor: it calls `check` before a compaction,
// `on_compaction_done` after one, persists the state through the storage actor,
// and keeps one `turn_attempts` per turn. Not shared between threads.
//
// ## States
//
// Two independent regions live in one trigger_state.
//
// Region A, anti-thrash (fields anti_thrash_strikes, lock_until_ms, probe_pending):
//
//                  A1 strike                  A2 strike
//      +------+ ----------------> +---------+ ----------------> +--------+
//      | OPEN |                   | STRIKE1 |   (arm the lock)  | LOCKED | <----+
//      +------+ <---------------- +---------+                   +--------+      |
//       ^    ^     A3 effective                                     |           |
//       |    |                                   A4 now >= lock_until|          |
//       |    |                                                      v           |
//       |    |     A5 the probe was effective                   +-------+       |
//       |    +------------------------------------------------- | PROBE | ------+
//       |                                                       +-------+  A6 the probe
//       |      A7 an effective error-trigger compaction                    was not effective
//       +------   (T6-T9) from LOCKED or PROBE                             (re-arm the lock)
//
//      OPEN     strikes 0, lock_until 0, probe false   every trigger allowed
//      STRIKE1  strikes 1, lock_until 0, probe false   every trigger allowed
//      LOCKED   strikes 2, lock_until>0, probe false   automatic triggers refused
//      PROBE    strikes 2, lock_until 0, probe true    the next automatic compaction
//                                                      is the probe
//
// Region B, cooldown (fields cooldown_until_ms, cooldown_reason):
//
//      +------+  summary call failed   +---------+
//      | IDLE | ---------------------> | COOLING | --+ another failure:
//      +------+ <--------------------- +---------+ <-+ until = now + cooldown
//                now >= cooldown_until, or an LLM summary succeeded
//
//   While COOLING every automatic trigger is refused except T3 (message cap),
//   which is allowed fallback-only (see "The death spiral" below).
//
// ## Transitions and the function that performs each
//
//   A1 OPEN    -> STRIKE1   on_compaction_done: a committed compaction saved less
//                           than anti_thrash_min_savings, a no-op, or a compaction
//                           the size guard refused because it would grow (grew)
//   A2 STRIKE1 -> LOCKED    on_compaction_done: a second consecutive strike;
//                           lock_until = now + anti_thrash_lock_seconds
//   A3 STRIKE1 -> OPEN      on_compaction_done: an effective compaction
//   A4 LOCKED  -> PROBE     expire_timers (also applied inside check and
//                           on_compaction_done): now >= lock_until
//   A5 PROBE   -> OPEN      on_compaction_done: the probe (an automatic
//                           compaction finishing in PROBE) was effective
//   A6 PROBE   -> LOCKED    on_compaction_done: the probe was not effective (a
//                           strike, a no-op or an aborted summary); lock re-armed
//   A7 LOCKED|PROBE -> OPEN on_compaction_done: an effective compaction by an
//                           error trigger (T6-T9), which bypasses the locks
//   A8 any -> unchanged     on_compaction_done: a manual compaction (T12-T15),
//                           effective or not, a no-op or not
//
//   Manual triggers and anti-thrash (SPEC §2, §5.2): a manual compaction bypasses
//   the lock and leaves region A exactly as it found it: it counts no strike (two
//   no-op /compress calls must not lock automatic compaction for 300 s) and
//   clears none (a user's /compress says nothing about whether automatic
//   compaction thrashes; only the probe decides that). Regions B and the counters
//   are updated by manual compactions like by any other.
//   B1 IDLE    -> COOLING   on_compaction_done: summary_failed
//   B2 COOLING -> COOLING   on_compaction_done: summary_failed again (extends)
//   B3 COOLING -> IDLE      expire_timers: now >= cooldown_until; or
//                           on_compaction_done: a compaction committed with a
//                           summary from the LLM (the summarizer answers again)
//
//   A bypassing compaction that is not effective while LOCKED or PROBE leaves
//   region A unchanged: only the probe decides whether the lock clears.
//   A summary failure without a fallback (abort_on_summary_failure) commits
//   nothing: it arms the cooldown, is no strike outside PROBE, and counts as a
//   failed probe in PROBE.
//   Counters (on_compaction_done): a committed compaction increments
//   compaction_count, extends fallback_streak when it used the fallback summary
//   (else resets it to 0) and clears last_prompt_tokens (the API usage described
//   the transcript before the compaction).
//
// ## How the session uses it
//
//   attempts.new_turn();                          // each turn
//   d = evaluate_triggers(...)  (policies/trigger_eval, calls check)
//   attempts.begin();
//   refused by a lock  -> attempts.refund_locked()
//   ran                -> on_compaction_done(state, outcome, now, params);
//                         persist state; is_effective(outcome) ?
//                         attempts.record_productive() : attempts.record_unproductive()
//   attempts.exhausted(context_fits) -> report compaction_exhausted
//
// ## Invariants (checked by `first_violated_invariant`, asserted after every
// ## transition, restored by `repair`, pinned by tests/failure_protection_test.cpp)
//
//   1. 0 <= anti_thrash_strikes <= strikes_to_lock (2).
//   2. lock_until_ms != 0  implies  strikes == 2 and !probe_pending.
//   3. probe_pending       implies  strikes == 2 and lock_until_ms == 0.
//   4. strikes == 2        implies  lock_until_ms != 0 or probe_pending.
//   5. cooldown_until_ms == 0  if and only if  cooldown_reason is empty.
//   6. 0 <= fallback_streak <= compaction_count, last_prompt_tokens >= 0,
//      lock_until_ms >= 0, cooldown_until_ms >= 0.
//
// ## The death spiral (SPEC §5.4) and T3 during a cooldown
//
// With the summarizer down every compaction fails its summary call and arms the
// cooldown, which would block T3 (the message cap) for 600 s while the session
// keeps growing. Decision: during a cooldown T3 is allowed but fallback-only —
// the session must not call the summarizer and inserts the local fallback
// summary instead. So the live context stays bounded during any outage and the
// failing summarizer is not hammered. T3 still respects the anti-thrash lock.
// With abort_on_summary_failure: true there is no fallback summary, so T3 is
// refused during a cooldown like every other automatic trigger; so it is during
// the cooldown of an auth/quota abort (cooldown_reason starting with
// "summarizer_auth_failed", policies/summary_failure.hpp), whatever that flag.
//
// ## Attempts (SPEC §5.3)
//
// `turn_attempts` counts consecutive unproductive compaction attempts in one
// turn; a refusal by a lock refunds its attempt; when max_attempts are spent and
// the context still does not fit the turn is exhausted and the session reports
// compaction_exhausted.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "messages/transcript.hpp"
#include "policies/compression_params.hpp"
#include "messages/trigger.hpp"

namespace mneme {

// Two consecutive strikes lock automatic compaction (SPEC §5.2).
inline constexpr int32_t strikes_to_lock = 2;

// Where region A stands at a given time (derived; LOCKED becomes PROBE when the
// lock time passes even before expire_timers has rewritten the fields).
enum class anti_thrash_phase : uint8_t { open, strike_one, locked, probe };

std::string_view to_string(anti_thrash_phase p);
std::ostream& operator<<(std::ostream& os, anti_thrash_phase p);

anti_thrash_phase phase_at(const trigger_state& s, time_ms now);
bool in_cooldown(const trigger_state& s, time_ms now);

// Applies the time-driven transitions A4 and B3 (lock expired -> PROBE, cooldown
// expired -> IDLE). Idempotent. Persist the state when it returns true.
bool expire_timers(trigger_state& s, time_ms now);

// The verdict on one compaction request.
enum class lock_verdict : uint8_t {
  allowed,             // run it (maybe as the probe, maybe fallback-only)
  locked_cooldown,     // refused: a summary call failed recently
  locked_anti_thrash,  // refused: anti-thrash lock armed
};

std::string_view to_string(lock_verdict v);
std::ostream& operator<<(std::ostream& os, lock_verdict v);

struct lock_decision {
  lock_verdict verdict = lock_verdict::allowed;
  bool probe = false;          // allowed as the one probe after an expired lock
  bool fallback_only = false;  // allowed, but do not call the summarizer (T3 in cooldown)
  time_ms locked_until_ms = 0; // when refused: when automatic compaction may run again

  bool allowed() const { return verdict == lock_verdict::allowed; }
  friend bool operator==(const lock_decision& a, const lock_decision& b) {
    return a.verdict == b.verdict && a.probe == b.probe && a.fallback_only == b.fallback_only
           && a.locked_until_ms == b.locked_until_ms;
  }
};

std::ostream& operator<<(std::ostream& os, const lock_decision& d);

// May a compaction started by `by` run now? Bypassing triggers (T6-T9,
// T12-T15) are always allowed and never the probe.
// REQUIRES: by != trigger::none.
lock_decision check(const trigger_state& s, trigger by, time_ms now,
                    const compression_params& params);

// What a finished (or abandoned) compaction reports back.
struct compaction_outcome {
  trigger by = trigger::none;   // what started it; decides whether it was the probe
  int64_t tokens_before = 0;    // live context tokens before
  int64_t tokens_after = 0;     // live context tokens after (== before if nothing changed)
  bool nothing_to_compact = false; // the middle was empty: a no-op, no summary call made
  bool summary_failed = false;  // the summary call failed (timeout, 5xx, empty answer, ...)
  bool used_fallback = false;   // the local fallback summary was used (committed unless grew)
  std::string failure_reason;   // why the summary failed; becomes the cooldown reason
  // The summary failed with auth/quota and was aborted without a fallback
  // (policies/summary_failure.hpp): implies summary_failed and !used_fallback.
  // A distinct outcome, so a caller that must make room (the window guard) can
  // tell it from abort_on_summary_failure and override it with the fallback.
  bool auth_failed = false;
  // The size guard (SPEC §5.6, docs/compaction-guards.md): the result would have held at
  // least as many tokens as the input, so nothing was committed (the rows stay live).
  // Counts as a strike like a no-op.
  bool grew = false;

  // A committed compaction changed the transcript: not a no-op, not a failed summary
  // without fallback (abort_on_summary_failure), not refused by the size guard.
  bool committed() const {
    return !nothing_to_compact && !grew && !(summary_failed && !used_fallback);
  }
};

std::ostream& operator<<(std::ostream& os, const compaction_outcome& o);

// Why an outcome was rejected (the state is then left untouched).
enum class outcome_error : uint8_t {
  none,
  no_trigger,                 // by == trigger::none
  negative_tokens,            // tokens_before or tokens_after < 0
  no_op_with_summary,         // nothing_to_compact together with a summary failure or fallback
  no_op_changed_tokens,       // nothing_to_compact but tokens_after != tokens_before
  grew_but_shrank,            // grew together with nothing_to_compact or tokens_after < before
};

std::string_view to_string(outcome_error e);
std::ostream& operator<<(std::ostream& os, outcome_error e);

outcome_error validate(const compaction_outcome& o);

// Effective = committed and saved at least anti_thrash_min_savings of
// tokens_before (exactly 10% is effective; SPEC: "< 10% is a strike").
bool is_effective(const compaction_outcome& o, const compression_params& params);

// Applies transitions A1-A3, A5-A7, B1-B3 and the counters: compaction_count and
// fallback_streak follow committed compactions; last_prompt_tokens is cleared by
// a committed compaction (the API usage described the old transcript).
// Returns outcome_error::none, or the reason the outcome was rejected.
outcome_error on_compaction_done(trigger_state& s, const compaction_outcome& o, time_ms now,
                                 const compression_params& params);

// 0 when every invariant above holds, else the number of the first broken one.
int first_violated_invariant(const trigger_state& s);

// Brings a state read from storage back inside the invariants, keeping every
// lock it can (a damaged row never unlocks): strikes clamp to 0..2; two strikes
// without a lock become PROBE; a lock forces two strikes and drops the probe; a
// probe without two strikes gets them; a cooldown without a reason gets
// "unknown", a reason without a cooldown is dropped; negative numbers become 0
// and fallback_streak is capped at compaction_count. Returns the number of the
// first invariant that was broken (0 = the state was sound and is unchanged).
// on_compaction_done applies it first, so a damaged row never crashes anything.
int repair(trigger_state& s);

std::ostream& operator<<(std::ostream& os, const trigger_state& s);

// The per-turn attempt budget (SPEC §5.3). One value per turn, owned by the
// session actor. Each attempt is opened with begin() and closed by exactly one
// of refund_locked / record_productive / record_unproductive.
//
//   Invariants: 0 <= used() <= max_attempts(); at most one attempt in flight.
class turn_attempts {
public:
  // REQUIRES: max_attempts >= 1 (values below are treated as 1).
  explicit turn_attempts(int max_attempts);

  bool can_attempt() const { return !in_flight_ && used_ < max_; }
  // Opens an attempt; false (and nothing changes) when !can_attempt().
  bool begin();
  // REQUIRES (for the three below): in_flight().
  // The compaction was refused by a lock: the attempt is given back.
  void refund_locked();
  // The compaction was effective: consecutive unproductive attempts restart at 0.
  void record_productive();
  // The compaction failed or was not effective: the attempt stays spent.
  void record_unproductive();

  bool spent() const { return used_ >= max_; }
  // The session reports compaction_exhausted when this is true.
  bool exhausted(bool context_fits) const { return spent() && !context_fits; }
  // A new turn starts with the full budget.
  void new_turn();

  int used() const { return used_; }
  int max_attempts() const { return max_; }
  bool in_flight() const { return in_flight_; }

private:
  int max_;
  int used_ = 0;
  bool in_flight_ = false;
};

std::ostream& operator<<(std::ostream& os, const turn_attempts& a);

} // namespace mneme
