// JSONL export of a session (SPEC §7 episodic tier): one JSON object per row, every
// row of the session in id order whatever its state, one line each:
//   {"id":12,"session_id":"...","role":"user","content":"...","tool_call_id":"",
//    "tool_calls":[{"id":"..","name":"..","arguments":".."}],"tool_name":"",
//    "timestamp_ms":1700000000000,"token_estimate":42,"active":true,"compacted":false,
//    "is_summary":false,"replaced_first_id":0,"replaced_last_id":0,"archived_by":0,
//    "state":"live"}
// state is live|archived|rolled_back (SPEC §1 table); archived_by is the id of the
// summary whose compaction archived the row (0 otherwise). Strings are UTF-8; bytes
// that are not valid UTF-8 are written as U+FFFD. Each backend writes the lines of its
// rows with to_jsonl_line (store/sqlite/sqlite_jsonl_export.hpp, store/pg/pg_store.cpp).
// Pure; any thread.
#pragma once

#include <cstdint>
#include <string>

#include "messages/transcript.hpp"

namespace mneme {

// One line (without the newline) for a row.
std::string to_jsonl_line(const message& m, int64_t archived_by);

} // namespace mneme
