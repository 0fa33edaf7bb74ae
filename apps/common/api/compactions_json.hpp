// The JSON of a session's compactions (docs/api.md, GET /v1/sessions/{key}/compactions),
// shared by that route and `mneme compactions` reading a file, so both print the same
// document. Pure functions; safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "apps/common/api/json_codec.hpp"
#include "messages/storage_types.hpp"
#include "messages/transcript.hpp"

namespace mneme::api {

// One compaction log row (store/compaction_log.hpp): its fields, "log_id" for its id,
// and "retention" = identifiers_kept / identifiers_in (null when the middle had none).
json to_json(const compaction_log_entry& e);

// {"session_id", "compactions": [...], "attempts": [...]}: every compaction summary of
// `rows` (is_compaction_summary, any state, id order) as its row says it (id, the range
// it replaced, token_estimate, created_at_ms, state), "logged" and, when `log` has its
// committed row, that row's fields too; "attempts" is every row of `log`, oldest first.
json compactions_to_json(const std::string& session_id, const std::vector<message>& rows,
                         const std::vector<compaction_log_entry>& log);

} // namespace mneme::api
