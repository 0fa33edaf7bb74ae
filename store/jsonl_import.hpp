// Import of a session from its JSONL export (SPEC §7 episodic tier): the inverse
// of store/jsonl_export.hpp, used to bring a cold-stored session back.
//
// Round trip: exporting an imported session gives the input byte for byte except
// for the ids, which the store assigns anew. Documented mapping: every message id
// is renumbered in order (the i-th row of the file gets the i-th new id, above
// every id in the database, so the full-text indexer picks the rows up), and
// `id`, `replaced_first_id`, `replaced_last_id` and `archived_by` are mapped
// through that renumbering; `session_id` becomes the target session's id. Every
// other byte (text, tool calls, timestamps, estimates, flags, state) is kept.
// The live order is rebuilt: a row that archived others takes the position of
// the first of them, exactly as the compaction commit placed it.
//
// Decisions where the SPEC is silent:
//   - The target session comes from `into`: id (empty = the id in the file;
//     an id already in the database is refused with bad_request), user_id
//     (required), session_key (empty = the session id), model, parent_id (must
//     exist when set), started_at_ms (<= 0: the first row's timestamp, else
//     `now`), ended_at_ms/end_reason (> 0: the session is imported ended).
//   - Every line is checked before anything is written; the first bad line is
//     refused with bad_request "line N: <what>" and nothing is written. A line
//     is one JSON object with exactly the export's fields and types; ids ascend
//     strictly; one session id throughout; flags consistent with `state`
//     (live|archived|rolled_back); provenance and archived_by name rows of the
//     file (archived_by a later row). The final newline is optional; empty
//     lines are refused. The whole import is one transaction.
//
// Each backend runs the plan below in one transaction of its own
// (store/sqlite/sqlite_jsonl_import.hpp, store/pg/pg_jsonl_import.hpp).
// Pure functions; any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "caf/expected.hpp"

#include "messages/transcript.hpp"
#include "store/store_params.hpp"

namespace mneme {

// One checked line: the row with the file's ids, its archived_by (a file id).
struct import_row {
  message m;
  int64_t archived_by = 0;
};

// Every line checked and the target resolved (the decisions above); nothing written.
struct import_plan {
  session_record into;
  std::vector<import_row> rows;
};

caf::expected<import_plan> plan_session_import(std::string_view jsonl, session_record into,
                                               time_ms now, const store_params& params);

// The row to insert: in session `session_id`, its provenance renumbered through
// `new_id` (file id -> new id; the rows it names were inserted before it).
message import_message(const import_row& r, const std::string& session_id,
                       const std::map<int64_t, int64_t>& new_id);

// The state of each inserted row, in file order: its new id, archived_by mapped,
// and its live position (`position == id` means "its own id").
struct import_state {
  int64_t id = 0;
  int64_t archived_by = 0;
  int64_t position = 0;
};
std::vector<import_state> import_states(const std::vector<import_row>& rows,
                                        const std::map<int64_t, int64_t>& new_id);

} // namespace mneme
