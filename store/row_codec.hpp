// Conversion between transcript values and table rows, and the validation every
// message passes before the store writes it. The tool_calls column holds a JSON
// array of {"id","name","arguments"} objects ('' when there are none).
// Pure functions; safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "messages/transcript.hpp"
#include "store/store_params.hpp"

namespace mneme {

class statement;

// The column list every message read selects from the message_rows view, in the
// order decode_message() expects.
#define MNEME_MESSAGE_COLUMNS                                                           \
  "id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp_ms, " \
  "token_estimate, active, compacted, is_summary, replaced_first_id, replaced_last_id, " \
  "archived_by"

// Checks a message about to be appended: a known role, a session id of 1..128 bytes,
// a live row (active and not compacted), summary provenance only on summaries
// (0 < first <= last), non-negative timestamp and estimate, and content plus tool
// fields within params.max_content_bytes. Content bytes are not checked for UTF-8:
// they are stored as given. Returns errc::bad_request naming the first problem.
caf::error validate_new_message(const message& m, const store_params& params);

// tool_calls <-> the JSON text of the tool_calls column. Invalid UTF-8 inside a
// tool call field is replaced by U+FFFD (JSON cannot carry it).
std::string encode_tool_calls(const std::vector<tool_call>& calls);
caf::expected<std::vector<tool_call>> decode_tool_calls(const std::string& json);

// One message from a row selected with MNEME_MESSAGE_COLUMNS. `archived_by`
// receives column 14 when not null.
caf::expected<message> decode_message(const statement& row, int64_t* archived_by = nullptr);

// A short label for logs and errors: "<session> #<id>".
std::string describe(const message& m);

} // namespace mneme
