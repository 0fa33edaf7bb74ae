// Semantic memory on SQLite (store/facts.hpp states the semantics and the limits): the
// `facts` table of schema v6 (store/sqlite/migrations.cpp) and its three FTS5 indexes.
// Writes REQUIRE the writer connection (the storage actor's thread) and run in their
// own IMMEDIATE transaction; reads run on any connection (a read-only reader
// included). Thread: the thread that owns `db`.
#pragma once

#include <string>
#include <vector>

#include "caf/expected.hpp"

#include "messages/storage_types.hpp"
#include "messages/transcript.hpp"
#include "store/facts.hpp"

namespace mneme {

class db_connection;

// Adds `f.key` for `f.user_id`, or replaces its active version. Reads user_id,
// key, value and source_session from `f`; returns the active version.
// REQUIRES: db is the writer.
caf::expected<fact_record> put_fact(db_connection& db, const fact_record& f, time_ms now);

// Retires the active version of (user_id, key) as removed; returns it retired.
// Errors: not_found when the user has no active fact under `key`.
// REQUIRES: db is the writer.
caf::expected<fact_record> remove_fact(db_connection& db, const std::string& user_id,
                                       const std::string& key, time_ms now);

// The active version of (user_id, key); not_found when there is none.
caf::expected<fact_record> find_fact(db_connection& db, const std::string& user_id,
                                     const std::string& key);

// q.text empty: the user's facts, newest version first. Otherwise the full-text
// search of store/facts.hpp, best first. Errors: bad_request for an empty or
// oversized user_id or a limit outside 1..fact_query_max_limit.
caf::expected<std::vector<fact_record>> query_facts(db_connection& db, const fact_query& q);

// message_store::facts_by_id on SQLite.
caf::expected<std::vector<fact_record>> facts_by_id(db_connection& db, const std::string& user_id,
                                                    const std::vector<int64_t>& ids);

} // namespace mneme
