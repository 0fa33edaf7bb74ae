// Hook that registers mneme's FTS5 tokenizers (CJK bigram, ...) on a SQLite
// connection. The store calls it on every connection it opens (the writer and each
// read-only reader) before any statement runs. Owned by the recall module (issue 4);
// the storage module only calls it. Thread: the thread that owns `db`.
#pragma once

struct sqlite3;

namespace mneme {

// Returns SQLITE_OK, or the SQLite error code that made registration fail.
// REQUIRES: db is an open connection.
int register_fts_tokenizers(sqlite3* db);

} // namespace mneme
