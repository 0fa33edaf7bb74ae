// Episodic cold storage (SPEC §7): the JSONL export (store/jsonl_export.hpp) of
// every ended session, as one file `<dir>/<session_id>.jsonl`.
//
// Decisions where the SPEC is silent:
//   - The folder is database.cold_storage_dir; a relative folder is resolved
//     against the directory of the database file (so "cold" lives beside
//     mneme.db). An in-memory database (":memory:") with a relative folder has no
//     cold storage (there is no file to sit beside); an absolute folder is used
//     as given. The folder is created when missing.
//   - A file is written atomically: the JSONL goes to `.<id>.jsonl.tmp` in the
//     same folder, is fsync'ed, renamed over `<id>.jsonl`, and the folder is
//     fsync'ed. A reader never sees half a file.
//   - Only then is sessions.cold_stored_at_ms set (schema v6). A session ended
//     but not marked is written again by the next sweep (the next end or reset,
//     and the storage actor's start), so a failed write (disk full, permissions)
//     is retried and never touches the database rows.
//   - The copy is written once, when the session ends; an ended session does not
//     change afterwards (no append, compaction or rollback is accepted on it).
//
// Thread: the owner of the writer connection (the storage actor's thread).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "messages/transcript.hpp"
#include "store/store_maintenance.hpp"
#include "store/store_params.hpp"

namespace mneme {

class db_connection;

// The folder ended sessions go to, or "" when cold storage is off (see above).
std::string cold_storage_folder(const store_params& params);

// `<folder>/<session_id>.jsonl`.
std::string cold_storage_file(const std::string& folder, const std::string& session_id);

// Ended sessions whose cold copy is not written yet, earliest end first.
caf::expected<std::vector<std::string>> sessions_awaiting_cold_copy(db_connection& db,
                                                                    int64_t limit);

// Writes the session's JSONL into `folder` atomically, then marks it written.
// Errors: not_found (unknown session), bad_request (session still open),
// storage_failed naming the file on a file-system failure.
// REQUIRES: db is the writer; folder is not empty.
caf::error write_cold_copy(db_connection& db, const std::string& folder,
                           const std::string& session_id, time_ms now);

// Writes the cold copies of up to `limit` ended, unwritten sessions. A failure
// does not stop the sweep: the session stays unmarked for the next one.
// REQUIRES: db is the writer; folder is not empty.
cold_sweep_result sweep_cold_storage(db_connection& db, const std::string& folder,
                                     int64_t limit, time_ms now);

} // namespace mneme
