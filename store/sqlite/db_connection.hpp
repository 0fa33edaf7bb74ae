// One SQLite connection with a cache of prepared statements, opened either as the
// single writer (WAL, synchronous per store_params, migrations applied) or as a
// read-only reader (query_only, schema version checked). Every statement is a
// prepared statement with bound parameters: no SQL is ever built from caller text.
//
// One writer per database file: a writer holds an exclusive advisory lock
// (flock LOCK_EX|LOCK_NB) on "<path>.lock" next to the file for its whole lifetime;
// a second writer (same process or another one: a daemon, a CLI write command)
// is refused with storage_locked. The OS drops the lock when the process dies, so
// a crash never leaves the file locked. Readers take no lock and work beside a
// writer. ":memory:", "" and "file:" URIs have no file of their own: no lock.
// The lock file is left in place on close (removing it would race a new writer).
//
// Thread: a connection, its statements and its transactions belong to the one
// thread (actor) that opened it. Copy is deleted; moving is done through unique_ptr.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "store/store_maintenance.hpp"
#include "store/store_params.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace mneme {

// The writer's page cache in KiB (PRAGMA cache_size=-N; SQLite's default is
// -2000, i.e. 2,000 KiB). The background indexer's FTS5 merges free pages and
// reuse them within a tick; a cache this large keeps that reuse in memory
// instead of spilling the same pages to the log again and again, for each
// tick's checkpoint to copy back. Readers keep SQLite's default. A tick's
// COMMIT writes up to this much of dirty pages (policies/index_pacing budgets
// for it). Figures: docs/benchmarks.md#recall.
inline constexpr int64_t writer_cache_kib = 16 * 1024;

// A prepared statement. Bind indexes are 1-based, column indexes 0-based.
class statement {
public:
  statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~statement();
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  void bind(int index, int64_t value);
  void bind(int index, std::string_view text); // stored byte for byte
  // Binds without a copy: the caller keeps `text` alive and unchanged until the
  // statement is reset (a statement_scope around the step is enough).
  void bind_unowned(int index, std::string_view text);
  void bind_null(int index);
  void bind_blob(int index, std::string_view bytes); // a BLOB, byte for byte
  // Runs one step: SQLITE_ROW, SQLITE_DONE or an error code.
  int step();
  // Resets the statement and clears its bindings; safe to call at any time.
  void reset();

  int64_t column_int(int index) const;
  double column_double(int index) const;
  std::string column_text(int index) const; // byte-exact, embedded NULs kept
  // The same bytes without a copy: valid until this statement's next step(),
  // reset() or destruction (SQLite's own lifetime for a column's text).
  std::string_view column_view(int index) const;
  bool column_is_null(int index) const;
  // A BLOB column's bytes without a copy (lifetime as column_view).
  std::string_view column_blob(int index) const;

private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

// Resets a cached statement when the scope ends, so a statement never stays
// active (an active read statement would keep a WAL snapshot open).
class statement_scope {
public:
  explicit statement_scope(statement& s) : s_(s) {}
  ~statement_scope() { s_.reset(); }
  statement_scope(const statement_scope&) = delete;
  statement_scope& operator=(const statement_scope&) = delete;
  statement* operator->() { return &s_; }
  statement& get() { return s_; }

private:
  statement& s_;
};

// writer: the one connection that writes (takes the writer lock, migrates);
// reader: read-only (query_only); checkpointer: copies the writer's log back into
// the file (checkpoint_passive) and does nothing else. It writes no row, so it
// takes no writer lock, and it needs an existing file with a known schema.
enum class open_mode { writer, reader, checkpointer };

// The advisory lock file of the single writer of `db_path` ("<db_path>.lock"), or
// "" when the path names no file (":memory:", "", "file:" URIs).
std::string writer_lock_path(const std::string& db_path);

class db_connection {
public:
  // Opens `params.path`. A writer creates the file if needed, switches it to WAL
  // and applies the pending migrations; a reader requires an existing file whose
  // schema this binary understands. Errors: storage_cant_open, storage_corrupt,
  // storage_locked (also: another writer holds the file's lock),
  // storage_schema_too_new, storage_readonly, storage_failed.
  static caf::expected<std::unique_ptr<db_connection>> open(const store_params& params,
                                                            open_mode mode);
  ~db_connection();
  db_connection(const db_connection&) = delete;
  db_connection& operator=(const db_connection&) = delete;

  // The cached prepared statement for `sql`; it lives as long as the connection
  // (the cache never evicts), so callers may keep the pointer.
  // REQUIRES: `sql` has static storage duration (it is the cache key).
  caf::expected<statement*> prepare(const char* sql);

  // Runs SQL text that takes no parameters (pragmas, DDL, transaction control).
  caf::error exec(const char* sql, const std::string& what);

  // Error for `rc` with this connection's message.
  caf::error failure(int rc, const std::string& what) const;

  // True while a transaction is open on this connection.
  bool in_transaction() const;
  // The file's page size in bytes (PRAGMA page_size), or an error.
  caf::expected<int64_t> page_bytes();
  // Page writes this connection has made to the log (or, outside WAL mode, the
  // file) since it opened, mid-transaction spills of the page cache included
  // (SQLITE_DBSTATUS_CACHE_WRITE; a page written twice counts twice). Wraps
  // after 2^31 pages (16 TiB at 8 KiB).
  int64_t pages_written() const;

  // From now on, SQLite's automatic checkpoint is off on this connection and
  // wal_pages() follows the log's length after each of its commits (the caller
  // checkpoints: policies/wal_checkpoint.hpp). Only on the writer.
  void watch_wal();
  // The log's length in pages after this connection's last commit (0 before the
  // first commit after watch_wal()).
  int64_t wal_pages() const { return wal_pages_; }
  // True once after each commit since the last call: only a commit lengthens the
  // log, so a caller plans checkpoints only then.
  bool take_wal_commit() {
    bool committed = wal_committed_;
    wal_committed_ = false;
    return committed;
  }
  // Makes the next take_wal_commit() true (a checkpoint that found another one
  // running: plan again).
  void mark_wal_commit() { wal_committed_ = true; }
  // A PASSIVE checkpoint: copies what no reader still needs, never waits for a
  // lock. SQLITE_BUSY (another checkpoint runs) is not an error: the result says
  // busy. Writer or checkpointer only.
  caf::expected<wal_checkpoint_result> checkpoint_passive();
  // A TRUNCATE checkpoint on the writer: copies the whole log back, waiting for
  // readers up to the busy timeout, and cuts the log file to zero bytes, so its
  // space returns to the filesystem (after a refused write: a full disk). Busy (a
  // reader or another checkpoint kept it from finishing) is not an error.
  caf::expected<wal_checkpoint_result> checkpoint_truncate();

  open_mode mode() const { return mode_; }
  const std::string& path() const { return path_; }

  // Test seam: the raw handle (for fault injection and measurements only).
  sqlite3* native_handle() { return db_; }

private:
  db_connection(sqlite3* db, open_mode mode, std::string path, int lock_fd)
    : db_(db), mode_(mode), path_(std::move(path)), lock_fd_(lock_fd) {}

  sqlite3* db_;
  open_mode mode_;
  std::string path_;
  int lock_fd_; // the writer lock's descriptor; -1 for readers and in-memory files
  int64_t wal_pages_ = 0;       // set by the WAL hook (watch_wal)
  bool wal_committed_ = false;  // set by the WAL hook, cleared by take_wal_commit
  std::unordered_map<const char*, std::unique_ptr<statement>> cache_;
};

// An IMMEDIATE write transaction that rolls back unless committed.
class write_transaction {
public:
  explicit write_transaction(db_connection& db) : db_(db) {}
  ~write_transaction();
  write_transaction(const write_transaction&) = delete;
  write_transaction& operator=(const write_transaction&) = delete;

  caf::error begin();
  // Durable when it returns no error (the connection's synchronous setting).
  caf::error commit();

private:
  db_connection& db_;
  bool open_ = false;
};

} // namespace mneme
