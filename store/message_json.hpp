// The one JSON form of a stored message, shared by the HTTP API (apps/common/api/
// json_codec) and the JSONL export (jsonl_export), so the two cannot drift: id,
// session_id, role, content, tool_call_id, tool_calls [{id, name, arguments}],
// tool_name, timestamp_ms, token_estimate, the flags active / compacted / is_summary,
// replaced_first_id / replaced_last_id and the derived state. The export adds
// archived_by; jsonl_import reads the same names back. Pure; any thread.
#pragma once

#include <nlohmann/json.hpp>

#include "messages/transcript.hpp"

namespace mneme {

nlohmann::json message_json(const message& m);

} // namespace mneme
