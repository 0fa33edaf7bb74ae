// The transcript vocabulary of mneme: roles, messages, sessions and the persisted
// trigger state (SPEC §1). Plain values, standard library only, so that policies/,
// store/ and actors/ share one definition. Safe to use from any thread; no shared state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mneme {

// Wall-clock time as milliseconds since the Unix epoch. Policies never read the
// clock: callers pass `now` in this unit.
using time_ms = int64_t;

enum class msg_role : uint8_t { system, user, assistant, tool };

inline std::string_view to_string(msg_role r) {
  switch (r) {
    case msg_role::system: return "system";
    case msg_role::user: return "user";
    case msg_role::assistant: return "assistant";
    case msg_role::tool: return "tool";
  }
  return "unknown";
}

inline std::optional<msg_role> parse_role(std::string_view s) {
  if (s == "system") return msg_role::system;
  if (s == "user") return msg_role::user;
  if (s == "assistant") return msg_role::assistant;
  if (s == "tool") return msg_role::tool;
  return std::nullopt;
}

// One call an assistant message asks for; answered by a tool row whose
// tool_call_id equals `id`.
struct tool_call {
  std::string id;
  std::string name;
  std::string arguments; // JSON text as the model produced it
  friend bool operator==(const tool_call& a, const tool_call& b) {
    return a.id == b.id && a.name == b.name && a.arguments == b.arguments;
  }
};

// Where a row stands (SPEC §1 table). Derived from the two flags.
enum class row_state : uint8_t { live, archived, rolled_back };

inline std::string_view to_string(row_state s) {
  switch (s) {
    case row_state::live: return "live";
    case row_state::archived: return "archived";
    case row_state::rolled_back: return "rolled_back";
  }
  return "unknown";
}

// One transcript row. Invariants:
//   1. active && compacted never both hold.
//   2. replaced_first_id/replaced_last_id are non-zero only when is_summary.
//   3. id == 0 means "not stored yet"; the store assigns ids in append order.
struct message {
  int64_t id = 0;
  std::string session_id;
  msg_role role = msg_role::user;
  std::string content;
  std::string tool_call_id;            // set on role == tool
  std::vector<tool_call> tool_calls;   // set on role == assistant
  std::string tool_name;               // set on role == tool
  time_ms timestamp_ms = 0;
  int64_t token_estimate = 0;
  bool active = true;
  bool compacted = false;
  bool is_summary = false;
  int64_t replaced_first_id = 0;       // provenance of a summary: the id range it replaced
  int64_t replaced_last_id = 0;
  // The request's Idempotency-Key (docs/api.md) on the row it wrote (an append's row,
  // a turn's user row); "" otherwise. Written with the row, never read back into a
  // transcript: a store lookup (message_store::idempotent_rows) finds it.
  std::string idempotency_key;

  row_state state() const {
    if (active) return row_state::live;
    return compacted ? row_state::archived : row_state::rolled_back;
  }
  bool has_tool_calls() const { return !tool_calls.empty(); }
};

// A "real" user message: typed by the user, not a summary (SPEC §3 tail rule).
inline bool is_real_user_message(const message& m) {
  return m.role == msg_role::user && !m.is_summary;
}

// A summary of turns written by a compaction (SPEC §3) or a micro-compaction fold.
// A tool row flagged is_summary is something else: the replacement of one tool
// output (pruning, eviction, skill unload) that keeps its call pairing; it is a
// tool result, not a summary of turns.
inline bool is_compaction_summary(const message& m) {
  return m.is_summary && m.role != msg_role::tool;
}

// The persisted trigger state of a session (SPEC §1, §5). Written through the
// storage actor after every change so a restarted process honours it.
// Times are 0 when unset.
struct trigger_state {
  time_ms cooldown_until_ms = 0;
  std::string cooldown_reason;
  int32_t anti_thrash_strikes = 0;
  time_ms lock_until_ms = 0;
  bool probe_pending = false;      // the lock expired; one probe compaction may run
  int32_t fallback_streak = 0;     // consecutive compactions that used the local fallback
  int64_t compaction_count = 0;
  int64_t last_prompt_tokens = 0;  // last API-reported usage.prompt_tokens, 0 if unknown
  friend bool operator==(const trigger_state& a, const trigger_state& b) {
    return a.cooldown_until_ms == b.cooldown_until_ms && a.cooldown_reason == b.cooldown_reason
           && a.anti_thrash_strikes == b.anti_thrash_strikes
           && a.lock_until_ms == b.lock_until_ms && a.probe_pending == b.probe_pending
           && a.fallback_streak == b.fallback_streak
           && a.compaction_count == b.compaction_count
           && a.last_prompt_tokens == b.last_prompt_tokens;
  }
};

// A session row (SPEC §1). A reset starts a new id under the same key with
// parent_id pointing at the ended session.
struct session_record {
  std::string id;
  std::string user_id;       // tenant: searches see only their own user's sessions
  std::string session_key;   // channel-side conversation key
  std::string parent_id;     // empty for the first session under a key
  std::string model;
  time_ms started_at_ms = 0;
  time_ms ended_at_ms = 0;   // 0 while the session is open
  std::string end_reason;    // e.g. "compaction_exhausted", "child_session", "rollover"
  trigger_state triggers;
};

} // namespace mneme
