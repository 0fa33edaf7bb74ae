// `mneme facts` run as a real program (MNEME_BINARY_DIR/mneme): set, list, search
// (CJK included), rm as a tombstone, on a database file and through `mneme serve` on
// a free port; --json prints the daemon's documents, the plain output has no escape
// codes in a pipe; bad input exits 2 with a message naming it.
#define BOOST_TEST_MODULE cli_facts_test
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "store/sqlite_store.hpp"

using namespace mneme;
using json = nlohmann::json;
namespace bdata = boost::unit_test::data;

namespace {

const std::string mneme_bin = std::string{MNEME_BINARY_DIR} + "/mneme";

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return out + "'";
}

struct run_result {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `mneme ARGS...` with stdout piped (so not a terminal) and stderr captured.
run_result run(const std::vector<std::string>& args) {
  static int n = 0;
  auto err_file = std::filesystem::temp_directory_path()
                  / ("mneme-facts-test-" + std::to_string(::getpid()) + "-"
                     + std::to_string(++n));
  std::string cmd = shell_quote(mneme_bin);
  for (auto& a : args)
    cmd += " " + shell_quote(a);
  cmd += " 2>" + shell_quote(err_file.string());
  run_result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  BOOST_REQUIRE(p != nullptr);
  char buf[4096];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, p)) > 0)
    r.out.append(buf, got);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream ef{err_file};
  std::stringstream ss;
  ss << ef.rdbuf();
  r.err = ss.str();
  std::filesystem::remove(err_file);
  return r;
}

json parse(const run_result& r) {
  BOOST_TEST_INFO("stdout: " << r.out << " stderr: " << r.err);
  BOOST_REQUIRE_EQUAL(r.code, 0);
  auto j = json::parse(r.out, nullptr, false);
  BOOST_REQUIRE_MESSAGE(!j.is_discarded(), "not one JSON document: " + r.out);
  return j;
}

std::vector<std::string> keys_of(const json& doc) {
  std::vector<std::string> out;
  for (const auto& f : doc.at("facts"))
    out.push_back(f.at("key").get<std::string>());
  return out;
}

// An empty database file at schema version 6 in a fresh directory.
struct db_file {
  std::string dir;
  std::string path;
  db_file() {
    char tmpl[] = "/tmp/mneme-facts-cli-XXXXXX";
    BOOST_REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    path = dir + "/m.db";
    store_params p;
    p.path = path;
    auto s = sqlite_store::open(p);
    BOOST_REQUIRE_MESSAGE(s, "cannot create the database");
  }
  ~db_file() { std::filesystem::remove_all(dir); }
};

// `mneme serve --port 0 --db FILE` until the end of the scope.
struct serve_process {
  pid_t pid = -1;
  int out_fd = -1;
  std::string url;

  explicit serve_process(const std::string& db) {
    int fds[2];
    BOOST_REQUIRE(::pipe(fds) == 0);
    pid = ::fork();
    BOOST_REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      ::execl(mneme_bin.c_str(), "mneme", "serve", "--port", "0", "--db", db.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(fds[1]);
    out_fd = fds[0];
    std::string seen;
    const std::string marker = "listening on ";
    // A bound on a hung daemon, not a timing assertion.
    for (int polls = 0; polls < 600 && url.empty(); ++polls) {
      pollfd p{out_fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0)
        continue;
      char buf[512];
      auto got = ::read(out_fd, buf, sizeof buf);
      if (got <= 0)
        break;
      seen.append(buf, static_cast<size_t>(got));
      auto at = seen.find(marker);
      auto end = at == std::string::npos ? at : seen.find_first_of(" \n", at + marker.size());
      if (end != std::string::npos)
        url = seen.substr(at + marker.size(), end - at - marker.size());
    }
    BOOST_REQUIRE_MESSAGE(!url.empty(), "mneme serve did not start: " + seen);
  }
  ~serve_process() {
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      int status = 0;
      ::waitpid(pid, &status, 0);
    }
    if (out_fd >= 0)
      ::close(out_fd);
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(set_list_search_and_rm_on_a_file, db_file) {
  auto set = run({"facts", "set", "editor", "vim", "--user", "alice", "--source", "chat-1",
                  "--db", path});
  BOOST_TEST(set.code == 0, set.err);
  BOOST_TEST(set.out.find("editor = vim  (user alice, version #") == 0u, set.out);
  BOOST_TEST(run({"facts", "set", "city", "住在 上海", "--user", "alice", "--db", path}).code
             == 0);
  auto all = parse(run({"facts", "--user", "alice", "--db", path, "--json"}));
  BOOST_TEST((keys_of(all) == std::vector<std::string>{"city", "editor"}));
  BOOST_TEST(all["facts"][1]["source_session"] == "chat-1");
  auto cjk = parse(run({"facts", "上海", "--user", "alice", "--db", path, "--json"}));
  BOOST_TEST((keys_of(cjk) == std::vector<std::string>{"city"}));
  auto table = run({"facts", "--user", "alice", "--db", path});
  BOOST_TEST(table.code == 0);
  BOOST_TEST(table.out.find("KEY") == 0u, table.out);
  BOOST_TEST(table.out.find("住在 上海") != std::string::npos);
  BOOST_TEST(table.out.find('\x1b') == std::string::npos);
  auto rm = run({"facts", "rm", "editor", "--user", "alice", "--db", path});
  BOOST_TEST(rm.code == 0, rm.err);
  BOOST_TEST(rm.out.find("removed editor") == 0u, rm.out);
  BOOST_TEST((keys_of(parse(run({"facts", "--user", "alice", "--db", path, "--json"})))
              == std::vector<std::string>{"city"}));
  // The tombstone is still there.
  auto history = parse(run({"facts", "--user", "alice", "--include-inactive", "--db", path,
                            "--json"}));
  int removed = 0;
  for (const auto& f : history["facts"])
    removed += f["state"] == "removed" && f["value"] == "vim" ? 1 : 0;
  BOOST_TEST(removed == 1);
  auto again = run({"facts", "rm", "editor", "--user", "alice", "--db", path});
  BOOST_TEST(again.code == 2);
  BOOST_TEST(again.err.find("mneme facts rm:") == 0u, again.err);
  BOOST_TEST(again.out.empty());
}

BOOST_FIXTURE_TEST_CASE(another_user_sees_no_facts, db_file) {
  BOOST_TEST(run({"facts", "set", "editor", "vim", "--user", "alice", "--db", path}).code == 0);
  auto bob = run({"facts", "--user", "bob", "--db", path});
  BOOST_TEST(bob.code == 0);
  BOOST_TEST(bob.out == "no facts\n");
  BOOST_TEST(keys_of(parse(run({"facts", "vim", "--user", "bob", "--db", path, "--json"})))
               .empty());
}

namespace {

struct bad_args {
  std::vector<std::string> args;
  std::string says;
};
std::ostream& operator<<(std::ostream& os, const bad_args& b) {
  for (auto& a : b.args)
    os << (a.size() > 20 ? a.substr(0, 20) + "..." : a) << " ";
  return os;
}

const std::vector<bad_args> bad_cases{
  {{"facts", "--limit", "0"}, "--limit must be 1..1000"},
  {{"facts", "--limit", "1001"}, "--limit must be 1..1000"},
  {{"facts", "set", "", "v"}, "KEY is empty"},
  {{"facts", "set", "k", ""}, "VALUE is empty"},
  {{"facts", "rm", ""}, "KEY is empty"},
  {{"facts", "set", "k", std::string(65537, 'v')}, "value must be 1..65536 bytes"},
  {{"facts", "set", std::string(257, 'k'), "v"}, "key must be 1..256 bytes"},
};

} // namespace

BOOST_DATA_TEST_CASE(bad_input_exits_2_naming_what_was_wrong, bdata::make(bad_cases), c) {
  db_file f;
  auto args = c.args;
  args.insert(args.end(), {"--user", "alice", "--db", f.path});
  auto r = run(args);
  BOOST_TEST(r.code == 2, r.err);
  BOOST_TEST(r.err.find(c.says) != std::string::npos, r.err);
  BOOST_TEST(r.out.empty());
}

BOOST_AUTO_TEST_CASE(a_missing_database_file_is_bad_input_and_is_not_created) {
  for (auto args : std::vector<std::vector<std::string>>{
         {"facts", "--db", "/tmp/no-such-dir-mneme/x.db"},
         {"facts", "set", "k", "v", "--db", "/tmp/no-such-dir-mneme/x.db"}}) {
    auto r = run(args);
    BOOST_TEST(r.code == 2);
    BOOST_TEST(r.err.find("does not exist") != std::string::npos, r.err);
  }
  BOOST_TEST(!std::filesystem::exists("/tmp/no-such-dir-mneme/x.db"));
}

BOOST_FIXTURE_TEST_CASE(through_mneme_serve_the_commands_change_and_print_the_same_facts,
                        db_file) {
  serve_process daemon{path};
  auto set = run({"facts", "set", "paths/home", "/home/alice", "--user", "alice", "--server",
                  daemon.url, "--json"});
  auto fact = parse(set);
  BOOST_TEST(fact["key"] == "paths/home");
  BOOST_TEST(fact["state"] == "active");
  BOOST_TEST(run({"facts", "set", "city", "住在 上海", "--user", "alice", "--server",
                  daemon.url}).code == 0);
  auto remote = parse(run({"facts", "--user", "alice", "--server", daemon.url, "--json"}));
  auto local = parse(run({"facts", "--user", "alice", "--db", path, "--json"}));
  BOOST_TEST(remote == local);
  BOOST_TEST((keys_of(remote) == std::vector<std::string>{"city", "paths/home"}));
  auto found = parse(run({"facts", "上海", "--user", "alice", "--server", daemon.url,
                          "--json"}));
  BOOST_TEST((keys_of(found) == std::vector<std::string>{"city"}));
  auto rm = run({"facts", "rm", "paths/home", "--user", "alice", "--server", daemon.url});
  BOOST_TEST(rm.code == 0, rm.err);
  BOOST_TEST((keys_of(parse(run({"facts", "--user", "alice", "--db", path, "--json"})))
              == std::vector<std::string>{"city"}));
  auto again = run({"facts", "rm", "paths/home", "--user", "alice", "--server", daemon.url});
  BOOST_TEST(again.code == 2);
  BOOST_TEST(again.err.find("not_found") != std::string::npos, again.err);
}
