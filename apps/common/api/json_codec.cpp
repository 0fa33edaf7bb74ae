// The JSON form of mneme's values; see json_codec.hpp.
#include "apps/common/api/json_codec.hpp"

#include "policies/key_namespace.hpp"
#include "store/message_json.hpp"

namespace mneme::api {

json to_json(const message& m) { return message_json(m); }

json to_json(const std::vector<message>& rows) {
  auto out = json::array();
  for (auto& m : rows)
    out.push_back(to_json(m));
  return out;
}

json to_json(const trigger_state& t) {
  return {{"cooldown_until_ms", t.cooldown_until_ms},
          {"cooldown_reason", t.cooldown_reason},
          {"anti_thrash_strikes", t.anti_thrash_strikes},
          {"lock_until_ms", t.lock_until_ms},
          {"probe_pending", t.probe_pending},
          {"fallback_streak", t.fallback_streak},
          {"compaction_count", t.compaction_count},
          {"last_prompt_tokens", t.last_prompt_tokens}};
}

json to_json(const session_record& s) {
  return {{"id", s.id},
          {"user_id", s.user_id},
          {"session_key", visible_key(s.session_key)}, // the key its user names
          {"parent_id", s.parent_id},
          {"model", s.model},
          {"started_at_ms", s.started_at_ms},
          {"ended_at_ms", s.ended_at_ms},
          {"end_reason", s.end_reason},
          {"triggers", to_json(s.triggers)}};
}

json to_json(const session_stats& s) {
  return {{"session_id", s.session_id},
          {"live_rows", s.live_rows},
          {"archived_rows", s.archived_rows},
          {"rolled_back_rows", s.rolled_back_rows},
          {"summary_rows", s.summary_rows},
          {"live_token_estimate", s.live_token_estimate},
          {"content_bytes", s.content_bytes},
          {"first_id", s.first_id},
          {"last_id", s.last_id}};
}

json to_json(const checkpoint_record& c) {
  return {{"session_id", c.session_id},
          {"name", c.name},
          {"last_message_id", c.last_message_id},
          {"created_at_ms", c.created_at_ms}};
}

json to_json(const fact_record& f) {
  const char* state = f.active ? "active" : f.removed_at_ms > 0 ? "removed" : "replaced";
  return {{"id", f.id},
          {"user_id", f.user_id},
          {"key", f.key},
          {"value", f.value},
          {"source_session", f.source_session},
          {"created_at_ms", f.created_at_ms},
          {"updated_at_ms", f.updated_at_ms},
          {"active", f.active},
          {"removed_at_ms", f.removed_at_ms},
          {"replaced_by", f.replaced_by},
          {"state", state}};
}

json to_json(const std::vector<fact_record>& facts) {
  auto out = json::array();
  for (const auto& f : facts)
    out.push_back(to_json(f));
  return out;
}

json to_json(const compaction_report& r) {
  return {{"trigger", std::string{to_string(r.by)}},
          {"committed", r.committed},
          {"nothing_to_compact", r.nothing_to_compact},
          {"summary_failed", r.summary_failed},
          {"used_fallback", r.used_fallback},
          {"summary_auth_failed", r.summary_auth_failed},
          {"effective", r.effective},
          {"tokens_before", r.tokens_before},
          {"tokens_after", r.tokens_after},
          {"archived_rows", r.archived_rows},
          {"summary_id", r.summary_id},
          {"messages_after", r.messages_after},
          {"overhead_us", r.overhead_us},
          {"grew", r.grew},
          {"window_guard", r.window_guard}};
}

json to_json(const turn_reply& r) {
  auto calls = json::array();
  for (const auto& c : r.tool_calls)
    calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
  auto builtin = json::array();
  for (const auto& b : r.builtin_calls)
    builtin.push_back({{"id", b.id}, {"name", b.name}, {"arguments", b.arguments},
                       {"result_bytes", b.result_bytes}});
  auto compactions = json::array();
  for (auto& c : r.compactions)
    compactions.push_back(to_json(c));
  json out = {{"session_id", r.session_id},
          {"answer", r.answer},
          {"notice", r.notice},
          {"compactions", std::move(compactions)},
          {"live_messages", r.live_messages},
          {"live_tokens", r.live_tokens},
          {"prompt_tokens", r.prompt_tokens},
          {"finish_reason", r.finish_reason},
          {"tool_calls", calls},
          {"builtin_calls", std::move(builtin)}};
  if (!r.stop_sequence.empty()) // the model stopped on one of the request's `stop`
    out["stop_sequence"] = r.stop_sequence;
  return out;
}

json to_json(const session_snapshot& s) {
  auto by_trigger = json::object();
  for (size_t i = 0; i < s.compactions_by_trigger.size(); ++i)
    if (s.compactions_by_trigger[i] > 0)
      by_trigger[std::string{to_string(static_cast<trigger>(i))}] = s.compactions_by_trigger[i];
  return {{"session", to_json(s.record)},
          {"live_messages", s.live_messages},
          {"live_tokens", s.live_tokens},
          {"threshold_tokens", s.threshold_tokens},
          {"context_window", s.context_window},
          {"compaction_in_flight", s.compaction_in_flight},
          {"pending_turns", s.pending_turns},
          {"attempts", {{"used", s.attempts_used}, {"max", s.max_attempts}}},
          {"compactions_by_trigger", std::move(by_trigger)}};
}

json to_json(const recall_hit& h) {
  return {{"session_id", h.hit.session_id},
          {"conversation_id", h.conversation_id},
          {"kind", std::string{to_string(h.kind)}},
          {"route", h.route},
          {"score", h.score},
          {"snippet", h.snippet},
          {"hit", to_json(h.hit)},
          {"window", to_json(h.window)},
          {"first", to_json(h.first)},
          {"last", to_json(h.last)}};
}

json to_json(const recall_result& r) {
  auto hits = json::array();
  for (auto& h : r.hits)
    hits.push_back(to_json(h));
  return {{"hits", std::move(hits)},
          {"routes_tried", r.routes_tried},
          {"query_truncated", r.query_truncated},
          {"limit_clamped", r.limit_clamped},
          {"mode", std::string{to_string(r.mode)}},
          {"vector_skipped", std::string{to_string(r.vector_skipped)}}};
}

json to_json(const supervisor_stats& s) {
  return {{"hosted", s.hosted},
          {"spawned", s.spawned},
          {"restarts", s.restarts},
          {"exhausted", s.exhausted}};
}

json error_json(const std::string& code, const std::string& message) {
  return {{"error", {{"code", code}, {"message", message}}}};
}

std::string dump_json(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

} // namespace mneme::api
