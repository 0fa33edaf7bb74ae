// JSONL export of a session on SQLite (store/jsonl_export.hpp states the format).
// Thread: the owner of `db` (the writer or a read-only reader).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "caf/expected.hpp"

namespace mneme {

class db_connection;

// Writes every row of the session to `out`; returns the number of lines.
// Errors: not_found for an unknown session; storage_failed when `out` fails.
caf::expected<int64_t> export_session_jsonl(db_connection& db, const std::string& session_id,
                                            std::ostream& out);

} // namespace mneme
