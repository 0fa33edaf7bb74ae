// Strict names on the daemon's HTTP API (SPEC §8.1; policies/client_text.hpp), in
// process: a runtime on a temporary SQLite file, the API on the event-driven front.
// Every route that writes refuses a session key, user, checkpoint name or fact key that
// is not valid UTF-8, holds a control character or is too long: 400 naming the
// parameter, and nothing is stored. A key stored before the rule stays readable.
// The pure check and the log escaping are table-tested here too.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "policies/client_text.hpp"
#include "policies/key_namespace.hpp"
// Named here, not only through the fixture: CMakeLists.txt links mneme_core to a test
// that includes an apps/ header itself.
#include "apps/common/api/http_server.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(http_strict_test)

using namespace mneme;
using json = nlohmann::json;
namespace data = boost::unit_test::data;

namespace {

struct strict_fixture : test::http_api_fixture {
  size_t stored_sessions() {
    auto a = send("GET", "/v1/sessions?limit=100000", "");
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
    return a.body["sessions"].size();
  }
};

struct name_case {
  const char* what;
  const char* method;
  std::string path;
  std::string body;
  std::string message_part;
};

std::ostream& operator<<(std::ostream& os, const name_case& c) { return os << c.what; }

const std::string long_key(session_key_max_bytes + 1, 'k');
const std::string long_user(user_max_bytes + 1, 'u');

const std::vector<name_case> name_cases{
  {"a key that is not UTF-8", "POST", "/v1/sessions/k%FF%FE/messages",
   R"({"role":"user","content":"x"})", "the session key is not valid UTF-8 (byte 1)"},
  {"a key with a NUL", "POST", "/v1/sessions/k%00x/turns", R"({"content":"x"})",
   "the session key holds a control character (byte 1)"},
  {"a key with a unit separator", "POST", "/v1/sessions/a%1F/messages",
   R"({"role":"user","content":"x"})",
   "the session key holds U+001F (byte 1), the separator of a user's key namespace"},
  {"a key with DEL", "POST", "/v1/sessions/%7F/turns", R"({"content":"x"})",
   "the session key holds a control character (byte 0)"},
  {"a key with a newline", "POST", "/v1/sessions/a%0Ab/compact", "{}",
   "the session key holds a control character"},
  {"a key too long", "POST", "/v1/sessions/" + long_key + "/messages",
   R"({"role":"user","content":"x"})", "the session key is longer than 1024 bytes"},
  {"a key with a tab into facts", "POST", "/v1/sessions/a%09b/facts", "{}",
   "the session key holds a control character"},
  {"a user with a control character", "POST", "/v1/sessions/k/messages",
   R"({"user":"a\u0001b","role":"user","content":"x"})",
   "field 'user' holds a control character (byte 1)"},
  {"a user with a newline in a turn", "POST", "/v1/sessions/k/turns",
   R"({"user":"eve\nroot","content":"x"})", "field 'user' holds a control character (byte 3)"},
  {"a user too long", "POST", "/v1/sessions/k/turns",
   R"({"user":")" + long_user + R"(","content":"x"})", "field 'user' is longer than 512 bytes"},
  {"a facts user with a control character", "POST", "/v1/sessions/k/facts",
   R"({"user":"a\u007fb"})", "field 'user' holds a control character"},
  {"a search user that is not UTF-8", "GET", "/v1/search?q=x&user=%FF", "",
   "parameter 'user' is not valid UTF-8 (byte 0)"},
  {"an empty search user", "GET", "/v1/search?q=x&user=", "", "parameter 'user' is empty"},
  {"a session list user with a NUL", "GET", "/v1/sessions?user=a%00", "",
   "parameter 'user' holds a control character"},
  {"a facts path user with a newline", "GET", "/v1/users/a%0Ab/facts", "",
   "the user holds a control character"},
  {"a fact key with a tab", "PUT", "/v1/users/alice/facts/k%09ey", R"({"value":"v"})",
   "the fact key holds a control character"},
  {"a fact key that is not UTF-8", "DELETE", "/v1/users/alice/facts/%C3%28", "",
   "the fact key is not valid UTF-8"},
};

} // namespace

BOOST_DATA_TEST_CASE_F(strict_fixture, a_bad_name_is_400_naming_it_and_nothing_is_stored,
                       data::make(name_cases), c) {
  serve();
  answer a = send(c.method, c.path, c.body);
  BOOST_TEST(a.status == 400, a.text);
  BOOST_REQUIRE_MESSAGE(a.body.is_object(), a.text);
  BOOST_TEST(a.body["error"]["code"] == "bad_request");
  BOOST_TEST(a.body["error"]["message"].get<std::string>().find(c.message_part)
               != std::string::npos,
             a.body["error"]["message"] << " lacks " << c.message_part);
  BOOST_TEST(stored_sessions() == 0u);
  BOOST_TEST(llm.stats().chat_requests == 0);
  answer facts = send("GET", "/v1/users/alice/facts?include_inactive=true", "");
  BOOST_TEST(facts.body["facts"].size() == 0u);
}

BOOST_FIXTURE_TEST_CASE(a_key_of_the_documented_1024_bytes_is_stored_and_read_back,
                        strict_fixture) {
  serve();
  const std::string key(session_key_max_bytes, 'k');
  BOOST_REQUIRE_EQUAL(session_key_max_bytes, 1024u);
  auto made =
    send("POST", "/v1/sessions/" + key + "/messages", R"({"role":"user","content":"x"})");
  BOOST_TEST(made.status == 201, made.text);
  auto turn = send("POST", "/v1/sessions/" + key + "/turns", R"({"content":"hello"})");
  BOOST_TEST(turn.status == 200, turn.text);
  auto read = send("GET", "/v1/sessions/" + key, "");
  BOOST_TEST(read.status == 200, read.text);
  BOOST_TEST(read.body["session"].value("session_key", std::string{}) == key);
  BOOST_TEST(stored_sessions() == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_checkpoint_name_with_a_control_character_is_refused, strict_fixture) {
  serve();
  auto made = send("POST", "/v1/sessions/cp/messages", R"({"role":"user","content":"x"})");
  BOOST_REQUIRE_MESSAGE(made.status == 201, made.text);
  auto a = send("POST", "/v1/sessions/cp/checkpoints", R"({"name":"before\u0000after"})");
  BOOST_TEST(a.status == 400, a.text);
  BOOST_TEST(a.body["error"]["message"].get<std::string>().find("field 'name' holds a control")
               != std::string::npos,
             a.text);
  BOOST_TEST(send("GET", "/v1/sessions/cp/checkpoints", "").body["checkpoints"].size() == 0u);
}

BOOST_FIXTURE_TEST_CASE(cjk_and_punctuation_in_names_are_accepted, strict_fixture) {
  serve();
  auto a = send("POST", "/v1/sessions/%E4%BC%9A%E8%AF%9D%20%231%2Fx/messages",
                R"({"user":"Zoë 山田","role":"user","content":"x"})");
  BOOST_TEST(a.status == 201, a.text);
  auto s = send("GET", "/v1/sessions/%E4%BC%9A%E8%AF%9D%20%231%2Fx?user=Zo%C3%AB%20%E5%B1%B1%E7%94%B0", "");
  BOOST_TEST(s.status == 200, s.text);
  BOOST_TEST(s.body["session"]["user_id"] == "Zoë 山田");
}

BOOST_FIXTURE_TEST_CASE(a_key_stored_before_the_rule_stays_readable_but_takes_no_writes,
                        strict_fixture) {
  serve();
  message row;
  row.role = msg_role::user;
  row.content = "written by an older daemon";
  // The gateway itself does not check names: this is how such a key got stored.
  auto id = call<int64_t>(rt->gateway(), gw_append_atom_v, stored_key("alice", "old\x01key"),
                          std::string{"alice"}, row);
  BOOST_REQUIRE_MESSAGE(id, testing::err_of(id));
  auto s = send("GET", "/v1/sessions/old%01key?user=alice", "");
  BOOST_TEST(s.status == 200, s.text);
  BOOST_TEST(send("GET", "/v1/sessions/old%01key/export?user=alice", "").status == 200);
  BOOST_TEST(send("GET", "/v1/sessions/old%01key/checkpoints?user=alice", "").status == 200);
  BOOST_TEST(send("GET", "/v1/sessions?key=old%01key&user=alice", "").body["sessions"].size()
             == 1u);
  auto w = send("POST", "/v1/sessions/old%01key/messages?user=alice",
                R"({"role":"user","content":"x"})");
  BOOST_TEST(w.status == 400, w.text);
}

// --- the pure pieces

struct check_case {
  std::string text;
  name_problem problem;
  size_t byte;
};

std::ostream& operator<<(std::ostream& os, const check_case& c) {
  return os << log_quoted(c.text);
}

BOOST_DATA_TEST_CASE(check_name_finds_the_first_offending_byte,
                     data::make(std::vector<check_case>{
                       {"alice", name_problem::none, 0},
                       {"会话/", name_problem::none, 0},
                       {"", name_problem::empty, 0},
                       {std::string(9, 'x'), name_problem::too_long, 8},
                       {"ab\xC3\x28", name_problem::invalid_utf8, 2},
                       {"ab\xED\xA0\x80", name_problem::invalid_utf8, 2}, // a surrogate
                       {"a\x7f", name_problem::control_character, 1},
                       {std::string{"a\0b", 3}, name_problem::control_character, 1},
                       {"tab\there", name_problem::control_character, 3},
                       {"\xC2\x85", name_problem::none, 0}, // U+0085 (C1) is not refused
                     }),
                     c) {
  auto v = check_name(c.text, 8);
  BOOST_TEST((v.problem == c.problem));
  if (c.problem == name_problem::invalid_utf8 || c.problem == name_problem::control_character)
    BOOST_TEST(v.byte == c.byte);
}

BOOST_AUTO_TEST_CASE(a_name_problem_is_described_with_its_parameter_and_byte) {
  BOOST_TEST(describe_name_problem(check_name("a\nb", 10), "field 'user'", 10)
             == "field 'user' holds a control character (byte 1)");
  BOOST_TEST(describe_name_problem(check_name("abcdef", 4), "the session key", 4)
             == "the session key is longer than 4 bytes");
  BOOST_TEST(describe_name_problem(check_name("", 4), "the user", 4) == "the user is empty");
  BOOST_TEST(describe_name_problem(check_name("ok", 4), "the user", 4).empty());
}

struct quote_case {
  std::string text;
  size_t max;
  std::string quoted;
};

std::ostream& operator<<(std::ostream& os, const quote_case& c) { return os << c.quoted; }

BOOST_DATA_TEST_CASE(log_quoted_cannot_forge_or_split_a_line,
                     data::make(std::vector<quote_case>{
                       {"alice", 160, "\"alice\""},
                       {"a\nuser=admin", 160, "\"a\\x0auser=admin\""},
                       {"say \"hi\" \\o/", 160, "\"say \\\"hi\\\" \\\\o/\""},
                       {"\x1b[31mred", 160, "\"\\x1b[31mred\""},
                       {"k\xFF", 160, "\"k\\xff\""},
                       {"数据库", 160, "\"数据库\""},
                       {"abcdef", 3, "\"abc\"...(+3 bytes)"},
                       // C1 controls and the Unicode line and paragraph separators break
                       // a line in some viewers: their bytes are escaped too.
                       {"a\xC2\x85" "b", 160, "\"a\\xc2\\x85b\""},
                       {"a\xE2\x80\xA8" "b\xE2\x80\xA9", 160,
                        "\"a\\xe2\\x80\\xa8b\\xe2\\x80\\xa9\""},
                       {"\xC2\xA0\xE2\x80\xA7", 160, "\"\xC2\xA0\xE2\x80\xA7\""}, // kept
                     }),
                     c) {
  BOOST_TEST(log_quoted(c.text, c.max) == c.quoted);
}

BOOST_AUTO_TEST_SUITE_END() // http_strict_test
