// Translation of libpqxx exceptions into the project's storage error codes
// (messages/errc.hpp), carrying PostgreSQL's own message (and SQLSTATE) as context:
//   53100 disk_full -> storage_disk_full, 25006 / 42501 (read-only transaction,
//   insufficient privilege) -> storage_readonly, a broken connection ->
//   storage_cant_open, anything else -> storage_failed.
// Pure functions; any thread.
#pragma once

#include <exception>
#include <string>

#include "caf/error.hpp"

namespace mneme {

caf::error pg_failure(const std::exception& e, const std::string& what);

} // namespace mneme
