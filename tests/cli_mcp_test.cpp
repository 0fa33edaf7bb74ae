// `mneme mcp` run as a real program (MNEME_BINARY_DIR/mneme) beside `mneme serve` on a
// free port (apps/common/cli/mcp_bridge.hpp): newline-delimited JSON-RPC on its stdin
// forwarded to the daemon's POST /mcp, one answer line per request on its stdout and
// none for a notification, a line that is not JSON answered -32700, a token refused by
// the daemon answered with the request's id, and a daemon that cannot be reached
// answered -32603 for each request while the bridge keeps reading to the end (exit 0).
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(cli_mcp_test)

using namespace mneme;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Runs `mneme mcp` with `args`, its stdin the file of `lines` (one per line): the child
// inherits the test's standard input, which points at that file for the run.
testing::program_result run_bridge(const testing::temp_dir& dir, const std::vector<std::string>& args,
                                   const std::vector<std::string>& lines) {
  auto input = dir.file("stdin.jsonl");
  {
    std::ofstream f{input};
    for (const auto& l : lines)
      f << l << "\n";
  }
  int saved = ::dup(STDIN_FILENO);
  int fd = ::open(input.c_str(), O_RDONLY | O_CLOEXEC);
  BOOST_REQUIRE(saved >= 0 && fd >= 0);
  ::dup2(fd, STDIN_FILENO);
  ::close(fd);
  std::vector<std::string> all{"mcp"};
  all.insert(all.end(), args.begin(), args.end());
  auto r = testing::run_program("mneme", all, testing::stderr_mode::separate, 60s);
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  return r;
}

std::vector<json> answers_of(const std::string& out) {
  std::vector<json> lines;
  std::istringstream in{out};
  std::string line;
  while (std::getline(in, line)) {
    auto j = json::parse(line, nullptr, false);
    BOOST_REQUIRE_MESSAGE(!j.is_discarded(), "a line that is not JSON: " << line);
    lines.push_back(std::move(j));
  }
  return lines;
}

std::string request(int id, const std::string& method, const json& params = nullptr) {
  json m{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null())
    m["params"] = params;
  return m.dump();
}

} // namespace

BOOST_AUTO_TEST_CASE(the_bridge_forwards_each_line_and_answers_each_request) {
  testing::temp_dir dir{"mneme-mcp-cli"};
  testing::mneme_daemon daemon{{"--db", dir.file("m.db")}, "", 60s};
  auto r = run_bridge(dir, {"--server", daemon.url()},
                      {request(1, "initialize", {{"protocolVersion", "2025-06-18"},
                                                 {"capabilities", json::object()},
                                                 {"clientInfo", {{"name", "t"}, {"version", "1"}}}}),
                       R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                       "",
                       request(2, "tools/list"),
                       "not json",
                       request(3, "tools/call", {{"name", "memory"},
                                                 {"arguments", {{"action", "set"}, {"key", "editor"},
                                                                {"value", "helix"}}}}),
                       request(4, "tools/call", {{"name", "memory"}, {"arguments", {{"action", "list"}}}})});
  BOOST_TEST(r.code == 0, r.err);
  auto a = answers_of(r.out);
  BOOST_REQUIRE_MESSAGE(a.size() == 5u, r.out);
  BOOST_TEST(a[0]["id"] == 1);
  BOOST_TEST(a[0]["result"]["protocolVersion"] == "2025-06-18");
  BOOST_TEST(a[1]["id"] == 2);
  BOOST_TEST(a[1]["result"]["tools"].size() == 5u);
  BOOST_TEST(a[2]["id"].is_null());
  BOOST_TEST(a[2]["error"]["code"] == -32700);
  BOOST_TEST(a[3]["id"] == 3);
  BOOST_TEST(a[3]["result"]["isError"] == false);
  BOOST_TEST(a[4]["id"] == 4);
  auto facts = json::parse(a[4]["result"]["content"][0]["text"].get<std::string>());
  BOOST_REQUIRE(facts["facts"].size() == 1u);
  BOOST_TEST(facts["facts"][0]["value"] == "helix");
}

BOOST_AUTO_TEST_CASE(a_refused_token_is_answered_with_the_requests_id) {
  testing::temp_dir dir{"mneme-mcp-cli"};
  auto config = dir.file("mneme.yaml");
  std::ofstream{config} << "gateway:\n  auth_token: right-token\n";
  testing::mneme_daemon daemon{{"--config", config, "--db", dir.file("m.db")}, "", 60s};
  auto r = run_bridge(dir, {"--server", daemon.url(), "--token", "wrong-token"},
                      {request(7, "ping"), R"({"jsonrpc":"2.0","method":"notifications/initialized"})"});
  BOOST_TEST(r.code == 0, r.err);
  auto a = answers_of(r.out);
  BOOST_REQUIRE_MESSAGE(a.size() == 1u, r.out);
  BOOST_TEST(a[0]["id"] == 7);
  BOOST_TEST(a[0]["error"]["message"].get<std::string>().find("unauthorized") == 0u, a[0].dump());
  BOOST_TEST(r.err.find("HTTP 401") != std::string::npos, r.err);
  auto ok = run_bridge(dir, {"--server", daemon.url(), "--token", "right-token"}, {request(8, "ping")});
  auto b = answers_of(ok.out);
  BOOST_REQUIRE_MESSAGE(b.size() == 1u, ok.out);
  BOOST_TEST(b[0]["result"] == json::object());
}

BOOST_AUTO_TEST_CASE(an_unreachable_daemon_is_an_error_per_request_and_the_bridge_goes_on) {
  testing::temp_dir dir{"mneme-mcp-cli"};
  auto r = run_bridge(dir, {"--server", "http://127.0.0.1:1"},
                      {request(1, "ping"), R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                       request(2, "tools/list")});
  BOOST_TEST(r.code == 0, r.err);
  auto a = answers_of(r.out);
  BOOST_REQUIRE_MESSAGE(a.size() == 2u, r.out);
  for (int i = 0; i < 2; ++i) {
    BOOST_TEST(a[i]["id"] == i + 1);
    BOOST_TEST(a[i]["error"]["code"] == -32603);
    BOOST_TEST(a[i]["error"]["message"].get<std::string>().find("cannot reach the mneme daemon")
               != std::string::npos);
  }
  BOOST_TEST(testing::run_program("mneme", {"mcp"}).code == 2); // --server is required
}

BOOST_AUTO_TEST_SUITE_END()
