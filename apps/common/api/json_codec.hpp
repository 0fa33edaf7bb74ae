// The JSON form of mneme's values, shared by the daemon's HTTP API (mneme serve), the
// command line's --json output and the soak runner's HTTP driver, so a value looks the
// same wherever a user meets it. Encoders only produce valid UTF-8 (invalid bytes in
// stored text become U+FFFD when dumped with dump_json). Decoders of request bodies
// live with the daemon. Pure functions; safe from any thread.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "messages/recall_types.hpp"
#include "messages/session_messages.hpp"
#include "messages/storage_types.hpp"
#include "messages/transcript.hpp"

namespace mneme::api {

using json = nlohmann::json;

// {"id":..,"session_id":..,"role":"user","content":..,"tool_call_id":..,"tool_calls":[..],
//  "tool_name":..,"timestamp_ms":..,"token_estimate":..,"active":..,"compacted":..,
//  "is_summary":..,"replaced_first_id":..,"replaced_last_id":..,"state":"live"}
json to_json(const message& m);
json to_json(const std::vector<message>& rows);
json to_json(const trigger_state& t);
json to_json(const session_record& s);
json to_json(const session_stats& s);
json to_json(const checkpoint_record& c);
json to_json(const compaction_report& r);
// {"session_id","answer","notice","compactions":[..],"live_messages","live_tokens",
//  "prompt_tokens","finish_reason":"stop|tool_calls|length|...","tool_calls":[{"id","name",
//  "arguments"}]}
json to_json(const turn_reply& r);
json to_json(const session_snapshot& s); // compactions_by_trigger as {"T1": n, ...}
json to_json(const recall_hit& h);
json to_json(const recall_result& r);
json to_json(const supervisor_stats& s);
// {"id","user_id","key","value","source_session","created_at_ms","updated_at_ms",
//  "active","removed_at_ms","replaced_by","state":"active|replaced|removed"}
json to_json(const fact_record& f);
json to_json(const std::vector<fact_record>& facts); // an array

// {"error":{"code":"not_found","message":"..."}}
json error_json(const std::string& code, const std::string& message);

// Serializes with invalid UTF-8 replaced by U+FFFD (never throws on stored text).
std::string dump_json(const json& j, int indent = -1);

} // namespace mneme::api
