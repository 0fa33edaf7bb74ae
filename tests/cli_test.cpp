// The `mneme` command line (search, sessions, show, compactions, compact, export) run as a real
// program (MNEME_BINARY_DIR/mneme) on a database file the test prepares through the
// runtime and the in-process fake LLM: three sessions of two users, English and
// Chinese text, one session compacted so it has archived rows. Every command with and
// without --json (the JSON parsed, the plain output piped and so free of escape codes),
// the errors (unknown session, missing file, unreachable daemon) with their exit codes,
// and the --server path against a stub of the daemon's HTTP API that records what the
// client asked.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "actors/runtime.hpp"
#include "apps/common/api/json_codec.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "policies/key_namespace.hpp"
#include "policies/token_estimate.hpp"
#include "testing/loopback_port.hpp"
#include "tests/child_program.hpp"
#include "tests/store_test_util.hpp"
#include "tests/print_vocabulary.hpp"

BOOST_AUTO_TEST_SUITE(cli_test)

using namespace mneme;
using mneme::testing::err_of;
using namespace std::chrono_literals;
using json = nlohmann::json;
namespace bdata = boost::unit_test::data;

namespace {

// Runs MNEME_BINARY_DIR/mneme with `args`, its stdout piped (so not a terminal) and its
// stderr captured apart.
testing::program_result run(const std::vector<std::string>& args) {
  return testing::run_program("mneme", args);
}

json parse(const testing::program_result& r) {
  BOOST_TEST_INFO("stdout: " << r.out << " stderr: " << r.err);
  BOOST_REQUIRE_EQUAL(r.code, 0);
  auto j = json::parse(r.out, nullptr, false);
  BOOST_REQUIRE_MESSAGE(!j.is_discarded(), "not one JSON document: " + r.out);
  return j;
}

bool has_escape(const std::string& s) {
  return s.find('\x1b') != std::string::npos;
}

llm::llm_pool_config pool(const std::string& base_url, llm_purpose purpose) {
  llm::llm_pool_config c;
  c.name = purpose == llm_purpose::chat ? "chat" : "summary";
  c.endpoint.url = llm::chat_completions_url(base_url);
  c.endpoint.model = purpose == llm_purpose::chat ? "fake-chat" : "fake-summary";
  c.endpoint.purpose = purpose;
  c.endpoint.idle_timeout = 5s;
  c.endpoint.total_timeout = 10s;
  return c;
}

// The database every test reads: built once, through the runtime, then closed.
//   alpha (alice): 60 English rows + "kubernetes rollout" rows, compacted (T12) so its
//                  middle is archived; row 10 says "zeppelin maintenance window" and
//                  is archived.
//   beta  (alice): Chinese rows about a database migration.
//   gamma (bob):   English rows.
//   delta (bob):   60 rows, left for the compact tests (run on a copy of the file).
struct prepared_db {
  testing::temp_dir dir{"mneme-cli"};
  std::string path;
  std::map<std::string, std::string> ids; // key -> session id
  int64_t archived_id = 0;                // the archived "zeppelin" row
  int64_t delta_middle_id = 0;            // a live row in the middle of delta

  prepared_db() {
    path = dir.file("cli.db");
    caf::actor_system_config cfg;
    register_mneme_types(cfg);
    cfg.set("logger.verbosity", caf::atom("quiet"));
    caf::actor_system sys{cfg};
    fakellm::fake_llm_server server;
    BOOST_REQUIRE(server.start());
    runtime_config rc;
    rc.database.path = path;
    rc.database.synchronous_full = false;
    rc.chat = pool(server.base_url(), llm_purpose::chat);
    rc.summarizer = pool(server.base_url(), llm_purpose::summary);
    rc.model.name = "fake-chat";
    rc.gateway.idle_evict_seconds = 0;
    auto started = runtime::start(sys, rc);
    BOOST_REQUIRE_MESSAGE(started, err_of(started));
    auto& rt = **started;
    caf::scoped_actor self{sys};
    auto seed = [&](const std::string& key, const std::string& user,
                    const std::vector<std::string>& texts) {
      session_record rec;
      rec.user_id = user;
      rec.session_key = stored_key(user, key); // in its user's namespace, as the API stores it
      rec.model = "fake-chat";
      self->request(rt.storage(), 30s, st_new_session_atom_v, rec, int64_t{system_clock_ms()})
        .receive([&](session_record& r) { ids[key] = r.id; },
                 [&](caf::error& e) { BOOST_FAIL(render_error(e)); });
      std::vector<message> rows;
      for (size_t i = 0; i < texts.size(); ++i) {
        message m;
        m.session_id = ids[key];
        m.role = i == 0 ? msg_role::system : i % 2 == 1 ? msg_role::user : msg_role::assistant;
        m.content = texts[i];
        m.timestamp_ms = system_clock_ms();
        m.token_estimate = estimate_message_tokens(m);
        rows.push_back(m);
      }
      std::vector<int64_t> out;
      self->request(rt.storage(), 30s, st_append_atom_v, rows)
        .receive([&](message_ids& r) { out = r.ids; },
                 [&](caf::error& e) { BOOST_FAIL(render_error(e)); });
      return out;
    };
    auto long_session = [](const std::string& topic) {
      std::vector<std::string> t{"You are a helpful assistant."};
      for (int i = 1; i <= 60; ++i)
        t.push_back("message " + std::to_string(i) + " about " + topic + " "
                    + std::string(300, 'x'));
      return t;
    };
    auto alpha = long_session("the kubernetes rollout");
    alpha[10] = "the zeppelin maintenance window moves to friday";
    auto alpha_ids = seed("alpha", "alice", alpha);
    archived_id = alpha_ids[10];
    seed("beta", "alice", {"你是一个助手。", "我们明天讨论数据库迁移方案。",
                           "好的，数据库迁移方案需要先备份。"});
    seed("gamma", "bob", {"You are a helpful assistant.", "Remind me to water the plants.",
                          "I will remind you to water the plants."});
    auto delta_ids = seed("delta", "bob", long_session("the quarterly budget"));
    delta_middle_id = delta_ids[30];
    self->request(rt.gateway(), 60s, gw_command_atom_v, stored_key("alice", "alpha"),
                  trigger::t12_manual_session, std::string{})
      .receive([&](compaction_report& r) { BOOST_REQUIRE(r.committed); },
               [&](caf::error& e) { BOOST_FAIL(render_error(e)); });
    rt.stop();
    server.stop();
  }

  // A copy of the database for tests that write.
  std::string copy(const std::string& name) const {
    auto to = dir.file(name + ".db");
    std::filesystem::copy_file(path, to, std::filesystem::copy_options::overwrite_existing);
    return to;
  }
};

const prepared_db& db() {
  static prepared_db instance;
  return instance;
}

} // namespace

BOOST_AUTO_TEST_SUITE(on_a_database_file)

BOOST_AUTO_TEST_CASE(sessions_lists_every_stored_session_and_filters_by_user) {
  auto all = parse(run({"sessions", "--db", db().path, "--json"}));
  BOOST_TEST(all["sessions"].size() == 4u);
  auto alice = parse(run({"sessions", "--db", db().path, "--user", "alice", "--json"}));
  std::set<std::string> keys;
  for (auto& s : alice["sessions"])
    keys.insert(s["session_key"].get<std::string>());
  BOOST_TEST((keys == std::set<std::string>{"alpha", "beta"}));
  auto one =
    parse(run({"sessions", "--db", db().path, "--key", "gamma", "--user", "bob", "--json"}));
  BOOST_REQUIRE(one["sessions"].size() == 1u);
  BOOST_TEST(one["sessions"][0]["id"] == db().ids.at("gamma"));
  BOOST_TEST(one["sessions"][0]["user_id"] == "bob");
}

BOOST_AUTO_TEST_CASE(sessions_prints_a_table_without_escape_codes_when_piped) {
  auto r = run({"sessions", "--db", db().path});
  BOOST_REQUIRE_EQUAL(r.code, 0);
  BOOST_TEST(r.out.rfind("SESSION", 0) == 0u);
  for (auto& [key, id] : db().ids)
    BOOST_TEST(r.out.find(id) != std::string::npos);
  BOOST_TEST(r.out.find("4 sessions") != std::string::npos);
  BOOST_TEST(!has_escape(r.out));
}

// (query, user, expected session key, expected hit kind)
const std::vector<std::tuple<std::string, std::string, std::string, std::string>> searches{
  {"kubernetes rollout", "alice", "alpha", "message"},
  {"数据库迁移", "alice", "beta", "message"},
  {"water the plants", "bob", "gamma", "message"},
  {"zeppelin maintenance", "alice", "alpha", "archived"},
};

BOOST_DATA_TEST_CASE(search_finds_the_session_of_english_chinese_and_archived_text,
                     bdata::make(searches), query, user, key, kind) {
  auto r = parse(run({"search", query, "--user", user, "--db", db().path, "--json"}));
  BOOST_REQUIRE(!r["hits"].empty());
  auto& hit = r["hits"][0];
  BOOST_TEST(hit["session_id"] == db().ids.at(key));
  BOOST_TEST(hit["kind"] == kind);
  std::string snippet = hit["snippet"];
  BOOST_TEST(snippet.find(">>>") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(search_never_crosses_users) {
  auto r = parse(run({"search", "kubernetes rollout", "--user", "bob", "--db", db().path,
                      "--json"}));
  for (auto& h : r["hits"])
    BOOST_TEST(h["session_id"] != db().ids.at("alpha"));
}

BOOST_AUTO_TEST_CASE(search_piped_keeps_the_match_marks_and_prints_no_escape_codes) {
  auto r = run({"search", "zeppelin", "--user", "alice", "--db", db().path});
  BOOST_REQUIRE_EQUAL(r.code, 0);
  BOOST_TEST(r.out.find(db().ids.at("alpha")) != std::string::npos);
  BOOST_TEST(r.out.find(">>>zeppelin<<<") != std::string::npos);
  BOOST_TEST(r.out.find("archived") != std::string::npos);
  BOOST_TEST(!has_escape(r.out));
}

BOOST_AUTO_TEST_CASE(search_with_nothing_found_succeeds_and_says_so) {
  auto r = run({"search", "nonexistentword", "--user", "alice", "--db", db().path});
  BOOST_TEST(r.code == 0);
  BOOST_TEST(r.out == "no session matched\n");
}

BOOST_AUTO_TEST_CASE(show_by_key_and_by_id_prints_the_same_session_document) {
  auto by_key = parse(run({"show", "alpha", "--db", db().path, "--json"}));
  auto by_id = parse(run({"show", db().ids.at("alpha"), "--db", db().path, "--json"}));
  BOOST_TEST(by_key == by_id);
  BOOST_TEST(by_key["session"]["id"] == db().ids.at("alpha"));
  BOOST_TEST(by_key["session"]["triggers"]["compaction_count"] == 1);
  auto& live = by_key["live"];
  BOOST_TEST(by_key["live_messages"] == live.size());
  BOOST_TEST(by_key["stats"]["live_rows"] == live.size());
  BOOST_TEST(by_key["stats"]["archived_rows"].get<int64_t>() > 0);
  BOOST_TEST(by_key["stats"]["summary_rows"] == 1);
  int summaries = 0;
  for (auto& m : live) {
    BOOST_TEST(m["state"] == "live");
    summaries += m["is_summary"].get<bool>() ? 1 : 0;
  }
  BOOST_TEST(summaries == 1);
  BOOST_TEST(by_key["checkpoints"].is_array());
  BOOST_TEST(by_key["attempts"] == (json{{"used", 0}, {"max", 3}}));
}

BOOST_AUTO_TEST_CASE(compactions_lists_the_logged_compaction_from_the_file) {
  auto doc = parse(run({"compactions", "alpha", "--db", db().path, "--json"}));
  BOOST_TEST(doc["session_id"] == db().ids.at("alpha"));
  BOOST_REQUIRE(doc["compactions"].size() == 1u);
  const auto& c = doc["compactions"][0];
  BOOST_TEST(c["logged"] == true);
  BOOST_TEST(c["outcome"] == "committed");
  BOOST_TEST(c["trigger"] == "T12_manual_session");
  BOOST_TEST(c["origin"] == "manual");
  BOOST_TEST(c["tokens_before"].get<int64_t>() > c["tokens_after"].get<int64_t>());
  BOOST_REQUIRE(doc["attempts"].size() == 1u);
  BOOST_TEST(doc["attempts"][0]["summary_id"] == c["id"]);
  auto none = parse(run({"compactions", "beta", "--db", db().path, "--json"}));
  BOOST_TEST(none["compactions"].empty());
  BOOST_TEST(none["attempts"].empty());
  auto text = run({"compactions", "alpha", "--db", db().path});
  BOOST_REQUIRE_EQUAL(text.code, 0);
  BOOST_TEST(text.out.find("T12_manual_session") != std::string::npos, text.out);
  BOOST_TEST(text.out.find("attempts\n") != std::string::npos, text.out);
  BOOST_TEST(!has_escape(text.out));
}

BOOST_AUTO_TEST_CASE(show_prints_record_counts_and_live_rows_as_text) {
  auto r = run({"show", "beta", "--db", db().path});
  BOOST_REQUIRE_EQUAL(r.code, 0);
  BOOST_TEST(r.out.find("session      " + db().ids.at("beta")) != std::string::npos);
  BOOST_TEST(r.out.find("rows         3 live, 0 archived, 0 rolled back, 0 summaries")
             != std::string::npos);
  BOOST_TEST(r.out.find("我们明天讨论数据库迁移方案。") != std::string::npos);
  // No turn runs in a file: nothing spent, the default budget of 3 (SPEC §5.3).
  BOOST_TEST(r.out.find("attempts     0 of 3 spent (current or last turn)\n")
             != std::string::npos, r.out);
  BOOST_TEST(!has_escape(r.out));
}

BOOST_AUTO_TEST_CASE(export_writes_every_row_with_its_state_one_json_a_line) {
  auto shown = parse(run({"show", "alpha", "--db", db().path, "--json"}));
  auto r = run({"export", "alpha", "--db", db().path});
  BOOST_REQUIRE_EQUAL(r.code, 0);
  std::istringstream in{r.out};
  std::string line;
  int64_t lines = 0, archived = 0;
  bool saw_archived_zeppelin = false;
  while (std::getline(in, line)) {
    auto j = json::parse(line);
    ++lines;
    BOOST_TEST(j["session_id"] == db().ids.at("alpha"));
    if (j["state"] == "archived") {
      ++archived;
      saw_archived_zeppelin |= j["id"] == db().archived_id;
    }
  }
  auto& st = shown["stats"];
  BOOST_TEST(lines == st["live_rows"].get<int64_t>() + st["archived_rows"].get<int64_t>()
                        + st["rolled_back_rows"].get<int64_t>());
  BOOST_TEST(archived == st["archived_rows"].get<int64_t>());
  BOOST_TEST(saw_archived_zeppelin);

  auto file = db().dir.file("alpha.jsonl");
  auto to_file = run({"export", "alpha", "--db", db().path, "--out", file});
  BOOST_REQUIRE_EQUAL(to_file.code, 0);
  BOOST_TEST(to_file.out.empty());
  std::ifstream f{file};
  std::stringstream ss;
  ss << f.rdbuf();
  BOOST_TEST(ss.str() == r.out);
}

BOOST_AUTO_TEST_CASE(compact_a_whole_session_commits_a_t12_summary_in_the_file) {
  auto file = db().copy("compact-whole");
  auto r = parse(run({"compact", "delta", "--db", file, "--focus", "the budget", "--json"}));
  BOOST_TEST(r["trigger"] == "T12_manual_session");
  BOOST_TEST(r["committed"] == true);
  BOOST_TEST(r["archived_rows"].get<int64_t>() > 0);
  auto shown = parse(run({"show", "delta", "--db", file, "--json"}));
  BOOST_TEST(shown["session"]["triggers"]["compaction_count"] == 1);
  BOOST_TEST(shown["stats"]["archived_rows"] == r["archived_rows"]);
  BOOST_TEST(shown["live_messages"] == r["messages_after"]);
}

BOOST_AUTO_TEST_CASE(compact_around_a_message_archives_only_its_neighbourhood) {
  auto file = db().copy("compact-local");
  auto r = run({"compact", "delta", "--db", file, "--around",
                std::to_string(db().delta_middle_id), "--radius", "2"});
  BOOST_REQUIRE_EQUAL(r.code, 0);
  BOOST_TEST(r.out.find("compacted (T13_manual_local): 5 rows archived") != std::string::npos,
             r.out);
  auto shown = parse(run({"show", "delta", "--db", file, "--json"}));
  BOOST_TEST(shown["stats"]["archived_rows"] == 5);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(errors)

// (arguments, exit code, words stderr must contain)
const std::vector<std::tuple<std::vector<std::string>, int, std::string>> failures{
  {{"show", "no-such-session"}, 2, "unknown session no-such-session"},
  {{"export", "no-such-session"}, 2, "unknown session no-such-session"},
  {{"compactions", "no-such-session"}, 2, "unknown session no-such-session"},
  {{"compact", "no-such-session"}, 2, "unknown session no-such-session"},
  {{"search", "x", "--limit", "0"}, 2, "--limit must be at least 1"},
  {{"search", "x", "--limit", "-3"}, 2, "--limit must be at least 1"},
  {{"compact", "alpha", "--around", "5", "--focus", "f"}, 2, "--focus applies"},
};

BOOST_DATA_TEST_CASE(bad_input_exits_2_and_names_what_was_wrong, bdata::make(failures), args,
                     code, words) {
  auto full = args;
  full.push_back("--db");
  full.push_back(db().path);
  auto r = run(full);
  BOOST_TEST(r.code == code);
  BOOST_TEST(r.err.find(words) != std::string::npos, r.err);
  BOOST_TEST(r.out.empty());
}

BOOST_DATA_TEST_CASE(a_missing_database_file_exits_2_for_every_command,
                     bdata::make({"search", "sessions", "show", "compact", "export"}), cmd) {
  std::vector<std::string> args{cmd};
  if (std::string{cmd} != "sessions")
    args.push_back("alpha");
  args.push_back("--db");
  args.push_back("/nonexistent/dir/none.db");
  auto r = run(args);
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.err.find("database file /nonexistent/dir/none.db does not exist")
             != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(an_unreachable_daemon_exits_1_and_says_where_it_looked) {
  // A port that was free a moment ago: bound without listen() and closed, so a
  // connection to it is refused at once (a bound httplib::Server that never ran
  // keeps its listening socket open and the client would wait for its read timeout).
  int port = mneme::testing::free_loopback_port();
  auto url = "http://127.0.0.1:" + std::to_string(port);
  auto r = run({"sessions", "--server", url});
  BOOST_TEST(r.code == 1);
  BOOST_TEST(r.err.find("cannot reach the mneme daemon at " + url) != std::string::npos, r.err);
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// A stand-in for `mneme serve` that answers the contract's JSON and records requests.
struct daemon_stub {
  httplib::Server http;
  std::thread thread;
  int port = 0;
  std::mutex mutex;
  std::vector<std::string> requests;   // "METHOD path?query body"
  json search_answer;
  json held_answer;   // GET /v1/sessions/held: a session in the middle of spending attempts

  daemon_stub() {
    session_snapshot held;
    held.record.id = "s-held";
    held.record.session_key = "held";
    held.attempts_used = 2;
    held.max_attempts = 5;
    held_answer = api::to_json(held);
    recall_result rr;
    recall_hit h;
    h.hit.id = 7;
    h.hit.session_id = "s-remote";
    h.hit.role = msg_role::user;
    h.hit.content = "the zeppelin hangar";
    h.kind = recall_hit_kind::message;
    h.route = "unicode61";
    h.snippet = "the >>>zeppelin<<< hangar";
    rr.hits.push_back(h);
    rr.routes_tried = {"unicode61"};
    search_answer = api::to_json(rr);
    auto authorized = [](const httplib::Request& req, httplib::Response& res) {
      if (req.get_header_value("Authorization") == "Bearer secret")
        return true;
      res.status = 401;
      res.set_content(api::dump_json(api::error_json("unauthorized", "bad token")),
                      "application/json");
      return false;
    };
    auto record = [this](const httplib::Request& req) {
      std::lock_guard<std::mutex> lock{mutex};
      std::string query;
      for (auto& [k, v] : req.params)
        query += (query.empty() ? "?" : "&") + k + "=" + v;
      requests.push_back(req.method + " " + req.path + query + " " + req.body);
    };
    http.Get("/v1/search", [=](const httplib::Request& req, httplib::Response& res) {
      record(req);
      if (authorized(req, res))
        res.set_content(api::dump_json(search_answer), "application/json");
    });
    http.Get(R"(/v1/sessions/([^/]+))", [=](const httplib::Request& req, httplib::Response& res) {
      record(req);
      if (!authorized(req, res))
        return;
      if (req.matches[1].str() == "held") {
        res.set_content(api::dump_json(held_answer), "application/json");
        return;
      }
      res.status = 404;
      res.set_content(api::dump_json(api::error_json("not_found", "unknown session "
                                                                    + req.matches[1].str())),
                      "application/json");
    });
    http.Post(R"(/v1/sessions/([^/]+)/compact)",
              [=](const httplib::Request& req, httplib::Response& res) {
                record(req);
                if (!authorized(req, res))
                  return;
                compaction_report r;
                r.by = trigger::t13_manual_local;
                r.committed = true;
                r.archived_rows = 5;
                r.summary_id = 99;
                res.set_content(api::dump_json(api::to_json(r)), "application/json");
              });
    port = http.bind_to_any_port("127.0.0.1");
    thread = std::thread{[this] { http.listen_after_bind(); }};
    while (!http.is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  ~daemon_stub() {
    http.stop();
    thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> lock{mutex};
    return requests;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(against_a_daemon, daemon_stub)

BOOST_AUTO_TEST_CASE(search_asks_the_search_endpoint_and_prints_its_document) {
  auto r = parse(run({"search", "zeppelin hangar", "--user", "carol", "--limit", "2",
                      "--server", url(), "--token", "secret", "--json"}));
  BOOST_TEST(r == search_answer);
  auto reqs = seen();
  BOOST_REQUIRE(reqs.size() == 1u);
  BOOST_TEST(reqs[0] == "GET /v1/search?include_inactive=false&limit=2&q=zeppelin hangar&user=carol ");
  auto plain = run({"search", "zeppelin", "--server", url(), "--token", "secret"});
  BOOST_TEST(plain.code == 0);
  BOOST_TEST(plain.out.find("session s-remote  #7  message") != std::string::npos, plain.out);
  BOOST_TEST(plain.out.find("the >>>zeppelin<<< hangar") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_wrong_token_exits_2_and_says_401) {
  auto r = run({"search", "x", "--server", url(), "--token", "wrong"});
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.err.find("401 unauthorized") != std::string::npos, r.err);
  BOOST_TEST(r.out.empty());
}

BOOST_AUTO_TEST_CASE(show_prints_the_attempts_the_daemon_reports) {
  auto r = run({"show", "held", "--server", url(), "--token", "secret"});
  BOOST_REQUIRE_MESSAGE(r.code == 0, r.err);
  BOOST_TEST(r.out.find("session      s-held\n") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("attempts     2 of 5 spent (current or last turn)\n")
             != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(an_unknown_session_on_the_daemon_exits_2_with_its_message) {
  auto r = run({"show", "no such key", "--server", url(), "--token", "secret"});
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.err.find("not_found: unknown session no such key") != std::string::npos, r.err);
  auto reqs = seen();
  BOOST_REQUIRE(reqs.size() == 1u);
  BOOST_TEST(reqs[0] == "GET /v1/sessions/no such key ");
}

BOOST_AUTO_TEST_CASE(compact_posts_the_around_id_and_radius_and_prints_the_report) {
  auto r = parse(run({"compact", "k1", "--around", "42", "--radius", "3", "--server", url(),
                      "--token", "secret", "--json"}));
  BOOST_TEST(r["trigger"] == "T13_manual_local");
  BOOST_TEST(r["summary_id"] == 99);
  auto reqs = seen();
  BOOST_REQUIRE(reqs.size() == 1u);
  auto sp = reqs[0].find(' ', reqs[0].find(' ') + 1);
  BOOST_TEST(reqs[0].substr(0, sp) == "POST /v1/sessions/k1/compact");
  auto body = json::parse(reqs[0].substr(sp + 1));
  BOOST_TEST(body["around_id"] == 42);
  BOOST_TEST(body["radius"] == 3);
  BOOST_TEST(!body.contains("focus"));
}

BOOST_AUTO_TEST_CASE(compact_of_a_whole_session_posts_no_radius_only_the_focus) {
  BOOST_TEST(run({"compact", "k1", "--server", url(), "--token", "secret", "--json"}).code == 0);
  BOOST_TEST(run({"compact", "k1", "--focus", "the budget", "--server", url(), "--token",
                  "secret", "--json"})
               .code == 0);
  auto reqs = seen();
  BOOST_REQUIRE(reqs.size() == 2u);
  auto body_of = [](const std::string& req) {
    return json::parse(req.substr(req.find(' ', req.find(' ') + 1) + 1));
  };
  BOOST_TEST(body_of(reqs[0]) == json::object());
  BOOST_TEST(body_of(reqs[1]) == (json{{"focus", "the budget"}}));
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// Fails the test unless this build's mneme has the serve command.
void require_serve_command() {
  auto help = run({"serve", "--help"});
  BOOST_REQUIRE_MESSAGE(help.code == 0, "`mneme serve --help` exited " << help.code
                                          << "; stderr: " << help.err);
}

} // namespace

BOOST_AUTO_TEST_CASE(against_mneme_serve_the_commands_print_what_they_print_for_the_file) {
  require_serve_command();
  auto file = db().copy("served");
  // Its log discarded; the bound on its start is for a hung daemon, not a timing check.
  testing::mneme_daemon daemon{{"--db", file}, "/dev/null", 60s};
  auto local = parse(run({"sessions", "--db", file, "--json"}));
  auto remote = parse(run({"sessions", "--server", daemon.url(), "--json"}));
  BOOST_TEST(remote == local);
  auto found = parse(run({"search", "kubernetes rollout", "--user", "alice", "--server",
                          daemon.url(), "--json"}));
  BOOST_REQUIRE(!found["hits"].empty());
  BOOST_TEST(found["hits"][0]["session_id"] == db().ids.at("alpha"));
  auto shown = parse(run({"show", "beta", "--user", "alice", "--server", daemon.url(), "--json"}));
  BOOST_TEST(shown["session"]["id"] == db().ids.at("beta"));
  BOOST_TEST(shown["live"].size() == 3u);
  auto exported = run({"export", "alpha", "--user", "alice", "--server", daemon.url()});
  BOOST_TEST(exported.code == 0);
  BOOST_TEST(exported.out == run({"export", "alpha", "--db", file}).out);
  // The daemon's API refuses a radius without around_id: whole-session compaction
  // through --server must not send one.
  auto compacted =
    parse(run({"compact", "delta", "--user", "bob", "--server", daemon.url(), "--json"}));
  BOOST_TEST(compacted["trigger"] == "T12_manual_session", compacted.dump());
  BOOST_TEST(compacted["committed"] == true, compacted.dump());
  auto missing = run({"show", "no-such-session", "--server", daemon.url()});
  BOOST_TEST(missing.code == 2);
  BOOST_TEST(missing.err.find("not_found") != std::string::npos, missing.err);
}

BOOST_AUTO_TEST_CASE(a_second_mneme_serve_on_a_busy_port_exits_1_saying_the_port_is_in_use) {
  require_serve_command();
  auto file = db().copy("busy-port-first");
  testing::mneme_daemon first{{"--db", file}, "/dev/null", 60s};
  auto port = std::to_string(first.port);
  auto other = db().copy("busy-port-second");
  // The bound ends a daemon that wrongly starts (it would serve until killed: code -1).
  auto second = testing::run_program("mneme", {"serve", "--port", port, "--db", other},
                                     testing::stderr_mode::separate, 60s);
  BOOST_TEST(second.code == 1, "stdout: " << second.out << " stderr: " << second.err);
  BOOST_TEST(second.out.find("listening") == std::string::npos, second.out);
  BOOST_TEST(second.err.find("port " + port + " is in use") != std::string::npos, second.err);
}

BOOST_AUTO_TEST_SUITE_END() // cli_test
