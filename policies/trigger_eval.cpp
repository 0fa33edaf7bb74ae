// Trigger evaluation; see trigger_eval.hpp for the rules per phase.
#include "policies/trigger_eval.hpp"

#include <algorithm>
#include <ostream>

namespace mneme {

namespace {

trigger_input_error validate(const trigger_inputs& in, const trigger_limits& l) {
  if (in.estimated_tokens < 0 || in.api_prompt_tokens < 0)
    return trigger_input_error::negative_tokens;
  if (in.message_count < 0) return trigger_input_error::negative_message_count;
  if (in.idle_seconds < 0) return trigger_input_error::negative_idle_seconds;
  if (in.preflight_passes_done < 0) return trigger_input_error::negative_preflight_passes;
  switch (in.phase) {
    case eval_phase::post_call:
      if (in.last_error == llm_error_kind::long_context_rate_limit) {
        if (l.context_window <= 0) return trigger_input_error::non_positive_context_window;
        if (l.long_context_cap_tokens <= 0)
          return trigger_input_error::non_positive_long_context_cap;
      }
      if (in.last_error == llm_error_kind::none && l.threshold_tokens <= 0)
        return trigger_input_error::non_positive_threshold;
      break;
    case eval_phase::pre_call:
    case eval_phase::preflight:
      if (l.threshold_tokens <= 0) return trigger_input_error::non_positive_threshold;
      break;
    case eval_phase::hygiene_check:
      if (l.hygiene_token_limit <= 0) return trigger_input_error::non_positive_hygiene_limit;
      break;
    case eval_phase::idle_tick:
      if (l.idle_floor_tokens <= 0) return trigger_input_error::non_positive_idle_floor;
      break;
    case eval_phase::engine_request:
      break;
    case eval_phase::manual_command:
      if (!is_manual(in.manual)) return trigger_input_error::manual_kind_not_manual;
      break;
  }
  return trigger_input_error::none;
}

// The trigger whose rule matches in this phase, or trigger::none.
trigger matching_rule(const trigger_inputs& in, const trigger_limits& l,
                      const compression_params& params, int64_t tokens) {
  switch (in.phase) {
    case eval_phase::pre_call:
      return tokens >= l.threshold_tokens ? trigger::t1_pre_call : trigger::none;
    case eval_phase::post_call:
      if (in.last_error != llm_error_kind::none) return error_trigger(in.last_error);
      return in.api_prompt_tokens > 0 && in.api_prompt_tokens >= l.threshold_tokens
               ? trigger::t2_post_call
               : trigger::none;
    case eval_phase::hygiene_check:
      if (params.hygiene_hard_message_limit > 0
          && in.message_count >= params.hygiene_hard_message_limit)
        return trigger::t3_hygiene_message_cap;
      return tokens >= l.hygiene_token_limit ? trigger::t4_hygiene_tokens : trigger::none;
    case eval_phase::idle_tick:
      return params.idle_compact_after_seconds > 0
                 && in.idle_seconds >= params.idle_compact_after_seconds
                 && tokens >= l.idle_floor_tokens
               ? trigger::t5_idle
               : trigger::none;
    case eval_phase::preflight:
      return tokens >= l.threshold_tokens
                 || (l.compressible_window > 0 && in.message_count >= l.compressible_window)
               ? trigger::t10_preflight
               : trigger::none;
    case eval_phase::engine_request:
      return trigger::t11_engine_request;
    case eval_phase::manual_command:
      return in.manual;
  }
  return trigger::none;
}

} // namespace

trigger_decision evaluate_triggers(const trigger_inputs& in, const trigger_limits& limits,
                                   const compression_params& params, const trigger_state& state,
                                   time_ms now) {
  trigger_decision d;
  d.error = validate(in, limits);
  if (d.error != trigger_input_error::none) {
    d.skip = trigger_skip::bad_input;
    return d;
  }
  d.tokens_considered = in.api_prompt_tokens > 0 ? in.api_prompt_tokens : in.estimated_tokens;
  if (in.phase == eval_phase::post_call
      && in.last_error == llm_error_kind::long_context_rate_limit)
    d.capped_context_window = std::min(limits.context_window, limits.long_context_cap_tokens);

  d.fired = matching_rule(in, limits, params, d.tokens_considered);
  if (d.fired == trigger::none) {
    d.skip = trigger_skip::no_rule_matched;
    return d;
  }
  d.bypasses_locks = bypasses_locks(d.fired);
  if (!params.enabled && !is_manual(d.fired)) {
    d.skip = trigger_skip::master_switch_off;
    return d;
  }
  if (d.fired == trigger::t10_preflight
      && in.preflight_passes_done >= std::max(params.max_attempts, 1)) {
    d.skip = trigger_skip::preflight_passes_spent;
    return d;
  }
  d.lock = check(state, d.fired, now, params);
  if (!d.lock.allowed()) {
    d.skip = trigger_skip::locked;
    return d;
  }
  d.compact = true;
  d.skip = trigger_skip::none;
  return d;
}

std::string_view to_string(eval_phase p) {
  switch (p) {
    case eval_phase::pre_call: return "pre_call";
    case eval_phase::post_call: return "post_call";
    case eval_phase::hygiene_check: return "hygiene_check";
    case eval_phase::idle_tick: return "idle_tick";
    case eval_phase::preflight: return "preflight";
    case eval_phase::engine_request: return "engine_request";
    case eval_phase::manual_command: return "manual_command";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, eval_phase p) { return os << to_string(p); }

std::string_view to_string(trigger_skip s) {
  switch (s) {
    case trigger_skip::none: return "none";
    case trigger_skip::no_rule_matched: return "no_rule_matched";
    case trigger_skip::master_switch_off: return "master_switch_off";
    case trigger_skip::locked: return "locked";
    case trigger_skip::preflight_passes_spent: return "preflight_passes_spent";
    case trigger_skip::bad_input: return "bad_input";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, trigger_skip s) { return os << to_string(s); }

std::string_view to_string(trigger_input_error e) {
  switch (e) {
    case trigger_input_error::none: return "none";
    case trigger_input_error::negative_tokens:
      return "estimated_tokens or api_prompt_tokens is negative";
    case trigger_input_error::negative_message_count: return "message_count is negative";
    case trigger_input_error::negative_idle_seconds: return "idle_seconds is negative";
    case trigger_input_error::negative_preflight_passes:
      return "preflight_passes_done is negative";
    case trigger_input_error::non_positive_threshold: return "threshold_tokens is not positive";
    case trigger_input_error::non_positive_hygiene_limit:
      return "hygiene_token_limit is not positive";
    case trigger_input_error::non_positive_idle_floor: return "idle_floor_tokens is not positive";
    case trigger_input_error::non_positive_context_window:
      return "context_window is not positive";
    case trigger_input_error::non_positive_long_context_cap:
      return "long_context_cap_tokens is not positive";
    case trigger_input_error::manual_kind_not_manual:
      return "manual_command needs one of the manual triggers T12-T15";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, trigger_input_error e) { return os << to_string(e); }

std::ostream& operator<<(std::ostream& os, const trigger_inputs& in) {
  os << "{phase=" << in.phase << " estimated_tokens=" << in.estimated_tokens
     << " api_prompt_tokens=" << in.api_prompt_tokens << " message_count=" << in.message_count
     << " idle_seconds=" << in.idle_seconds << " last_error=" << to_string(in.last_error)
     << " manual=" << to_string(in.manual)
     << " preflight_passes_done=" << in.preflight_passes_done << '}';
  return os;
}

std::ostream& operator<<(std::ostream& os, const trigger_limits& l) {
  os << "{threshold_tokens=" << l.threshold_tokens
     << " hygiene_token_limit=" << l.hygiene_token_limit
     << " idle_floor_tokens=" << l.idle_floor_tokens << " context_window=" << l.context_window
     << " long_context_cap_tokens=" << l.long_context_cap_tokens
     << " compressible_window=" << l.compressible_window << '}';
  return os;
}

std::ostream& operator<<(std::ostream& os, const trigger_decision& d) {
  os << "{compact=" << d.compact << " fired=" << to_string(d.fired) << " skip=" << d.skip
     << " error=" << d.error << " bypasses_locks=" << d.bypasses_locks << " lock=" << d.lock
     << " tokens_considered=" << d.tokens_considered << " capped_context_window=";
  if (d.capped_context_window)
    os << *d.capped_context_window;
  else
    os << "none";
  return os << '}';
}

bool idle_compaction_pending(const compression_params& params, int64_t idle_ms,
                             int64_t live_tokens, int64_t idle_floor_tokens) {
  auto after_s = params.idle_compact_after_seconds;
  if (after_s <= 0 || live_tokens < idle_floor_tokens)
    return false;
  return idle_ms < after_s * 1000;
}

} // namespace mneme
