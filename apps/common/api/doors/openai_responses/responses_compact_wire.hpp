// The compaction half of the Responses door's wire format (docs/api.md "Responses door",
// "Compaction"): the `compaction` input item, `context_management`, and the answer of
// POST /v1/responses/compact. Pure functions; safe from any thread; they never throw.
//
// mneme's compaction item is readable: `encrypted_content` holds the summary text as
// mneme wrote it (nothing is encrypted), `replaced_rows` the id range of the rows it
// stands for, and its id is "cmp_<first>_<last>" so a client keeping only the typed
// fields (type, id, encrypted_content) still names the range. Resent as input, the item
// is a session message flagged is_summary with that range, which the history matcher
// (policies/history_match.hpp, "Summary items") matches against the stored rows; the
// text is not compared (the rows are mneme's).
//
// The window answered by the compact endpoint is the session's live context as a
// client would send it back (policies/history_match.hpp client_window), in order: every
// summary row — a compaction's, or the replacement of one tool output — a compaction
// item; user and system rows `message` items; an assistant row a `message` item (when
// it has text or no calls) then a `function_call` per call; a tool row a
// `function_call_output`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "caf/expected.hpp"

#include "messages/agent_turn.hpp"
#include "messages/transcript.hpp"

namespace mneme::api {

// "cmp_<first>_<last>".
std::string compaction_item_id(int64_t first, int64_t last);

// A `compaction` item at `at` ("input[3]") as a summary message; errc::bad_request
// naming the field when it names no range ("replaced_rows" or an id of compaction_item_id).
caf::expected<message> decode_compaction_item(const nlohmann::json& item, const std::string& at);

// `context_management` of a request body, when present: [{"type":"compaction",
// "compact_threshold":N}] sets out.compact_threshold (N an integer of 1 or more); any
// other entry is refused naming it.
caf::error decode_context_management(const nlohmann::json& body, turn_options& out);

// The window's items (see the header comment).
nlohmann::json window_items(const std::vector<message>& window);

struct compacted_answer {
  std::string id;          // "resp_..."
  int64_t created_at = 0;  // Unix seconds
  std::vector<message> window;
  int64_t input_tokens = 0;  // the live context before the compaction
  int64_t output_tokens = 0; // the summary written (0 when nothing was compacted)
};

// {"id","object":"response.compaction","created_at","output","usage"}.
nlohmann::json to_compacted_object(const compacted_answer& a);

} // namespace mneme::api
