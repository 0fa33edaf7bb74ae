// The response records of the Responses door on SQLite (store/response_records.hpp
// states what they are and each operation's contract): functions over the writer
// connection; they never throw.
// Thread: the thread that owns `db` (the storage actor).
#pragma once

#include <string>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "store/response_records.hpp"

namespace mneme {

class db_connection;

caf::error put_response(db_connection& db, const response_record& r);
caf::expected<response_record> response_of(db_connection& db, const std::string& id);
caf::expected<response_record> delete_response(db_connection& db, const std::string& id,
                                               time_ms now);

} // namespace mneme
