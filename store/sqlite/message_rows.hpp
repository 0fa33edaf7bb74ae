// SQLite's message reads: the column list every read selects from the message_rows
// view (store/sqlite/migrations.cpp) and the decoding of one such row. Pure functions;
// the thread that owns the statement.
#pragma once

#include <cstdint>

#include "caf/expected.hpp"

#include "messages/transcript.hpp"

namespace mneme {

class statement;

// The column list every message read selects from the message_rows view, in the
// order decode_message() expects.
#define MNEME_MESSAGE_COLUMNS                                                           \
  "id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp_ms, " \
  "token_estimate, active, compacted, is_summary, replaced_first_id, replaced_last_id, " \
  "archived_by"

// One message from a row selected with MNEME_MESSAGE_COLUMNS. `archived_by`
// receives column 14 when not null.
caf::expected<message> decode_message(const statement& row, int64_t* archived_by = nullptr);

} // namespace mneme
