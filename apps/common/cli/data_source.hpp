// Where a `mneme` command reads from: a database file (`--db FILE`, else
// `database.path` of `--config FILE`, else ./mneme.db), or a running daemon
// (`--server URL [--token T]`). Declares the shared options on a CLI11 command and
// resolves them. Reads go through read-only connections, so they work beside a running
// daemon. With `database.backend: postgres` the same commands read the PostgreSQL
// database of `database.url` (read_source below); recall search there is not
// implemented yet (issue 26) and says so. Thread: the program's main thread.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "apps/common/config/app_config.hpp"
#include "apps/common/cli/cli_failure.hpp"
#include "messages/transcript.hpp"
#include "store/message_store.hpp"
#include "store/sqlite/store_reader.hpp"

namespace mneme::cli {

inline constexpr const char* default_db_file = "mneme.db";

struct source_options {
  std::string db;       // --db FILE
  std::string config;   // --config FILE
  std::string server;   // --server URL (http://host:port); empty = the file
  std::string token;    // --token T (bearer token for the daemon)
  bool json = false;    // --json: print the API's JSON instead of a table

  bool remote() const { return !server.empty(); }
};

// Adds --db, --config, --server, --token and (with_json) --json to `cmd`.
void add_source_options(CLI::App& cmd, source_options& opt, bool with_json = true);

// The configuration: --config FILE loaded strictly (every error in the message), or
// the defaults. database.path becomes --db when given, else the config's path (a
// config without a database block reads ./mneme.db, the default).
maybe_failure load_config(const source_options& opt, app_config& out);

// What the read commands read, on either backend: SQLite through a read-only
// store_reader, PostgreSQL through a pg_store of its own (reads only).
class read_source {
public:
  virtual ~read_source() = default;
  virtual caf::expected<session_record> session(const std::string& session_id) = 0;
  virtual caf::expected<std::vector<session_record>> sessions(const session_filter& f) = 0;
  virtual caf::expected<session_stats> stats(const std::string& session_id) = 0;
  virtual caf::expected<std::vector<message>> live_context(const std::string& session_id) = 0;
  virtual caf::expected<std::vector<checkpoint_record>>
  checkpoints(const std::string& session_id) = 0;
  // Every row with first_id <= id <= last_id, any state (message_store::range).
  virtual caf::expected<std::vector<message>> range(const std::string& session_id,
                                                    int64_t first_id, int64_t last_id) = 0;
  // The newest `limit` rows of the compaction log, oldest first (store/compaction_log.hpp).
  virtual caf::expected<std::vector<compaction_log_entry>>
  compaction_log(const std::string& session_id, int64_t limit) = 0;
  virtual caf::expected<int64_t> export_jsonl(const std::string& session_id,
                                              std::ostream& out) = 0;
  virtual caf::expected<std::vector<fact_record>> query_facts(const fact_query& q) = 0;
  // Where the rows are, for messages: the file, or "the PostgreSQL database".
  virtual std::string where() const = 0;
};

// Opens the database of `cfg` for reading: the SQLite file read-only (a missing
// file is bad input), or the PostgreSQL database of database.url / url_file.
maybe_failure open_reader(const app_config& cfg, std::unique_ptr<read_source>& out);

// Opens the database of `cfg` for the facts writes (SQLite: takes the file's writer
// lock, so it fails with storage_locked beside a running daemon; a missing file is
// bad input). On PostgreSQL it does not take the daemon's writer lock
// (pg_store::lock_as_only_writer): facts writes serialise per key on their own.
maybe_failure open_writer(const app_config& cfg, std::unique_ptr<message_store>& out);

// The session SESSION names: the newest session stored under that key in the namespace
// of `named_user` (--user; policies/key_namespace.hpp), else of `default_user`, else under
// the key as written (a session without a user), else the session with that id (ended
// sessions stay readable); without --user, last the key in whichever namespace holds it
// when only one user does (several: bad input asking for --user). Unknown: bad input.
maybe_failure find_session(read_source& reader, const std::string& key_or_id,
                           const std::string& named_user, const std::string& default_user,
                           session_record& out);

} // namespace mneme::cli
