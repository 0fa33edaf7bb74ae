// The data source options of CLI commands; see data_source.hpp.
#include "apps/common/cli/data_source.hpp"

#include <filesystem>
#include <set>

#include "messages/errc.hpp"
#include "policies/client_text.hpp"
#include "policies/key_namespace.hpp"
#include "store/sqlite/sqlite_facts.hpp"
#include "store/pg/pg_store.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace mneme::cli {

namespace {

caf::expected<std::vector<fact_record>> facts_of(store_reader& r, const fact_query& q) {
  return query_facts(r.connection(), q);
}

caf::expected<std::vector<fact_record>> facts_of(pg_store& s, const fact_query& q) {
  return s.query_facts(q);
}

// The read commands' operations on a store_reader or a pg_store (same signatures).
template <class Store>
class read_source_of final : public read_source {
public:
  read_source_of(std::unique_ptr<Store> s, std::string where)
    : s_(std::move(s)), where_(std::move(where)) {}
  caf::expected<session_record> session(const std::string& id) override {
    return s_->session(id);
  }
  caf::expected<std::vector<session_record>> sessions(const session_filter& f) override {
    return s_->sessions(f);
  }
  caf::expected<session_stats> stats(const std::string& id) override { return s_->stats(id); }
  caf::expected<std::vector<message>> live_context(const std::string& id) override {
    return s_->live_context(id);
  }
  caf::expected<std::vector<checkpoint_record>> checkpoints(const std::string& id) override {
    return s_->checkpoints(id);
  }
  caf::expected<std::vector<message>> range(const std::string& id, int64_t first,
                                            int64_t last) override {
    return s_->range(id, first, last);
  }
  caf::expected<std::vector<compaction_log_entry>> compaction_log(const std::string& id,
                                                                  int64_t limit) override {
    return s_->compaction_log(id, limit);
  }
  caf::expected<int64_t> export_jsonl(const std::string& id, std::ostream& out) override {
    return s_->export_jsonl(id, out);
  }
  caf::expected<std::vector<fact_record>> query_facts(const fact_query& q) override {
    return facts_of(*s_, q);
  }
  std::string where() const override { return where_; }

private:
  std::unique_ptr<Store> s_;
  std::string where_;
};

constexpr const char* pg_where = "the PostgreSQL database";

// A SQLite file that other processes can open: bad input otherwise.
maybe_failure require_file(const std::string& path) {
  if (path == ":memory:")
    return failure::input("database.path is :memory:, which no other process can read");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return failure::input("database file " + path + " does not exist");
  return std::nullopt;
}

} // namespace

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

maybe_failure open_reader(const app_config& cfg, std::unique_ptr<read_source>& out) {
  if (cfg.database.backend == store_backend::postgres) {
    // Never the URL in a message: it may hold a password.
    auto pg = pg_store::open(cfg.database);
    if (!pg)
      return failure_of(pg.error(), std::string{"cannot open "} + pg_where);
    out = std::make_unique<read_source_of<pg_store>>(std::move(*pg), pg_where);
    return std::nullopt;
  }
  const auto& path = cfg.database.path;
  if (auto f = require_file(path))
    return f;
  auto reader = store_reader::open(cfg.database);
  if (!reader)
    return failure_of(reader.error(), "cannot open database " + path);
  out = std::make_unique<read_source_of<store_reader>>(std::move(*reader), path);
  return std::nullopt;
}

maybe_failure open_writer(const app_config& cfg, std::unique_ptr<message_store>& out) {
  if (cfg.database.backend == store_backend::postgres) {
    auto pg = pg_store::open(cfg.database);
    if (!pg)
      return failure_of(pg.error(), std::string{"cannot open "} + pg_where);
    out = std::move(*pg);
    return std::nullopt;
  }
  if (auto f = require_file(cfg.database.path))
    return f;
  auto store = sqlite_store::open(cfg.database);
  if (!store)
    return failure_of(store.error(), "cannot open database " + cfg.database.path);
  out = std::move(*store);
  return std::nullopt;
}

namespace {

// The newest session under `key` in any namespace, when one user holds it.
maybe_failure find_in_any_namespace(read_source& reader, const std::string& key,
                                    session_record& out, bool& found) {
  session_filter all;
  all.limit = 100000;
  auto listed = reader.sessions(all);
  if (!listed)
    return failure_of(listed.error(), "cannot list sessions");
  std::set<std::string> users;
  for (const auto& s : *listed)
    if (visible_key(s.session_key) == key && users.insert(s.user_id).second && !found) {
      out = s; // newest first
      found = true;
    }
  if (users.size() > 1) {
    std::string names;
    for (const auto& u : users)
      names += (names.empty() ? "" : ", ") + u;
    return failure::input("the key " + key + " is held by several users (" + names
                          + "): name one with --user");
  }
  return std::nullopt;
}

} // namespace

maybe_failure find_session(read_source& reader, const std::string& key_or_id,
                           const std::string& named_user, const std::string& default_user,
                           session_record& out) {
  if (key_or_id.empty())
    return failure::input("SESSION is empty: give a session key or a session id");
  if (key_or_id.find(key_namespace_separator) != std::string::npos)
    return failure::input(key_refusal(key_or_id, session_key_max_bytes));
  const auto& user = named_user.empty() ? default_user : named_user;
  for (const auto& key : {stored_key(user, key_or_id), key_or_id}) {
    session_filter by_key;
    by_key.session_key = key;
    by_key.limit = 1;
    auto listed = reader.sessions(by_key);
    if (!listed)
      return failure_of(listed.error(), "cannot list sessions");
    if (!listed->empty()) {
      out = listed->front();
      return std::nullopt;
    }
  }
  auto by_id = reader.session(key_or_id);
  if (by_id) {
    out = *by_id;
    return std::nullopt;
  }
  if (by_id.error().category() != caf::atom("mneme")
      || static_cast<errc>(by_id.error().code()) != errc::not_found)
    return failure_of(by_id.error(), "cannot read session " + key_or_id);
  if (named_user.empty()) {
    bool found = false;
    if (auto f = find_in_any_namespace(reader, key_or_id, out, found))
      return f;
    if (found)
      return std::nullopt;
  }
  return failure::input("unknown session " + key_or_id
                        + ": no session has this key or id in " + reader.where());
}

} // namespace mneme::cli
