// Registers mneme's FTS5 tokenizers (the CJK bigram tokenizer `mneme_cjk`) on a SQLite
// connection. The store calls it on every connection it opens (the writer and each
// read-only reader) before any statement runs. Owned by the recall module (issue 4);
// the storage module only calls it. Thread: the thread that owns `db`.
#pragma once

struct sqlite3;
struct fts5_api;

namespace mneme {

// The name under which the CJK bigram tokenizer is registered:
// `CREATE VIRTUAL TABLE ... USING fts5(..., tokenize='mneme_cjk')`.
inline constexpr const char* cjk_bigram_tokenizer_name = "mneme_cjk";

// The FTS5 API of `db`, or null when SQLite was built without FTS5.
fts5_api* fts5_api_of(sqlite3* db);

// Returns SQLITE_OK, or the SQLite error code that made registration fail.
// REQUIRES: db is an open connection.
int register_fts_tokenizers(sqlite3* db);

} // namespace mneme
