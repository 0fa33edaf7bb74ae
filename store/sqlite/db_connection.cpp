// One SQLite connection and its prepared statements; see db_connection.hpp.
#include "store/sqlite/db_connection.hpp"

#include <cassert>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <sqlite3.h>

#include "policies/wal_checkpoint.hpp"
#include "store/sqlite/fts_tokenizers.hpp"
#include "store/sqlite/migrations.hpp"
#include "store/sqlite/sqlite_error.hpp"

namespace mneme {

// --- statement

statement::~statement() {
  sqlite3_finalize(stmt_);
}

void statement::bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
}

void statement::bind(int index, std::string_view text) {
  // A non-null pointer even for "" so the value is '' and not NULL.
  sqlite3_bind_text64(stmt_, index, text.empty() ? "" : text.data(), text.size(),
                      SQLITE_TRANSIENT, SQLITE_UTF8);
}

void statement::bind_unowned(int index, std::string_view text) {
  sqlite3_bind_text64(stmt_, index, text.empty() ? "" : text.data(), text.size(),
                      SQLITE_STATIC, SQLITE_UTF8);
}

void statement::bind_blob(int index, std::string_view bytes) {
  sqlite3_bind_blob64(stmt_, index, bytes.empty() ? "" : bytes.data(), bytes.size(),
                      SQLITE_TRANSIENT);
}

std::string_view statement::column_blob(int index) const {
  auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, index));
  auto n = sqlite3_column_bytes(stmt_, index);
  return p == nullptr ? std::string_view{} : std::string_view(p, static_cast<size_t>(n));
}

void statement::bind_null(int index) {
  sqlite3_bind_null(stmt_, index);
}

int statement::step() {
  return sqlite3_step(stmt_);
}

void statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t statement::column_int(int index) const {
  return sqlite3_column_int64(stmt_, index);
}

double statement::column_double(int index) const {
  return sqlite3_column_double(stmt_, index);
}

std::string statement::column_text(int index) const {
  return std::string{column_view(index)};
}

std::string_view statement::column_view(int index) const {
  auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, index));
  auto n = sqlite3_column_bytes(stmt_, index);
  return p == nullptr ? std::string_view{} : std::string_view(p, static_cast<size_t>(n));
}

bool statement::column_is_null(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

// --- db_connection

namespace {

struct raw_closer {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};

// Runs a pragma that answers one text row; returns that text.
caf::expected<std::string> pragma_text(db_connection& db, const char* sql,
                                       const std::string& what) {
  auto stmt = db.prepare(sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  auto rc = s->step();
  if (rc != SQLITE_ROW)
    return db.failure(rc, what);
  return s->column_text(0);
}

caf::error configure_writer(db_connection& db, const store_params& params) {
  // A new file gets 8 KiB pages: a message's text is 50 B to 200 KB, and 8 KiB
  // pages carry it in half the log frames of 4 KiB pages (SQLite writes each
  // frame with two system calls). SQLite applies a page size only before the
  // file's first page is written, so an existing file keeps its own.
  // Figures: docs/benchmarks.md#storage.
  if (auto err = db.exec("PRAGMA page_size=8192", "set the page size of a new file"))
    return err;
  auto mode = pragma_text(db, "PRAGMA journal_mode=WAL", "enable WAL");
  if (!mode)
    return std::move(mode.error());
  if (*mode != "wal" && *mode != "memory")
    return caf::make_error(errc::storage_failed,
                           db.path() + ": journal_mode stays '" + *mode + "', WAL refused");
  auto sync = params.synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL";
  if (auto err = db.exec(sync, "set synchronous"))
    return err;
  auto cache_sql = "PRAGMA cache_size=-" + std::to_string(writer_cache_kib);
  if (auto err = db.exec(cache_sql.c_str(), "set the page cache size"))
    return err;
  // mneme deletes no row (triggers abort every DELETE of messages, states and
  // facts), so the only pages freed are those of FTS5's merged index segments,
  // whose terms the merged segment holds anyway. Debian builds SQLite with
  // secure delete on, which zeroes each freed page and writes it to the log
  // again; FAST still zeroes deleted cells in pages written anyway but no longer
  // whole freed pages, which the log would otherwise carry once more.
  // Figures: docs/benchmarks.md#recall.
  if (auto err = db.exec("PRAGMA secure_delete=FAST", "set secure_delete"))
    return err;
  // The log file keeps the length of its longest stretch unless it is cut: one
  // large transaction (a migration rebuilding an index of a big file writes GBs of
  // log) would otherwise occupy that much disk for good. SQLite cuts the file
  // back to this length at the first commit after the log restarts. The
  // writer's own bound (policies/wal_checkpoint) is the length it normally reaches.
  auto limit_sql = "PRAGMA journal_size_limit=" + std::to_string(wal_inline_bound_bytes);
  if (auto err = db.exec(limit_sql.c_str(), "limit the log file's length"))
    return err;
  return apply_migrations(db, latest_schema_version());
}

// Takes the exclusive writer lock of `db_path`: the lock's descriptor, or -1 when
// the path names no file.
caf::expected<int> take_writer_lock(const std::string& db_path) {
  auto lock_path = writer_lock_path(db_path);
  if (lock_path.empty())
    return -1;
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    auto code = errno == EACCES || errno == EROFS ? errc::storage_readonly
                                                  : errc::storage_cant_open;
    return caf::make_error(code, db_path + ": cannot open the writer lock " + lock_path + ": "
                                   + std::strerror(errno));
  }
  int rc;
  do
    rc = ::flock(fd, LOCK_EX | LOCK_NB);
  while (rc != 0 && errno == EINTR);
  if (rc == 0)
    return fd;
  auto err = errno;
  ::close(fd);
  if (err == EWOULDBLOCK)
    return caf::make_error(errc::storage_locked,
                           db_path + " is opened for writing by another mneme (a running"
                                     " daemon or another command holds "
                             + lock_path + "); only one writer per database file: while a daemon serves it,"
                                     " use --server URL to go through the daemon");
  return caf::make_error(errc::storage_failed,
                         db_path + ": cannot lock " + lock_path + ": " + std::strerror(err));
}

caf::error configure_reader(db_connection& db) {
  if (db.mode() == open_mode::reader)
    if (auto err = db.exec("PRAGMA query_only=1", "set query_only"))
      return err;
  auto version = schema_version(db);
  if (!version)
    return std::move(version.error());
  if (*version > latest_schema_version())
    return caf::make_error(errc::storage_schema_too_new,
                           db.path() + ": schema version " + std::to_string(*version)
                             + " is newer than this binary's "
                             + std::to_string(latest_schema_version()));
  if (*version == 0)
    return caf::make_error(errc::storage_failed,
                           db.path() + ": not a mneme database (no schema yet)");
  return {};
}

} // namespace

std::string writer_lock_path(const std::string& db_path) {
  if (db_path.empty() || db_path == ":memory:" || db_path.rfind("file:", 0) == 0)
    return {};
  return db_path + ".lock";
}

caf::expected<std::unique_ptr<db_connection>> db_connection::open(const store_params& params,
                                                                  open_mode mode) {
  // Every SQLite path (CLI reads, exports, metrics, recall readers) comes through
  // here: a PostgreSQL configuration must not quietly open a SQLite file instead.
  if (params.backend != store_backend::sqlite)
    return caf::make_error(errc::config_invalid,
                           std::string{"database.backend is '"} + to_string(params.backend)
                             + "': this operation runs on SQLite only so far"
                               " (docs/scale-out.md, PostgreSQL backend status)");
  int lock_fd = -1;
  if (mode == open_mode::writer) {
    auto fd = take_writer_lock(params.path);
    if (!fd)
      return std::move(fd.error());
    lock_fd = *fd;
  }
  // Owns the lock until the connection does (or until a failed open returns).
  struct lock_guard {
    int fd;
    ~lock_guard() {
      if (fd >= 0)
        ::close(fd);
    }
  } lock{lock_fd};
  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
  flags |= mode == open_mode::writer         ? (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
           : mode == open_mode::checkpointer ? SQLITE_OPEN_READWRITE
                                             : SQLITE_OPEN_READONLY;
  sqlite3* raw = nullptr;
  auto rc = sqlite3_open_v2(params.path.c_str(), &raw, flags, nullptr);
  std::unique_ptr<sqlite3, raw_closer> guard{raw};
  if (rc != SQLITE_OK)
    return sqlite_failure(raw, rc, "open " + params.path);
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, static_cast<int>(params.busy_timeout_ms));
  std::unique_ptr<db_connection> db{
    new db_connection(guard.release(), mode, params.path, lock.fd)};
  lock.fd = -1;
  rc = register_fts_tokenizers(db->db_);
  if (rc != SQLITE_OK)
    return db->failure(rc, "register FTS tokenizers");
  auto err = mode == open_mode::writer ? configure_writer(*db, params) : configure_reader(*db);
  if (err)
    return err;
  if (mode == open_mode::checkpointer) {
    // The checkpoint syncs the file as the writer's commits sync the log.
    auto sync = params.synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL";
    if (auto sync_err = db->exec(sync, "set synchronous"))
      return sync_err;
  }
  return db;
}

db_connection::~db_connection() {
  cache_.clear(); // statements first: close_v2 would otherwise defer the close
  sqlite3_close_v2(db_);
  if (lock_fd_ >= 0)
    ::close(lock_fd_); // drops the writer lock after the last write is on disk
}

caf::expected<statement*> db_connection::prepare(const char* sql) {
  auto i = cache_.find(sql);
  if (i != cache_.end())
    return i->second.get();
  sqlite3_stmt* raw = nullptr;
  auto rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  if (rc != SQLITE_OK)
    return failure(rc, "prepare");
  auto [pos, added] = cache_.emplace(sql, std::make_unique<statement>(db_, raw));
  assert(added);
  return pos->second.get();
}

caf::error db_connection::exec(const char* sql, const std::string& what) {
  auto rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? caf::error{} : failure(rc, what);
}

caf::error db_connection::failure(int rc, const std::string& what) const {
  return sqlite_failure(db_, rc, what);
}

bool db_connection::in_transaction() const {
  return sqlite3_get_autocommit(db_) == 0;
}

caf::expected<int64_t> db_connection::page_bytes() {
  auto stmt = prepare("PRAGMA page_size");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  auto rc = s->step();
  if (rc != SQLITE_ROW)
    return failure(rc, "read the page size");
  return s->column_int(0);
}

int64_t db_connection::pages_written() const {
  int current = 0, highwater = 0;
  sqlite3_db_status(db_, SQLITE_DBSTATUS_CACHE_WRITE, &current, &highwater, 0);
  return current;
}

void db_connection::watch_wal() {
  assert(mode_ == open_mode::writer);
  // Replaces SQLite's automatic checkpoint (itself a WAL hook).
  sqlite3_wal_hook(
    db_,
    [](void* self, sqlite3*, const char*, int pages) {
      auto* db = static_cast<db_connection*>(self);
      db->wal_pages_ = pages;
      db->wal_committed_ = true;
      return SQLITE_OK;
    },
    this);
}

caf::expected<wal_checkpoint_result> db_connection::checkpoint_passive() {
  assert(mode_ != open_mode::reader);
  int log = 0;
  int done = 0;
  auto rc = sqlite3_wal_checkpoint_v2(db_, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &done);
  if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY)
    return failure(rc, "checkpoint the write-ahead log");
  return wal_checkpoint_result{log < 0 ? 0 : log, done < 0 ? 0 : done, rc != SQLITE_OK};
}

caf::expected<wal_checkpoint_result> db_connection::checkpoint_truncate() {
  assert(mode_ == open_mode::writer);
  int log = 0;
  int done = 0;
  auto rc = sqlite3_wal_checkpoint_v2(db_, "main", SQLITE_CHECKPOINT_TRUNCATE, &log, &done);
  if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY)
    return failure(rc, "truncate the write-ahead log");
  return wal_checkpoint_result{log < 0 ? 0 : log, done < 0 ? 0 : done, rc != SQLITE_OK};
}

// --- write_transaction

write_transaction::~write_transaction() {
  if (open_ && db_.in_transaction())
    sqlite3_exec(db_.native_handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

caf::error write_transaction::begin() {
  assert(!open_);
  if (auto err = db_.exec("BEGIN IMMEDIATE", "begin transaction"))
    return err;
  open_ = true;
  return {};
}

caf::error write_transaction::commit() {
  assert(open_);
  auto err = db_.exec("COMMIT", "commit");
  if (!err)
    open_ = false;
  return err;
}

} // namespace mneme
