// Tests of the tokens file (apps/common/api/tokens/token_store.hpp, token_file.hpp): SHA-256
// against known vectors, every kind of bad line refused with an error naming the file
// and the line, comments and CRLF accepted, a presented token found by its hash only,
// the token text's form and the ID inside it, and add/revoke on a file in process
// (the hash written, never the token; mode 0600; other lines kept byte for byte; a bad
// file left untouched). `mneme token` itself is tested in cli_token_test.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "apps/common/api/http_status.hpp"
#include "apps/common/config/app_config.hpp"
#include "apps/common/api/tokens/token_file.hpp"
#include "apps/common/api/tokens/token_store.hpp"
#include "tests/store_test_util.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(token_store_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

const std::string hash_of_hello =
  "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
const std::string hash_of_empty =
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string read_all(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct bad_file_case {
  const char* text;
  const char* error; // the whole error message
};

std::ostream& operator<<(std::ostream& os, const bad_file_case& c) { return os << c.error; }

// Macros (string-literal concatenation in the tables); undefined at the end of the file.
#define TOKEN_STORE_HASH "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
#define TOKEN_STORE_HASH2 "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

const bad_file_case bad_files[] = {
  {"# ok\n0a1b2c3d " TOKEN_STORE_HASH "\n",
   "F:2: expected 'ID sha256:HEX SCOPE' (three fields separated by single spaces)"},
  {"0a1b2c3d  " TOKEN_STORE_HASH " admin\n", "F:1: the hash must be 'sha256:' followed by 64 lowercase hex digits"},
  {"0A1B2C3D " TOKEN_STORE_HASH " admin\n", "F:1: the ID must be 8 lowercase hex digits"},
  {"0a1b2c3 " TOKEN_STORE_HASH " admin\n", "F:1: the ID must be 8 lowercase hex digits"},
  {"0a1b2c3d md5:abc admin\n", "F:1: the hash must be 'sha256:' followed by 64 lowercase hex digits"},
  {"0a1b2c3d sha256:2CF24DBA5FB0A30E26E83B2AC5B9E29E1B161E5C1FA7425E73043362938B9824 admin\n",
   "F:1: the hash must be 'sha256:' followed by 64 lowercase hex digits"},
  {"0a1b2c3d " TOKEN_STORE_HASH " root\n", "F:1: the scope must be 'admin' or 'user:NAME'"},
  {"0a1b2c3d " TOKEN_STORE_HASH " user:\n", "F:1: the scope must be 'admin' or 'user:NAME'"},
  {"0a1b2c3d " TOKEN_STORE_HASH " admin \n", "F:1: the scope must be 'admin' or 'user:NAME'"},
  {"0a1b2c3d " TOKEN_STORE_HASH " user:a\tb\n", "F:1: the scope's user holds a control character (byte 1)"},
  {"0a1b2c3d " TOKEN_STORE_HASH " admin\n\n0a1b2c3d " TOKEN_STORE_HASH2 " admin\n",
   "F:3: ID 0a1b2c3d is already used on line 1"},
  {"0a1b2c3d " TOKEN_STORE_HASH " admin\n0a1b2c3e " TOKEN_STORE_HASH " user:x\n",
   "F:2: the same hash is already on another line"},
};

} // namespace

BOOST_AUTO_TEST_CASE(sha256_matches_known_vectors) {
  BOOST_TEST(api::sha256_hex("hello") == hash_of_hello);
  BOOST_TEST(api::sha256_hex("") == hash_of_empty);
  BOOST_TEST(api::sha256_hex("abc")
             == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

BOOST_DATA_TEST_CASE(a_bad_line_makes_the_file_invalid_naming_the_line, data::make(bad_files),
                     c) {
  auto set = api::token_set::parse(c.text, "F");
  BOOST_REQUIRE(!set);
  BOOST_TEST((set.error() == errc::config_invalid));
  BOOST_TEST(api::error_message_of(set.error()) == c.error);
}

BOOST_AUTO_TEST_CASE(comments_blank_lines_and_crlf_are_accepted) {
  auto set = api::token_set::parse("# tokens\r\n\r\n0a1b2c3d " TOKEN_STORE_HASH " user:a b\r\n#last", "F");
  BOOST_REQUIRE_MESSAGE(set, testing::err_of(set));
  BOOST_REQUIRE(set->size() == 1u);
  BOOST_TEST(set->entries()[0].id == "0a1b2c3d");
  BOOST_TEST((set->entries()[0].scope == access_scope::of_user("a b")));
  BOOST_TEST(api::token_line(set->entries()[0]) == "0a1b2c3d " TOKEN_STORE_HASH " user:a b");
}

BOOST_AUTO_TEST_CASE(a_token_is_found_by_its_hash_and_nothing_else) {
  auto set = api::token_set::parse("0a1b2c3d " TOKEN_STORE_HASH " user:alice\n0a1b2c3e " TOKEN_STORE_HASH2 " admin\n",
                                   "F");
  BOOST_REQUIRE(set);
  BOOST_TEST((set->find("hello") == access_scope::of_user("alice")));
  BOOST_TEST(!set->find("hell"));
  BOOST_TEST(!set->find("hello "));
  BOOST_TEST(!set->find(hash_of_hello)); // the stored hash is not a token
  BOOST_TEST(!set->find("0a1b2c3d"));
  BOOST_TEST(!set->find("")); // sha256("") is on a line, yet an empty token never matches
}

BOOST_AUTO_TEST_CASE(a_generated_token_carries_its_id_and_256_random_bits) {
  std::set<std::string> seen;
  for (int i = 0; i < 64; ++i) {
    auto t = api::generate_token();
    BOOST_REQUIRE(t);
    BOOST_TEST(t->size() == 6u + 8 + 1 + 64);
    BOOST_TEST(t->rfind("mneme_", 0) == 0u);
    auto id = api::token_id_of(*t);
    BOOST_REQUIRE(id);
    BOOST_TEST(*id == t->substr(6, 8));
    seen.insert(*t);
  }
  BOOST_TEST(seen.size() == 64u);
  BOOST_TEST(!api::token_id_of("mneme_0a1b2c3d"));
  BOOST_TEST(!api::token_id_of("mneme_0a1b2c3d_"));
  BOOST_TEST(!api::token_id_of("mneme_0A1B2C3D_x"));
  BOOST_TEST(!api::token_id_of("other_0a1b2c3d_x"));
  BOOST_TEST(*api::token_id_of("mneme_0a1b2c3d_x") == "0a1b2c3d");
}

BOOST_AUTO_TEST_CASE(add_writes_the_hash_only_and_revoke_removes_one_line) {
  testing::temp_dir dir{"mneme-tokens"};
  auto path = dir.file("tokens.list");
  auto alice = api::add_token(path, access_scope::of_user("alice"));
  BOOST_REQUIRE_MESSAGE(alice, testing::err_of(alice));
  auto admin = api::add_token(path, access_scope::admin());
  BOOST_REQUIRE_MESSAGE(admin, testing::err_of(admin));
  auto text = read_all(path);
  BOOST_TEST(text.find(alice->token) == std::string::npos);
  BOOST_TEST(text.find(alice->token.substr(15)) == std::string::npos); // not even the secret
  BOOST_TEST(text.find(api::sha256_hex(alice->token)) != std::string::npos);
  struct stat st{};
  BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 0777) == 0600u);
  auto set = api::token_set::load(path);
  BOOST_REQUIRE(set);
  BOOST_TEST((set->find(alice->token) == access_scope::of_user("alice")));
  BOOST_TEST((set->find(admin->token) == access_scope::admin()));

  // By ID; then by the whole token; a third time finds nothing.
  auto gone = api::revoke_token(path, alice->entry.id);
  BOOST_REQUIRE_MESSAGE(gone, testing::err_of(gone));
  BOOST_TEST((gone->scope == access_scope::of_user("alice")));
  auto after = read_all(path);
  BOOST_TEST(after.find(alice->entry.id) == std::string::npos);
  BOOST_TEST(after.find(api::token_line(admin->entry)) != std::string::npos);
  BOOST_TEST(after.rfind("# mneme API tokens", 0) == 0u); // the header comment is kept
  BOOST_TEST(static_cast<bool>(api::revoke_token(path, admin->token)));
  auto missing = api::revoke_token(path, admin->token);
  BOOST_REQUIRE(!missing);
  BOOST_TEST((missing.error() == errc::not_found));
  BOOST_TEST(api::error_message_of(missing.error()).find(admin->token) == std::string::npos);
  BOOST_TEST(api::token_set::load(path)->size() == 0u);
}

BOOST_AUTO_TEST_CASE(a_tokens_file_every_user_may_write_is_refused_naming_it) {
  testing::temp_dir dir{"mneme-tokens"};
  auto path = dir.file("tokens.list");
  auto alice = api::add_token(path, access_scope::of_user("alice"));
  BOOST_REQUIRE_MESSAGE(alice, testing::err_of(alice));
  BOOST_REQUIRE(::chmod(path.c_str(), 0666) == 0);
  auto open = api::token_set::load(path);
  BOOST_REQUIRE(!open);
  BOOST_TEST((open.error() == errc::config_invalid));
  BOOST_TEST(api::error_message_of(open.error())
               == path + ": the tokens file is writable by every user (mode 0666); remove that "
                         "with chmod o-w");
  BOOST_REQUIRE(::chmod(path.c_str(), 0640) == 0); // group-writable or readable: accepted
  BOOST_TEST(static_cast<bool>(api::token_set::load(path)));
}

BOOST_AUTO_TEST_CASE(a_config_naming_a_credential_file_every_user_may_write_is_refused) {
  namespace fs = std::filesystem;
  testing::temp_dir dir{"mneme-config"};
  auto tokens = dir.file("tokens.list");
  auto token = dir.file("admin.token");
  std::ofstream{tokens} << "# tokens\n";
  std::ofstream{token} << "secret\n";
  fs::permissions(tokens, fs::perms{0666}, fs::perm_options::replace);
  fs::permissions(token, fs::perms{0646}, fs::perm_options::replace);
  auto text = "gateway:\n  auth_token_file: " + token + "\n  tokens_file: " + tokens + "\n";
  auto r = load_config_text(text, "x");
  std::vector<std::string> errors;
  for (auto& e : r.errors)
    errors.push_back(to_string(e));
  std::vector<std::string> want{
    "gateway.auth_token_file: " + token
      + " is writable by every user (mode 0646); remove that with chmod o-w",
    "gateway.tokens_file: " + tokens
      + " is writable by every user (mode 0666); remove that with chmod o-w"};
  BOOST_TEST(errors == want, boost::test_tools::per_element());
  fs::permissions(tokens, fs::perms{0600}, fs::perm_options::replace);
  fs::permissions(token, fs::perms{0640}, fs::perm_options::replace);
  auto fixed = load_config_text(text, "x");
  BOOST_TEST(fixed.ok(), fixed.describe_errors());
}

BOOST_AUTO_TEST_CASE(a_bad_file_or_a_bad_user_is_refused_and_nothing_is_written) {
  testing::temp_dir dir{"mneme-tokens"};
  auto path = dir.file("tokens.list");
  std::ofstream{path} << "# mine\nnot a token line\n";
  auto added = api::add_token(path, access_scope::admin());
  BOOST_REQUIRE(!added);
  BOOST_TEST(api::error_message_of(added.error()) == path + ":2: the ID must be 8 lowercase hex digits");
  BOOST_TEST(read_all(path) == "# mine\nnot a token line\n");
  auto bad_user = api::add_token(dir.file("other.list"), access_scope::of_user("a\nb"));
  BOOST_REQUIRE(!bad_user);
  BOOST_TEST((bad_user.error() == errc::config_invalid));
  BOOST_TEST(!std::ifstream{dir.file("other.list")});
}

BOOST_AUTO_TEST_SUITE_END() // token_store_test

#undef TOKEN_STORE_HASH
#undef TOKEN_STORE_HASH2
