// `mneme facts [QUERY] [--user U] [--limit N] [--include-inactive] [--json]`: a user's
// facts (SPEC §7 semantic memory, docs/memory.md), newest first, or those matching
// QUERY (the recall syntax); `mneme facts set KEY VALUE [--source SESSION]` adds or
// replaces one; `mneme facts rm KEY` retires it as a tombstone (nothing is deleted).
// On a database file: reads through a read-only connection, writes through the
// store's own writer (store/facts.hpp), which refuses with storage_locked while a
// daemon holds the file (one writer per file): then use --server, the daemon's
// /v1/users/{user}/facts routes. Prints a table (key, value, updated, source) or one
// line per change; with --json the API's documents ({"facts":[..]}, or the fact record).
//
// Decisions where the SPEC is silent: --user defaults to gateway.default_user of the
// configuration (the daemon's default is not asked for); the database file must exist
// (set does not create one); facts output has no colour (no matches to highlight), so
// it is the same on a terminal and in a pipe; a QUERY that is a subcommand's name
// ("set", "rm") is given after `--`.
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "apps/common/api/json_codec.hpp"
#include "apps/common/cli/daemon_client.hpp"
#include "apps/common/cli/data_source.hpp"
#include "apps/common/cli/text_output.hpp"
#include "apps/mneme/command_registry.hpp"
#include "store/facts.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace mneme::cli {

namespace {

struct facts_options {
  source_options source;
  std::string user;           // empty = gateway.default_user
  std::string query;          // list / search
  int64_t limit = 50;
  bool include_inactive = false;
  std::string key;            // set / rm
  std::string value;          // set
  std::string source_session; // set --source
};

enum class facts_action { list, set, remove };

const char* name_of(facts_action a) {
  switch (a) {
    case facts_action::list: return "facts";
    case facts_action::set: return "facts set";
    case facts_action::remove: return "facts rm";
  }
  return "facts";
}

time_ms now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

maybe_failure facts_file(facts_action action, const facts_options& opt, const app_config& cfg,
                         const std::string& user, api::json& out) {
  if (action == facts_action::list) {
    std::unique_ptr<read_source> reader;
    if (auto f = open_reader(cfg, reader))
      return f;
    fact_query q;
    q.user_id = user;
    q.text = opt.query;
    q.limit = opt.limit;
    q.include_inactive = opt.include_inactive;
    auto found = reader->query_facts(q);
    if (!found)
      return failure_of(found.error(), "facts");
    out = {{"facts", api::to_json(*found)}};
    return std::nullopt;
  }
  std::unique_ptr<message_store> store;
  if (auto f = open_writer(cfg, store))
    return f;
  caf::expected<fact_record> done{caf::error{}};
  if (action == facts_action::set) {
    fact_record f;
    f.user_id = user;
    f.key = opt.key;
    f.value = opt.value;
    f.source_session = opt.source_session;
    done = store->put_fact(f, now_ms());
  } else {
    done = store->remove_fact(user, opt.key, now_ms());
  }
  if (!done)
    return failure_of(done.error(), name_of(action));
  out = api::to_json(*done);
  return std::nullopt;
}

maybe_failure facts_daemon(facts_action action, const facts_options& opt,
                           const std::string& user, api::json& out) {
  daemon_client client{opt.source.server, opt.source.token};
  auto base = "/v1/users/" + url_encode(user) + "/facts";
  switch (action) {
    case facts_action::list: {
      std::vector<std::pair<std::string, std::string>> q{
        {"limit", std::to_string(opt.limit)},
        {"include_inactive", opt.include_inactive ? "true" : "false"}};
      if (!opt.query.empty())
        q.emplace_back("q", opt.query);
      return client.get_json(base + query_string(q), out);
    }
    case facts_action::set: {
      api::json body{{"value", opt.value}};
      if (!opt.source_session.empty())
        body["source_session"] = opt.source_session;
      return client.put_json(base + "/" + url_encode(opt.key), body, out);
    }
    case facts_action::remove:
      return client.delete_json(base + "/" + url_encode(opt.key), out);
  }
  return failure::failed("unknown facts action");
}

std::string render_facts(const api::json& doc) {
  const auto& facts = doc.at("facts");
  if (facts.empty())
    return "no facts\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : facts) {
    auto state = f.value("state", std::string{"active"});
    rows.push_back({one_line(f.value("key", std::string{}), 40),
                    one_line(f.value("value", std::string{}), 80),
                    format_time(f.value("updated_at_ms", int64_t{0})),
                    f.value("source_session", std::string{}).empty()
                      ? std::string{"-"}
                      : f.value("source_session", std::string{}),
                    state});
  }
  return render_table({"KEY", "VALUE", "UPDATED", "SOURCE", "STATE"}, rows);
}

std::string render_change(facts_action action, const api::json& f) {
  auto key = one_line(f.value("key", std::string{}), 80);
  auto user = f.value("user_id", std::string{});
  if (action == facts_action::set)
    return fmt::format("{} = {}  (user {}, version #{})\n", key,
                       one_line(f.value("value", std::string{}), 80), user,
                       f.value("id", int64_t{0}));
  return fmt::format("removed {}  (user {}; kept as a tombstone, see --include-inactive)\n",
                     key, user);
}

int run_facts(facts_action action, const facts_options& opt) {
  auto name = name_of(action);
  if (opt.limit < 1 || opt.limit > fact_query_max_limit)
    return report_failure(name,
                          failure::input("--limit must be 1.."
                                         + std::to_string(fact_query_max_limit)));
  if (action != facts_action::list && opt.key.empty())
    return report_failure(name, failure::input("KEY is empty"));
  if (action == facts_action::set && opt.value.empty())
    return report_failure(name, failure::input("VALUE is empty"));
  app_config cfg;
  if (auto f = load_config(opt.source, cfg))
    return report_failure(name, *f);
  auto user = opt.user.empty() ? cfg.gateway.default_user : opt.user;
  api::json doc;
  auto f = opt.source.remote() ? facts_daemon(action, opt, user, doc)
                               : facts_file(action, opt, cfg, user, doc);
  if (f)
    return report_failure(name, *f);
  if (opt.source.json) {
    std::cout << api::dump_json(doc) << "\n";
    return exit_ok;
  }
  try {
    std::cout << (action == facts_action::list ? render_facts(doc) : render_change(action, doc));
  } catch (const api::json::exception& e) {
    return report_failure(name, failure::failed(std::string{"unexpected answer: "} + e.what()));
  }
  return exit_ok;
}

command_action setup_facts(CLI::App& cmd) {
  auto opt = std::make_shared<facts_options>();
  cmd.add_option("QUERY", opt->query, "only facts matching this (recall syntax)");
  cmd.add_option("--user", opt->user, "whose facts (default: gateway.default_user)");
  cmd.add_option("--limit", opt->limit, "at most N facts (1..1000, default 50)");
  cmd.add_flag("--include-inactive", opt->include_inactive,
               "also replaced and removed versions");
  add_source_options(cmd, opt->source);
  auto* set = cmd.add_subcommand("set", "add a fact or replace its value");
  set->add_option("KEY", opt->key, "the fact's key (1..256 bytes)")->required();
  set->add_option("VALUE", opt->value, "the fact's value (1..65536 bytes)")->required();
  set->add_option("--source", opt->source_session, "the session the fact came from");
  set->fallthrough();
  auto* rm = cmd.add_subcommand("rm", "retire a fact (kept as a tombstone)");
  rm->add_option("KEY", opt->key, "the fact's key")->required();
  rm->fallthrough();
  return [opt, set, rm] {
    auto action = set->parsed()  ? facts_action::set
                  : rm->parsed() ? facts_action::remove
                                 : facts_action::list;
    return run_facts(action, *opt);
  };
}

} // namespace

MNEME_COMMAND("facts", "a user's remembered facts: list, search, set, rm (kept as tombstones)",
              setup_facts);

} // namespace mneme::cli
