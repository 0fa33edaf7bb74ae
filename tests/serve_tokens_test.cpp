// The real `mneme serve` (MNEME_BINARY_DIR/mneme) with gateway.tokens_file: tokens made
// by `mneme token add` work with their scope; after `mneme token revoke` and SIGHUP the
// revoked token is 401 and a newly added one works; a tokens file broken by hand and
// SIGHUP keep the tokens in use (the error is logged); a bad tokens file at start and
// an unauthenticated non-loopback listener are refused with exit 2 and a message.
// Each reload is awaited on the daemon's log line, never on a delay.
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <httplib.h>

// Including a project header also links mneme_core (and cpp-httplib with it).
#include "apps/common/api/json_codec.hpp"
#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(serve_tokens_test)

using namespace mneme;
using namespace std::chrono_literals;

namespace {

struct served_tokens {
  testing::temp_dir dir{"mneme-serve-tokens"};
  std::string tokens = dir.file("tokens.list");
  std::string log = dir.file("daemon.log");

  std::string config(const std::string& extra = "") {
    auto path = dir.file("mneme.yaml");
    std::ofstream{path} << "model:\n  base_url: builtin\n"
                           "gateway:\n  tokens_file: " + tokens + "\n" + extra +
                           "logging:\n  level: info\n";
    return path;
  }

  std::string add(const std::string& scope_flag, const std::string& user = "") {
    std::vector<std::string> args{"token", "add", scope_flag};
    if (!user.empty())
      args.push_back(user);
    args.insert(args.end(), {"--file", tokens});
    auto r = testing::run_program("mneme", args);
    BOOST_REQUIRE_MESSAGE(r.code == 0, r.err);
    return r.out.substr(0, r.out.find('\n'));
  }

  void revoke(const std::string& id_or_token) {
    auto r = testing::run_program("mneme", {"token", "revoke", id_or_token, "--file", tokens});
    BOOST_REQUIRE_MESSAGE(r.code == 0, r.err);
  }

  // How often `text` occurs in the daemon's log so far.
  size_t log_count(const std::string& text) {
    std::ifstream in{log};
    std::stringstream ss;
    ss << in.rdbuf();
    auto all = ss.str();
    size_t n = 0;
    for (auto at = all.find(text); at != std::string::npos; at = all.find(text, at + 1))
      ++n;
    return n;
  }

  // SIGHUP, then waits (bounded) until the log holds one more line with `event`.
  void reload(testing::mneme_daemon& d, const std::string& event) {
    auto before = log_count(event);
    BOOST_REQUIRE(d.process.signal(SIGHUP));
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (log_count(event) == before && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(20ms);
    BOOST_REQUIRE_MESSAGE(log_count(event) > before, "no " << event << " after SIGHUP");
  }

  static int status(int port, const std::string& token, const std::string& path) {
    httplib::Client c{"127.0.0.1", port};
    c.set_read_timeout(30, 0);
    httplib::Headers h;
    if (!token.empty())
      h.emplace("Authorization", "Bearer " + token);
    auto r = c.Get(path.c_str(), h);
    BOOST_REQUIRE_MESSAGE(r, "no answer from the daemon");
    return r->status;
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(sighup_applies_revoked_and_added_tokens, served_tokens) {
  auto alice = add("--user", "alice");
  auto cfg = config();
  testing::mneme_daemon d{{"--config", cfg, "--db", dir.file("m.db")}, log};
  BOOST_TEST(status(d.port, alice, "/v1/sessions") == 200);
  BOOST_TEST(status(d.port, alice, "/v1/sessions?user=bob") == 403);
  BOOST_TEST(status(d.port, alice, "/metrics") == 403);
  BOOST_TEST(status(d.port, "", "/v1/sessions") == 401);

  revoke(alice.substr(6, 8));
  auto admin = add("--admin");
  BOOST_TEST(status(d.port, admin, "/metrics") == 401); // not before the reload
  reload(d, "event=tokens_reloaded");
  BOOST_TEST(status(d.port, alice, "/v1/sessions") == 401);
  BOOST_TEST(status(d.port, admin, "/metrics") == 200);

  // A hand-broken file: the reload fails, the tokens in use stay.
  std::ofstream{tokens, std::ios::app} << "broken line\n";
  reload(d, "event=tokens_reload_failed");
  BOOST_TEST(status(d.port, admin, "/metrics") == 200);
  BOOST_TEST(log_count(tokens + ":") >= 1u); // the error names the file and its line
  BOOST_TEST(d.process.stop(SIGTERM, 30s) == 0);
}

BOOST_FIXTURE_TEST_CASE(a_bad_tokens_file_at_start_is_exit_2_naming_the_line, served_tokens) {
  std::ofstream{tokens} << "# mine\n\nnot a line\n";
  auto r = testing::run_program("mneme", {"serve", "--port", "0", "--config", config(), "--db",
                                          dir.file("m.db")});
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.err.find(tokens + ":3: ") != std::string::npos, r.err);
}

BOOST_FIXTURE_TEST_CASE(no_credential_on_a_non_loopback_host_is_refused, served_tokens) {
  auto path = dir.file("open.yaml");
  std::ofstream{path} << "model:\n  base_url: builtin\n";
  auto r = testing::run_program("mneme", {"serve", "--host", "0.0.0.0", "--port", "0",
                                          "--config", path, "--db", dir.file("m.db")});
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.err.find("gateway.allow_unauthenticated") != std::string::npos, r.err);
  BOOST_TEST(r.out.find("listening") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END() // serve_tokens_test
