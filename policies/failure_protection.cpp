// Failure protection state machine; see failure_protection.hpp for the diagram,
// the transitions (A1-A7, B1-B3) and the numbered invariants.
#include "policies/failure_protection.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <ostream>

#include "policies/summary_failure.hpp"

namespace mneme {

namespace {

constexpr int64_t ms_per_second = 1000;

bool lock_armed(const trigger_state& s) { return s.lock_until_ms != 0; }

// A2/A6: arm (or re-arm) the anti-thrash lock. A lock of zero seconds expires at
// once, so the state goes straight to PROBE.
void arm_lock(trigger_state& s, time_ms now, const compression_params& params) {
  s.anti_thrash_strikes = strikes_to_lock;
  const time_ms until = now + std::max<int64_t>(params.anti_thrash_lock_seconds, 0) * ms_per_second;
  if (until > now) {
    s.lock_until_ms = until;
    s.probe_pending = false;
  } else {
    s.lock_until_ms = 0;
    s.probe_pending = true;
  }
}

// A3/A5/A7.
void clear_anti_thrash(trigger_state& s) {
  s.anti_thrash_strikes = 0;
  s.lock_until_ms = 0;
  s.probe_pending = false;
}

// B1/B2. A cooldown of zero seconds is no cooldown.
void arm_cooldown(trigger_state& s, const compaction_outcome& o, time_ms now,
                  const compression_params& params) {
  const time_ms until
    = now + std::max<int64_t>(params.summary_failure_cooldown_seconds, 0) * ms_per_second;
  if (until <= now || until <= s.cooldown_until_ms) return;
  s.cooldown_until_ms = until;
  s.cooldown_reason = o.failure_reason.empty() ? std::string{"summary_failed"} : o.failure_reason;
}

// B3 by success.
void clear_cooldown(trigger_state& s) {
  s.cooldown_until_ms = 0;
  s.cooldown_reason.clear();
}

} // namespace

std::string_view to_string(anti_thrash_phase p) {
  switch (p) {
    case anti_thrash_phase::open: return "open";
    case anti_thrash_phase::strike_one: return "strike_one";
    case anti_thrash_phase::locked: return "locked";
    case anti_thrash_phase::probe: return "probe";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, anti_thrash_phase p) { return os << to_string(p); }

std::string_view to_string(lock_verdict v) {
  switch (v) {
    case lock_verdict::allowed: return "allowed";
    case lock_verdict::locked_cooldown: return "locked_cooldown";
    case lock_verdict::locked_anti_thrash: return "locked_anti_thrash";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, lock_verdict v) { return os << to_string(v); }

std::ostream& operator<<(std::ostream& os, const lock_decision& d) {
  os << "{verdict=" << d.verdict << " probe=" << d.probe << " fallback_only=" << d.fallback_only
     << " locked_until_ms=" << d.locked_until_ms << '}';
  return os;
}

std::string_view to_string(outcome_error e) {
  switch (e) {
    case outcome_error::none: return "none";
    case outcome_error::no_trigger: return "outcome names no trigger";
    case outcome_error::negative_tokens: return "tokens_before or tokens_after is negative";
    case outcome_error::no_op_with_summary:
      return "a no-op compaction cannot report a summary failure or a fallback summary";
    case outcome_error::grew_but_shrank:
      return "a compaction that grew must have changed something and not shrunk it";
    case outcome_error::no_op_changed_tokens:
      return "a no-op compaction cannot change the token count";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, outcome_error e) { return os << to_string(e); }

std::ostream& operator<<(std::ostream& os, const compaction_outcome& o) {
  os << "{by=" << to_string(o.by) << " tokens_before=" << o.tokens_before
     << " tokens_after=" << o.tokens_after << " nothing_to_compact=" << o.nothing_to_compact
     << " summary_failed=" << o.summary_failed << " used_fallback=" << o.used_fallback << " grew=" << o.grew << '}';
  return os;
}

std::ostream& operator<<(std::ostream& os, const trigger_state& s) {
  os << "{cooldown_until_ms=" << s.cooldown_until_ms << " cooldown_reason=" << s.cooldown_reason
     << " strikes=" << s.anti_thrash_strikes << " lock_until_ms=" << s.lock_until_ms
     << " probe_pending=" << s.probe_pending << " fallback_streak=" << s.fallback_streak
     << " compaction_count=" << s.compaction_count
     << " last_prompt_tokens=" << s.last_prompt_tokens << '}';
  return os;
}

int first_violated_invariant(const trigger_state& s) {
  if (s.anti_thrash_strikes < 0 || s.anti_thrash_strikes > strikes_to_lock) return 1;
  const bool full = s.anti_thrash_strikes == strikes_to_lock;
  if (lock_armed(s) && (!full || s.probe_pending)) return 2;
  if (s.probe_pending && (!full || lock_armed(s))) return 3;
  if (full && !lock_armed(s) && !s.probe_pending) return 4;
  if ((s.cooldown_until_ms == 0) != s.cooldown_reason.empty()) return 5;
  if (s.fallback_streak < 0 || s.fallback_streak > s.compaction_count
      || s.compaction_count < 0 || s.last_prompt_tokens < 0 || s.lock_until_ms < 0
      || s.cooldown_until_ms < 0)
    return 6;
  return 0;
}

int repair(trigger_state& s) {
  const int broken = first_violated_invariant(s);
  if (broken == 0) return 0;
  s.anti_thrash_strikes = std::clamp(s.anti_thrash_strikes, 0, strikes_to_lock);
  s.lock_until_ms = std::max<time_ms>(s.lock_until_ms, 0);
  if (lock_armed(s)) {
    s.anti_thrash_strikes = strikes_to_lock;
    s.probe_pending = false;
  } else if (s.probe_pending || s.anti_thrash_strikes == strikes_to_lock) {
    s.anti_thrash_strikes = strikes_to_lock;
    s.probe_pending = true;
  }
  s.cooldown_until_ms = std::max<time_ms>(s.cooldown_until_ms, 0);
  if (s.cooldown_until_ms == 0)
    s.cooldown_reason.clear();
  else if (s.cooldown_reason.empty())
    s.cooldown_reason = "unknown";
  s.compaction_count = std::max<int64_t>(s.compaction_count, 0);
  s.fallback_streak
    = static_cast<int32_t>(std::clamp<int64_t>(s.fallback_streak, 0, s.compaction_count));
  s.last_prompt_tokens = std::max<int64_t>(s.last_prompt_tokens, 0);
  assert(first_violated_invariant(s) == 0);
  return broken;
}

bool expire_timers(trigger_state& s, time_ms now) {
  bool changed = false;
  if (lock_armed(s) && now >= s.lock_until_ms) { // A4
    s.lock_until_ms = 0;
    s.probe_pending = true;
    changed = true;
  }
  if (s.cooldown_until_ms != 0 && now >= s.cooldown_until_ms) { // B3 by time
    clear_cooldown(s);
    changed = true;
  }
  return changed;
}

anti_thrash_phase phase_at(const trigger_state& s, time_ms now) {
  trigger_state t = s;
  repair(t);
  expire_timers(t, now);
  if (lock_armed(t)) return anti_thrash_phase::locked;
  if (t.probe_pending) return anti_thrash_phase::probe;
  return t.anti_thrash_strikes == 1 ? anti_thrash_phase::strike_one : anti_thrash_phase::open;
}

bool in_cooldown(const trigger_state& s, time_ms now) {
  return s.cooldown_until_ms != 0 && now < s.cooldown_until_ms;
}

lock_decision check(const trigger_state& s, trigger by, time_ms now,
                    const compression_params& params) {
  assert(by != trigger::none);
  lock_decision d;
  if (bypasses_locks(by)) return d;
  trigger_state t = s;
  repair(t);
  expire_timers(t, now);
  const bool cooling = t.cooldown_until_ms != 0;
  // The death-spiral rule: T3 keeps running through a cooldown, fallback-only —
  // except through the cooldown of an auth/quota abort, which writes no
  // fallback row (policies/summary_failure.hpp rule 1).
  const bool fallback_through_cooldown = by == trigger::t3_hygiene_message_cap
                                         && !params.abort_on_summary_failure
                                         && !is_auth_cooldown(t.cooldown_reason);
  if (lock_armed(t)) {
    d.verdict = lock_verdict::locked_anti_thrash;
    d.locked_until_ms = t.lock_until_ms;
    if (cooling && !fallback_through_cooldown && t.cooldown_until_ms > t.lock_until_ms) {
      d.verdict = lock_verdict::locked_cooldown;
      d.locked_until_ms = t.cooldown_until_ms;
    }
    return d;
  }
  if (cooling) {
    if (!fallback_through_cooldown) {
      d.verdict = lock_verdict::locked_cooldown;
      d.locked_until_ms = t.cooldown_until_ms;
      return d;
    }
    d.fallback_only = true;
  }
  d.probe = t.probe_pending;
  return d;
}

outcome_error validate(const compaction_outcome& o) {
  if (o.by == trigger::none) return outcome_error::no_trigger;
  if (o.tokens_before < 0 || o.tokens_after < 0) return outcome_error::negative_tokens;
  if (o.nothing_to_compact && (o.summary_failed || o.used_fallback))
    return outcome_error::no_op_with_summary;
  if (o.nothing_to_compact && o.tokens_after != o.tokens_before)
    return outcome_error::no_op_changed_tokens;
  if (o.grew && (o.nothing_to_compact || o.tokens_after < o.tokens_before))
    return outcome_error::grew_but_shrank;
  return outcome_error::none;
}

bool is_effective(const compaction_outcome& o, const compression_params& params) {
  if (!o.committed() || o.tokens_before <= 0) return false;
  // Compared in basis points so that exactly 10% counts as effective.
  const int64_t min_bp = std::llround(params.anti_thrash_min_savings * 10000.0);
  const int64_t saved = o.tokens_before - o.tokens_after;
  return saved * 10000 >= min_bp * o.tokens_before;
}

outcome_error on_compaction_done(trigger_state& s, const compaction_outcome& o, time_ms now,
                                 const compression_params& params) {
  if (auto err = validate(o); err != outcome_error::none) return err;
  repair(s);
  expire_timers(s, now);
  const bool committed = o.committed();
  const bool effective = is_effective(o, params);

  // Region B.
  if (o.summary_failed)
    arm_cooldown(s, o, now, params);
  else if (committed && !o.used_fallback)
    clear_cooldown(s);

  // Region A.
  const bool probe = s.probe_pending && !bypasses_locks(o.by);
  if (is_manual(o.by)) {
    // A8: a manual compaction (T12-T15) neither counts a strike nor clears one.
  } else if (effective) {
    clear_anti_thrash(s); // A3, A5, A7
  } else if (probe) {
    arm_lock(s, now, params); // A6
  } else if (lock_armed(s) || s.probe_pending) {
    // A bypassing compaction that did not help leaves the lock to the probe.
  } else if (committed || o.nothing_to_compact || o.grew) {
    ++s.anti_thrash_strikes; // A1
    if (s.anti_thrash_strikes >= strikes_to_lock) arm_lock(s, now, params); // A2
  }

  if (committed) {
    ++s.compaction_count;
    s.fallback_streak = o.used_fallback ? s.fallback_streak + 1 : 0;
    s.last_prompt_tokens = 0;
  }
  assert(first_violated_invariant(s) == 0);
  return outcome_error::none;
}

turn_attempts::turn_attempts(int max_attempts) : max_(std::max(max_attempts, 1)) {
  assert(max_attempts >= 1);
}

bool turn_attempts::begin() {
  if (!can_attempt()) return false;
  ++used_;
  in_flight_ = true;
  return true;
}

void turn_attempts::refund_locked() {
  assert(in_flight_);
  if (!in_flight_) return;
  --used_;
  in_flight_ = false;
}

void turn_attempts::record_productive() {
  assert(in_flight_);
  used_ = 0;
  in_flight_ = false;
}

void turn_attempts::record_unproductive() {
  assert(in_flight_);
  in_flight_ = false;
}

void turn_attempts::new_turn() {
  used_ = 0;
  in_flight_ = false;
}

std::ostream& operator<<(std::ostream& os, const turn_attempts& a) {
  os << "{used=" << a.used() << " max_attempts=" << a.max_attempts()
     << " in_flight=" << a.in_flight() << '}';
  return os;
}

} // namespace mneme
