// Where a `mneme` command reads from: a database file (`--db FILE`, else
// `database.path` of `--config FILE`, else ./mneme.db), or a running daemon
// (`--server URL [--token T]`). Declares the shared options on a CLI11 command and
// resolves them. Reads go through read-only connections, so they work beside a running
// daemon. Thread: the program's main thread.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "apps/common/config/app_config.hpp"
#include "apps/common/cli/cli_failure.hpp"
#include "messages/transcript.hpp"
#include "store/store_reader.hpp"

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

// Opens the database file of `cfg` read-only. A missing file is bad input.
maybe_failure open_reader(const app_config& cfg, std::unique_ptr<store_reader>& out);

// The session SESSION names: the newest session stored under that key, else the
// session with that id (ended sessions stay readable). Unknown: bad input.
maybe_failure find_session(store_reader& reader, const std::string& key_or_id,
                           session_record& out);

} // namespace mneme::cli
