// `mneme facts` run as a real program (MNEME_BINARY_DIR/mneme): set, list, search
// (CJK included), rm as a tombstone, on a database file and through `mneme serve` on
// a free port; --json prints the daemon's documents, the plain output has no escape
// codes in a pipe; bad input exits 2 with a message naming it.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "store/sqlite/sqlite_store.hpp"
#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(cli_facts_test)

using namespace mneme;
using json = nlohmann::json;
using namespace std::chrono_literals;
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

std::vector<std::string> keys_of(const json& doc) {
  std::vector<std::string> out;
  for (const auto& f : doc.at("facts"))
    out.push_back(f.at("key").get<std::string>());
  return out;
}

// An empty database file at schema version 6 in a fresh directory.
struct db_file {
  testing::temp_dir dir{"mneme-facts-cli"};
  std::string path = dir.file("m.db");
  db_file() {
    store_params p;
    p.path = path;
    auto s = sqlite_store::open(p);
    BOOST_REQUIRE_MESSAGE(s, "cannot create the database");
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
  testing::mneme_daemon daemon{{"--db", path}, "", 60s};
  auto set = run({"facts", "set", "paths/home", "/home/alice", "--user", "alice", "--server",
                  daemon.url(), "--json"});
  auto fact = parse(set);
  BOOST_TEST(fact["key"] == "paths/home");
  BOOST_TEST(fact["state"] == "active");
  BOOST_TEST(run({"facts", "set", "city", "住在 上海", "--user", "alice", "--server",
                  daemon.url()}).code == 0);
  auto remote = parse(run({"facts", "--user", "alice", "--server", daemon.url(), "--json"}));
  auto local = parse(run({"facts", "--user", "alice", "--db", path, "--json"}));
  BOOST_TEST(remote == local);
  BOOST_TEST((keys_of(remote) == std::vector<std::string>{"city", "paths/home"}));
  auto found = parse(run({"facts", "上海", "--user", "alice", "--server", daemon.url(),
                          "--json"}));
  BOOST_TEST((keys_of(found) == std::vector<std::string>{"city"}));
  auto rm = run({"facts", "rm", "paths/home", "--user", "alice", "--server", daemon.url()});
  BOOST_TEST(rm.code == 0, rm.err);
  BOOST_TEST((keys_of(parse(run({"facts", "--user", "alice", "--db", path, "--json"})))
              == std::vector<std::string>{"city"}));
  auto again = run({"facts", "rm", "paths/home", "--user", "alice", "--server", daemon.url()});
  BOOST_TEST(again.code == 2);
  BOOST_TEST(again.err.find("not_found") != std::string::npos, again.err);
}

BOOST_AUTO_TEST_SUITE_END() // cli_facts_test
