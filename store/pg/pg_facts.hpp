// Semantic memory on PostgreSQL (issue 26, stage 3): put, remove and query of
// per-user facts with the semantics of store/facts.hpp (versions, tombstones, no
// churn on an unchanged put, the same limits and errors, tenant scope inside every
// query), in the `facts` table of pg_schema.cpp (version 4).
//
// Search runs SQLite's routes (policies/fts_query.hpp plan_routes) over the row's
// own recall columns: the word and CJK bigram routes are one tsvector match of
// mneme's tokens (policies/tsquery_text.hpp; ts_rank orders, then newest), the
// trigram route an ILIKE per term on search_text (pg_trgm index), the last resort
// the same bounded substring scan as SQLite. Differences from SQLite, on purpose:
// ranking is ts_rank, not BM25; Latin words are matched case-folded but with their
// diacritics (SQLite's unicode61 also strips them).
//
// Only for pg_store (store/pg/pg_store.cpp). Each write is one transaction of its
// own. Thread: the connection's owner.
#pragma once

#include <string>
#include <vector>

#include <pqxx/connection>

#include "caf/expected.hpp"

#include "messages/storage_types.hpp"
#include "messages/transcript.hpp"

namespace mneme {

caf::expected<fact_record> pg_put_fact(pqxx::connection& conn, const fact_record& f,
                                       time_ms now);
caf::expected<fact_record> pg_remove_fact(pqxx::connection& conn, const std::string& user_id,
                                          const std::string& key, time_ms now);
caf::expected<std::vector<fact_record>> pg_query_facts(pqxx::connection& conn,
                                                       const fact_query& q);
// message_store::facts_by_id on PostgreSQL.
caf::expected<std::vector<fact_record>> pg_facts_by_id(pqxx::connection& conn,
                                                       const std::string& user_id,
                                                       const std::vector<int64_t>& ids);

} // namespace mneme
