// Semantic memory (SPEC §7): per-user facts and preferences that outlive sessions,
// stored in a `facts` table (SQLite: schema v6; PostgreSQL: schema version 4).
//
// Decisions where the SPEC is silent:
//   - A fact is (user_id, key) -> value. Keys are compared byte for byte (case
//     matters); at most one active version per key.
//   - Nothing is deleted and no fact text is rewritten: put_fact on an existing
//     key inserts a new version and retires the old one (active = 0, replaced_by =
//     new id; the new version keeps the old created_at_ms); remove_fact retires
//     the active version as a tombstone (active = 0, removed_at_ms = now). A put
//     after a remove starts the key afresh (new created_at_ms).
//   - A put whose value and source equal the active version's changes nothing and
//     returns that version (no churn of versions from repeated writes).
//   - Limits (else bad_request naming the field): user_id 1..512 bytes, key
//     1..256 bytes, value 1..65,536 bytes, source_session 0..128 bytes, now >= 0.
//   - Search uses the recall sanitizer and route (policies/fts_query.hpp): the
//     unicode61 index, the CJK bigram index (first when the query has CJK), the
//     trigram index (terms >= 3 characters), then a substring scan of the user's
//     newest fact_scan_rows versions. Key and value are both searched; BM25
//     ranks; a route that finds anything ends the search. Only the user's own
//     facts; retired versions only with include_inactive.
//
// Each backend implements them (store/sqlite/sqlite_facts.hpp, store/pg/pg_facts.hpp)
// with the checks below; both search with the same routes over their own columns.
// Each write is one transaction of its own. The functions here are pure; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "caf/expected.hpp"

#include "messages/storage_types.hpp"
#include "messages/transcript.hpp"

namespace mneme {

inline constexpr std::size_t fact_user_max_bytes = 512;
inline constexpr std::size_t fact_key_max_bytes = 256;
inline constexpr std::size_t fact_value_max_bytes = 64 * 1024;
inline constexpr std::size_t fact_source_max_bytes = 128;
inline constexpr int64_t fact_query_max_limit = 1000;
inline constexpr int64_t fact_scan_rows = 10000;

// The limits of a put (bad_request naming the field), shared by both backends.
caf::error check_fact(const fact_record& f, time_ms now);
// The limits of a query (bad_request for user_id or limit).
caf::error check_fact_query(const fact_query& q);

struct parsed_query;
// The rule of the last-resort substring scan: every positive clause has an
// alternative inside key + "\n" + value, no negated clause does (ASCII
// case-insensitive).
bool fact_scan_matches(const fact_record& f, const parsed_query& q);

} // namespace mneme
