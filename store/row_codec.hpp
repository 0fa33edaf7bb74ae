// What every backend's message rows share: the validation every message passes before
// the store writes it, and the text of the tool_calls column (a JSON array of
// {"id","name","arguments"} objects; '' when there are none). Each backend decodes its
// own rows (store/sqlite/message_rows.hpp, store/pg/pg_rows.hpp).
// Pure functions; safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "messages/transcript.hpp"
#include "store/store_params.hpp"

namespace mneme {

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

// A short label for logs and errors: "<session> #<id>".
std::string describe(const message& m);

} // namespace mneme
