// SQLite's `unicode61 remove_diacritics 2` tokenizer (the one of the `fts_words`
// recall index, store/sqlite/migrations.cpp) called directly, outside any FTS5 table, so
// that the PostgreSQL backend indexes and queries its word route with exactly the
// tokens SQLite's word index holds: the same separators, the same case folding and
// the same accent folding ("café" -> "cafe", "Việt" -> "viet"). Used by
// store/pg/pg_search_columns (write side) and store/pg/pg_recall (queries, ranking,
// snippets). Owned by the recall module.
//
// Each thread tokenizes through an in-memory SQLite connection of its own, opened on
// first use and closed at thread exit (FTS5 tokenizers are not shared across
// threads). Thread: any.
#pragma once

#include <string_view>
#include <vector>

#include "policies/cjk_bigram.hpp"

namespace mneme {

// Tokenizes `text` (any bytes) into `sink` as unicode61 with remove_diacritics 2
// would (token kind: always `word`; offsets are byte offsets into `text`). Returns 0,
// the first non-zero value of the sink, or a SQLite error code when FTS5 is missing.
int tokenize_unicode61(std::string_view text, void* ctx, bigram_token_sink sink);

// Every token of `text`.
std::vector<bigram_token> unicode61_tokens(std::string_view text);

} // namespace mneme
