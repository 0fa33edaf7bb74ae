// The response records of the Responses door on PostgreSQL (store/response_records.hpp
// states what they are and each operation's contract), in the `responses` table of
// pg_schema.cpp (version 7). Only for pg_store (store/pg/pg_store.cpp). Each write is
// one transaction of its own. Thread: the connection's owner.
#pragma once

#include <string>

#include <pqxx/connection>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "store/response_records.hpp"

namespace mneme {

caf::error pg_put_response(pqxx::connection& conn, const response_record& r);
caf::expected<response_record> pg_response(pqxx::connection& conn, const std::string& id);
caf::expected<response_record> pg_delete_response(pqxx::connection& conn, const std::string& id,
                                                  time_ms now);

} // namespace mneme
