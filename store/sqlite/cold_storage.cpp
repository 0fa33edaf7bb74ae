// Episodic cold storage; see cold_storage.hpp.
#include "store/sqlite/cold_storage.hpp"

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/sqlite_jsonl_export.hpp"
#include "store/sqlite/sqlite_error.hpp"

namespace mneme {

namespace {

namespace fs = std::filesystem;

caf::error file_failure(const std::string& what, const std::string& path, int err) {
  return caf::make_error(errc::storage_failed,
                         "cold storage: " + what + " " + path + ": " + std::strerror(err));
}

// Writes `text` to `path` (created or truncated) and fsyncs it.
caf::error write_synced(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return file_failure("cannot create", path, errno);
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    auto n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      auto e = errno;
      ::close(fd);
      return file_failure("cannot write", path, e);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    auto e = errno;
    ::close(fd);
    return file_failure("cannot sync", path, e);
  }
  if (::close(fd) != 0)
    return file_failure("cannot close", path, errno);
  return {};
}

caf::error sync_folder(const std::string& folder) {
  int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return file_failure("cannot open folder", folder, errno);
  auto rc = ::fsync(fd);
  auto e = errno;
  ::close(fd);
  return rc == 0 ? caf::error{} : file_failure("cannot sync folder", folder, e);
}

caf::error require_ended(db_connection& db, const std::string& session_id) {
  auto stmt = db.prepare("SELECT ended_at_ms FROM sessions WHERE id = ?1");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_id);
  auto rc = s->step();
  if (rc == SQLITE_DONE)
    return not_found("unknown session '" + session_id + "'");
  if (rc != SQLITE_ROW)
    return db.failure(rc, "look up session");
  if (s->column_int(0) == 0)
    return bad_request("cold storage: session '" + session_id + "' has not ended");
  return {};
}

caf::error mark_written(db_connection& db, const std::string& session_id, time_ms now) {
  write_transaction txn{db};
  if (auto err = txn.begin())
    return err;
  auto stmt = db.prepare("UPDATE sessions SET cold_stored_at_ms = ?2 WHERE id = ?1");
  if (!stmt)
    return std::move(stmt.error());
  {
    statement_scope s{**stmt};
    s->bind(1, session_id);
    s->bind(2, now > 0 ? now : int64_t{1});
    if (auto rc = s->step(); rc != SQLITE_DONE)
      return db.failure(rc, "mark cold copy");
  }
  return txn.commit();
}

} // namespace

std::string cold_storage_folder(const store_params& params) {
  if (params.cold_storage_dir.empty())
    return {};
  fs::path dir{params.cold_storage_dir};
  if (dir.is_absolute())
    return dir.lexically_normal().string();
  if (params.path.empty() || params.path == ":memory:" || params.path.rfind("file:", 0) == 0)
    return {};
  auto base = fs::path{params.path}.parent_path();
  return (base / dir).lexically_normal().string();
}

std::string cold_storage_file(const std::string& folder, const std::string& session_id) {
  return (fs::path{folder} / (session_id + ".jsonl")).string();
}

caf::expected<std::vector<std::string>> sessions_awaiting_cold_copy(db_connection& db,
                                                                    int64_t limit) {
  auto stmt = db.prepare("SELECT id FROM sessions WHERE ended_at_ms > 0"
                         " AND cold_stored_at_ms = 0 ORDER BY ended_at_ms, id LIMIT ?1");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, limit);
  std::vector<std::string> out;
  for (;;) {
    auto rc = s->step();
    if (rc == SQLITE_DONE)
      return out;
    if (rc != SQLITE_ROW)
      return db.failure(rc, "list sessions awaiting a cold copy");
    out.push_back(s->column_text(0));
  }
}

caf::error write_cold_copy(db_connection& db, const std::string& folder,
                           const std::string& session_id, time_ms now) {
  assert(db.mode() == open_mode::writer);
  assert(!folder.empty());
  if (auto err = require_ended(db, session_id))
    return err;
  std::ostringstream out;
  auto lines = export_session_jsonl(db, session_id, out);
  if (!lines)
    return std::move(lines.error());
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec)
    return caf::make_error(errc::storage_failed,
                           "cold storage: cannot create " + folder + ": " + ec.message());
  auto target = cold_storage_file(folder, session_id);
  auto temp = (fs::path{folder} / ("." + session_id + ".jsonl.tmp")).string();
  if (auto err = write_synced(temp, out.str())) {
    std::remove(temp.c_str());
    return err;
  }
  if (std::rename(temp.c_str(), target.c_str()) != 0) {
    auto e = errno;
    std::remove(temp.c_str());
    return file_failure("cannot rename into", target, e);
  }
  if (auto err = sync_folder(folder))
    return err;
  return mark_written(db, session_id, now);
}

cold_sweep_result sweep_cold_storage(db_connection& db, const std::string& folder,
                                     int64_t limit, time_ms now) {
  cold_sweep_result result;
  auto pending = sessions_awaiting_cold_copy(db, limit);
  if (!pending) {
    result.failed = 1;
    result.first_error = std::move(pending.error());
    return result;
  }
  for (const auto& id : *pending) {
    if (auto err = write_cold_copy(db, folder, id, now)) {
      if (result.failed++ == 0)
        result.first_error = std::move(err);
    } else {
      ++result.written;
    }
  }
  return result;
}

} // namespace mneme
