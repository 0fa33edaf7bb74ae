// `mneme token` run as a real program (MNEME_BINARY_DIR/mneme): add prints the token
// alone on stdout once and writes only its hash, list shows IDs and scopes, revoke by
// ID or by the token removes one line, and bad input exits 2 naming what is wrong (no
// scope, both scopes, a bad user, a tokens file with a bad line: nothing changed); a
// revoke that finds nothing exits 1. The daemon's reload is tested in serve_tokens_test.
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(cli_token_test)

using namespace mneme;

namespace {

testing::program_result run_token(const std::vector<std::string>& args) {
  std::vector<std::string> all{"token"};
  all.insert(all.end(), args.begin(), args.end());
  return testing::run_program("mneme", all);
}

std::string file_text(const std::string& path) {
  std::ifstream in{path};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The one line add printed, without its newline.
std::string added_token(const testing::program_result& r) {
  BOOST_TEST_INFO("stdout: " << r.out << " stderr: " << r.err);
  BOOST_REQUIRE_EQUAL(r.code, 0);
  BOOST_REQUIRE(!r.out.empty() && r.out.back() == '\n');
  auto token = r.out.substr(0, r.out.size() - 1);
  BOOST_REQUIRE(token.find('\n') == std::string::npos);
  return token;
}

struct token_files {
  testing::temp_dir dir{"mneme-token-cli"};
  std::string path = dir.file("tokens.list");
};

} // namespace

BOOST_FIXTURE_TEST_CASE(add_list_and_revoke_manage_the_file, token_files) {
  auto alice = added_token(run_token({"add", "--user", "alice", "--file", path}));
  auto admin = added_token(run_token({"add", "--admin", "--file", path}));
  BOOST_TEST(alice.rfind("mneme_", 0) == 0u);
  BOOST_TEST(alice != admin);
  auto alice_id = alice.substr(6, 8);
  auto admin_id = admin.substr(6, 8);
  auto text = file_text(path);
  BOOST_TEST(text.find(alice) == std::string::npos);
  BOOST_TEST(text.find(admin) == std::string::npos);

  auto listed = run_token({"list", "--file", path});
  BOOST_TEST(listed.code == 0);
  BOOST_TEST(listed.out == alice_id + " user:alice\n" + admin_id + " admin\n");

  auto by_id = run_token({"revoke", alice_id, "--file", path});
  BOOST_TEST(by_id.code == 0, by_id.err);
  BOOST_TEST(by_id.out == "revoked " + alice_id + " (user:alice)\n");
  auto by_token = run_token({"revoke", admin, "--file", path});
  BOOST_TEST(by_token.code == 0, by_token.err);
  BOOST_TEST(run_token({"list", "--file", path}).out == "");

  auto again = run_token({"revoke", alice_id, "--file", path});
  BOOST_TEST(again.code == 1);
  BOOST_TEST(again.err.find("no token has the given ID") != std::string::npos, again.err);
}

BOOST_FIXTURE_TEST_CASE(bad_input_exits_2_naming_it_and_changes_nothing, token_files) {
  auto none = run_token({"add", "--file", path});
  BOOST_TEST(none.code == 2);
  BOOST_TEST(none.err.find("--user NAME or --admin") != std::string::npos, none.err);
  BOOST_TEST(run_token({"add", "--admin", "--user", "x", "--file", path}).code == 2);
  BOOST_TEST(run_token({"add", "--admin"}).code == 2); // --file is required
  auto bad_user = run_token({"add", "--user", std::string{"a\x01"} + "b", "--file", path});
  BOOST_TEST(bad_user.code == 2);
  BOOST_TEST(bad_user.err.find("control character") != std::string::npos, bad_user.err);
  BOOST_TEST(!std::ifstream{path});

  std::ofstream{path} << "# hand-edited\n0a1b2c3d sha256:zz admin\n";
  auto broken = run_token({"add", "--admin", "--file", path});
  BOOST_TEST(broken.code == 2);
  BOOST_TEST(broken.err.find(path + ":2: the hash must be") != std::string::npos, broken.err);
  BOOST_TEST(broken.out == "");
  BOOST_TEST(file_text(path) == "# hand-edited\n0a1b2c3d sha256:zz admin\n");
  BOOST_TEST(run_token({"list", "--file", path}).code == 2);
}

BOOST_AUTO_TEST_SUITE_END() // cli_token_test
