// The gateway's hygiene failure cooldown; see hygiene_gate.hpp.
#include "policies/hygiene_gate.hpp"

namespace mneme {

hygiene_result hygiene_result_of(bool committed, bool used_fallback, bool summary_failed) {
  if (summary_failed)
    return hygiene_result::failed;
  return committed && !used_fallback ? hygiene_result::summarized
                                     : hygiene_result::no_summary_call;
}

bool in_hygiene_cooldown(time_ms cooldown_until_ms, time_ms now) {
  return cooldown_until_ms > 0 && now < cooldown_until_ms;
}

hygiene_action gate_hygiene(trigger fired, time_ms cooldown_until_ms, time_ms now,
                            const compression_params& params) {
  bool hygiene = fired == trigger::t3_hygiene_message_cap || fired == trigger::t4_hygiene_tokens;
  if (!hygiene || !in_hygiene_cooldown(cooldown_until_ms, now))
    return hygiene_action::compact;
  if (fired == trigger::t3_hygiene_message_cap && !params.abort_on_summary_failure)
    return hygiene_action::compact_fallback_only;
  return hygiene_action::skip;
}

time_ms hygiene_cooldown_after(hygiene_result result, time_ms cooldown_until_ms, time_ms now,
                               const compression_params& params) {
  switch (result) {
    case hygiene_result::failed:
      return params.hygiene_failure_cooldown_seconds > 0
               ? now + params.hygiene_failure_cooldown_seconds * 1000
               : 0;
    case hygiene_result::summarized:
      return 0;
    case hygiene_result::no_summary_call:
    case hygiene_result::refused:
      return cooldown_until_ms;
  }
  return cooldown_until_ms;
}

std::string_view to_string(hygiene_action a) {
  switch (a) {
    case hygiene_action::compact: return "compact";
    case hygiene_action::compact_fallback_only: return "compact_fallback_only";
    case hygiene_action::skip: return "skip";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, hygiene_action a) { return os << to_string(a); }

std::string_view to_string(hygiene_result r) {
  switch (r) {
    case hygiene_result::summarized: return "summarized";
    case hygiene_result::no_summary_call: return "no_summary_call";
    case hygiene_result::failed: return "failed";
    case hygiene_result::refused: return "refused";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, hygiene_result r) { return os << to_string(r); }

} // namespace mneme
