// Translation of libpqxx exceptions into the project's storage error codes
// (messages/errc.hpp), carrying PostgreSQL's own message (and SQLSTATE) as context:
//   53100 disk_full -> storage_disk_full, 25006 / 42501 (read-only transaction,
//   insufficient privilege) -> storage_readonly, a lost connection (pg_connection_lost)
//   -> storage_cant_open, anything else -> storage_failed.
// Pure functions; any thread.
#pragma once

#include <exception>
#include <string>

#include "caf/error.hpp"

namespace mneme {

caf::error pg_failure(const std::exception& e, const std::string& what);

// Whether `e` says the connection to the server was lost before the statement ran to
// its end, so that nothing of the transaction was committed: a broken connection (not
// pqxx::in_doubt_error, a COMMIT whose outcome is unknown), a connection exception
// (SQLSTATE class 08) or the server shutting down or starting (57P01..57P03).
// libpqxx connects again by itself on the next use of the connection.
bool pg_connection_lost(const std::exception& e);

} // namespace mneme
