// The triggers that can start a compaction (SPEC §2 table). Shared by trigger
// evaluation, failure protection, the session actor and metrics. Standard library only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>

#include "messages/llm_error_kind.hpp"

namespace mneme {

enum class trigger : uint8_t {
  none,
  t1_pre_call,              // estimated request tokens >= threshold
  t2_post_call,             // API-reported prompt tokens >= threshold
  t3_hygiene_message_cap,   // message count >= hygiene_hard_message_limit
  t4_hygiene_tokens,        // local estimate >= 85% of the window
  t5_idle,                  // idle >= idle_compact_after_seconds and tokens >= 64,000
  t6_payload_too_large,     // HTTP 413
  t7_long_context_rate_limit, // 429 long context; window capped at 200,000
  t8_output_too_large,      // 400 output does not fit
  t9_context_overflow,      // 400/5xx overflow phrases
  t10_preflight,            // before a turn, loop to target
  t11_engine_request,       // extension/plugin API
  t12_manual_session,       // CLI whole-session compact
  t13_manual_local,         // CLI local compact around a message
  t14_channel_command,      // /compress [focus]
  t15_acp_command,          // ACP adapter command
  count_                    // not a trigger: how many there are (new ones go above)
};

// Tables indexed by a trigger's value hold this many slots, so every trigger has one.
inline constexpr std::size_t trigger_count = static_cast<std::size_t>(trigger::count_);

inline std::string_view to_string(trigger t) {
  switch (t) {
    case trigger::none: return "none";
    case trigger::t1_pre_call: return "T1_pre_call";
    case trigger::t2_post_call: return "T2_post_call";
    case trigger::t3_hygiene_message_cap: return "T3_hygiene_message_cap";
    case trigger::t4_hygiene_tokens: return "T4_hygiene_tokens";
    case trigger::t5_idle: return "T5_idle";
    case trigger::t6_payload_too_large: return "T6_payload_too_large";
    case trigger::t7_long_context_rate_limit: return "T7_long_context_rate_limit";
    case trigger::t8_output_too_large: return "T8_output_too_large";
    case trigger::t9_context_overflow: return "T9_context_overflow";
    case trigger::t10_preflight: return "T10_preflight";
    case trigger::t11_engine_request: return "T11_engine_request";
    case trigger::t12_manual_session: return "T12_manual_session";
    case trigger::t13_manual_local: return "T13_manual_local";
    case trigger::t14_channel_command: return "T14_channel_command";
    case trigger::t15_acp_command: return "T15_acp_command";
    case trigger::count_: break;
  }
  return "unknown";
}

// Error triggers (T6-T9) and manual triggers (T12-T15) bypass cooldown and
// anti-thrash (SPEC §2 table, §5.1).
inline bool bypasses_locks(trigger t) {
  switch (t) {
    case trigger::t6_payload_too_large:
    case trigger::t7_long_context_rate_limit:
    case trigger::t8_output_too_large:
    case trigger::t9_context_overflow:
    case trigger::t12_manual_session:
    case trigger::t13_manual_local:
    case trigger::t14_channel_command:
    case trigger::t15_acp_command:
      return true;
    default:
      return false;
  }
}

inline std::ostream& operator<<(std::ostream& os, trigger t) { return os << to_string(t); }

// The error trigger an LLM failure fires (T6-T9); trigger::none for every other kind.
inline trigger error_trigger(llm_error_kind kind) {
  switch (kind) {
    case llm_error_kind::payload_too_large: return trigger::t6_payload_too_large;
    case llm_error_kind::long_context_rate_limit: return trigger::t7_long_context_rate_limit;
    case llm_error_kind::output_too_large: return trigger::t8_output_too_large;
    case llm_error_kind::context_overflow: return trigger::t9_context_overflow;
    default: return trigger::none;
  }
}

inline bool is_manual(trigger t) {
  return t == trigger::t12_manual_session || t == trigger::t13_manual_local
         || t == trigger::t14_channel_command || t == trigger::t15_acp_command;
}

} // namespace mneme
