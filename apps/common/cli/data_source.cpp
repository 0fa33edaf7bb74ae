// The data source options of CLI commands; see data_source.hpp.
#include "apps/common/cli/data_source.hpp"

#include <filesystem>

#include "messages/errc.hpp"

namespace mneme::cli {

void add_source_options(CLI::App& cmd, source_options& opt, bool with_json) {
  cmd.add_option("--db", opt.db, "database file (default: database.path of --config, "
                                 "else ./mneme.db)");
  cmd.add_option("--config", opt.config, "configuration file (YAML)");
  cmd.add_option("--server", opt.server,
                 "talk to a running daemon instead of a file, e.g. http://127.0.0.1:8077");
  cmd.add_option("--token", opt.token, "bearer token of the daemon (gateway.auth_token)");
  if (with_json)
    cmd.add_flag("--json", opt.json, "print the JSON document the HTTP API answers");
}

maybe_failure load_config(const source_options& opt, app_config& out) {
  out = app_config{};
  if (!opt.config.empty()) {
    std::error_code ec;
    if (!std::filesystem::exists(opt.config, ec))
      return failure::input("configuration file " + opt.config + " does not exist");
    auto loaded = load_config_file(opt.config);
    if (!loaded.ok())
      return failure::input("configuration " + opt.config + " is invalid:\n"
                            + loaded.describe_errors());
    out = *loaded.config;
  }
  if (!opt.db.empty())
    out.database.path = opt.db;
  else if (out.database.path.empty())
    out.database.path = default_db_file;
  return std::nullopt;
}

maybe_failure open_reader(const app_config& cfg, std::unique_ptr<store_reader>& out) {
  const auto& path = cfg.database.path;
  if (path == ":memory:")
    return failure::input("database.path is :memory:, which no other process can read");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return failure::input("database file " + path + " does not exist");
  auto reader = store_reader::open(cfg.database);
  if (!reader)
    return failure_of(reader.error(), "cannot open database " + path);
  out = std::move(*reader);
  return std::nullopt;
}

maybe_failure find_session(store_reader& reader, const std::string& key_or_id,
                           session_record& out) {
  if (key_or_id.empty())
    return failure::input("SESSION is empty: give a session key or a session id");
  session_filter by_key;
  by_key.session_key = key_or_id;
  by_key.limit = 1;
  auto listed = reader.sessions(by_key);
  if (!listed)
    return failure_of(listed.error(), "cannot list sessions");
  if (!listed->empty()) {
    out = listed->front();
    return std::nullopt;
  }
  auto by_id = reader.session(key_or_id);
  if (by_id) {
    out = *by_id;
    return std::nullopt;
  }
  if (by_id.error().category() != caf::atom("mneme")
      || static_cast<errc>(by_id.error().code()) != errc::not_found)
    return failure_of(by_id.error(), "cannot read session " + key_or_id);
  return failure::input("unknown session " + key_or_id
                        + ": no session has this key or id in " + reader.connection().path());
}

} // namespace mneme::cli
