// Recall search on the PostgreSQL backend (issue 26 stage 2; SPEC §4): the
// recall_source of store/message_store.hpp over a read-only connection of its own
// (one per recall reader, actors/recall). The semantics are those of SQLite's
// recall_search (store/recall.hpp): the same parsed query (policies/fts_query), the
// same routes in the same order (word → CJK bigram → trigram → substring scan), the
// tenant filter inside each query, include_inactive, one hit per conversation, the
// anchored window (hit ± 5) and bookends (3 + 3) with the same visibility and order,
// snippets of the same shape. Only PostgreSQL parameters carry user text: the query
// becomes a tsquery literal (policies/recall_text.hpp: every lexeme quoted) or LIKE
// patterns, so any query either finds something or nothing, never an SQL error.
//
// The routes' indexes (store/pg/pg_search_columns.hpp, schema v1 and v3):
//   unicode61  search_unicode61 @@ tsquery: SQLite's own unicode61 tokens with
//              remove_diacritics 2, so case and accents fold exactly as in fts_words;
//   cjk_bigram search_words @@ tsquery: mneme's CJK bigram tokens, as fts_cjk;
//   trigram    search_text ILIKE each term (pg_trgm GIN), as FTS5's trigram MATCH;
//   substring_scan  the newest substring_scan_rows visible rows of the user.
// A term is a phrase of its tokens (`<->`); `prefix*` marks its last token (`:*`).
// Unindexed tail (schema v12, store/pg/pg_indexer.hpp): rows whose recall columns the
// indexer has not filled yet are scanned after the full-text routes (the newest
// tail_scan_rows of the user, substring rules, route "unindexed_tail"), in the
// search's snapshot, as on SQLite; the last-resort scan reads them by content too.
//
// Ranking (bm25 has no PostgreSQL twin: ts_rank has no IDF and another curve):
// mneme ranks the user's visible matches of a route itself with FTS5's BM25
// formula and constants (k1 1.2, b 0.75, lower is better): term frequency = the
// occurrences of each phrase in the row (its tokens recomputed from the row text
// with the route's tokenizer; substring occurrences on the trigram route), length =
// the row's token count. PostgreSQL keeps no corpus statistics for a tsvector, so
// every phrase weighs 1 (no IDF) and the average length is that of the ranked rows.
// A single-term query therefore orders rows as BM25 does with that average; scores
// are on another scale than SQLite's (compare them within one search only). The
// newest pg_rank_candidates matches of a route are ranked (SQLite ranks all).
// Equal scores order by row id.
//
// Differences that remain (docs/scale-out.md): a tsvector keeps at most 256
// positions of a lexeme and positions up to 16,383, so a phrase is matched by
// position only within those (the trigram route still finds it as a substring);
// the trigram route's and the scan's case folding beyond ASCII follow the
// database's ctype (SQLite's trigram folds all of Unicode).
//
// Thread: the reader's (one detached recall reader actor). Copy deleted.
#pragma once

#include <cstdint>
#include <memory>

#include <pqxx/connection>

#include "store/message_store.hpp"
#include "store/store_params.hpp"

namespace mneme {

inline constexpr int64_t pg_rank_candidates = 10000;

class pg_recall_source final : public recall_source {
public:
  // Connects (read-only session) and checks that the schema has the recall columns.
  // Errors: those of pg_database_url; storage_cant_open when the server cannot be
  // reached; storage_failed when the schema is older than version 3 (the storage
  // actor's store migrates it) or newer than this binary's.
  static caf::expected<std::unique_ptr<pg_recall_source>> open(const store_params& params);
  pg_recall_source(const pg_recall_source&) = delete;
  pg_recall_source& operator=(const pg_recall_source&) = delete;

  // Errors: those of check_recall_request (store/recall.hpp); storage_* for
  // PostgreSQL failures.
  caf::expected<recall_result> search(const recall_request& req) override;

private:
  explicit pg_recall_source(std::unique_ptr<pqxx::connection> conn) : conn_(std::move(conn)) {}
  std::unique_ptr<pqxx::connection> conn_;
};

} // namespace mneme
