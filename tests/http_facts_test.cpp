// The facts tier over the daemon's HTTP API (docs/api.md "Facts"; SPEC §7 semantic
// memory), in process: a runtime on a temporary SQLite file against the fake LLM and
// the API server on an ephemeral port. Put, replace, list, search (CJK included) and
// remove as a tombstone; tenants never see each other's facts; facts enter a session
// only through POST /v1/sessions/{key}/facts; every kind of bad input is a 400 naming
// what was wrong; the limits of store/facts.hpp reach the client as 400.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

// Named here, not only through the fixture: CMakeLists.txt links mneme_core to a test
// that includes an apps/ header itself.
#include "apps/common/api/http_server.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(http_facts_test)

using namespace mneme;
using json = nlohmann::json;
namespace data = boost::unit_test::data;

namespace {

struct facts_fixture : test::http_api_fixture {
  answer put(const std::string& user, const std::string& key, const std::string& value) {
    auto a = send("PUT", "/v1/users/" + user + "/facts/" + key,
                  json{{"value", value}, {"source_session", "s-1"}}.dump());
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
    return a;
  }
  std::vector<std::string> keys_of(const answer& a) {
    std::vector<std::string> out;
    for (const auto& f : a.body.at("facts"))
      out.push_back(f.at("key").get<std::string>());
    return out;
  }
  json live_of(const std::string& key, const std::string& user) {
    auto a = get("/v1/sessions/" + key + "?user=" + user);
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
    return a.body.at("live");
  }
  static int memory_rows(const json& live) {
    int n = 0;
    for (const auto& m : live)
      n += m.at("content").get<std::string>().rfind("[MEMORY:", 0) == 0 ? 1 : 0;
    return n;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(http_facts, facts_fixture)

BOOST_AUTO_TEST_CASE(a_put_fact_is_listed_newest_first_and_found_by_search_in_any_script) {
  serve();
  auto editor = put("alice", "editor", "vim with a dark theme");
  BOOST_TEST(editor.body["key"] == "editor");
  BOOST_TEST(editor.body["value"] == "vim with a dark theme");
  BOOST_TEST(editor.body["user_id"] == "alice");
  BOOST_TEST(editor.body["source_session"] == "s-1");
  BOOST_TEST(editor.body["state"] == "active");
  BOOST_TEST(editor.body["id"].get<int64_t>() > 0);
  put("alice", "city", "住在 上海");
  auto all = get("/v1/users/alice/facts");
  BOOST_REQUIRE_MESSAGE(all.status == 200, all.text);
  BOOST_TEST((keys_of(all) == std::vector<std::string>{"city", "editor"}));
  auto vim = get("/v1/users/alice/facts?q=vim");
  BOOST_REQUIRE_MESSAGE(vim.status == 200, vim.text);
  BOOST_TEST((keys_of(vim) == std::vector<std::string>{"editor"}));
  auto cjk = get("/v1/users/alice/facts?q=%E4%B8%8A%E6%B5%B7"); // 上海
  BOOST_REQUIRE_MESSAGE(cjk.status == 200, cjk.text);
  BOOST_TEST((keys_of(cjk) == std::vector<std::string>{"city"}));
  BOOST_TEST(keys_of(get("/v1/users/alice/facts?q=emacs")).empty());
  BOOST_TEST(keys_of(get("/v1/users/alice/facts?limit=1")).size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_key_is_percent_decoded_and_may_hold_a_slash) {
  serve();
  auto a = put("alice", "paths%2Fhome", "/home/alice");
  BOOST_TEST(a.body["key"] == "paths/home");
  BOOST_TEST((keys_of(get("/v1/users/alice/facts")) == std::vector<std::string>{"paths/home"}));
}

BOOST_AUTO_TEST_CASE(a_replace_keeps_the_old_version_as_history) {
  serve();
  auto first = put("alice", "editor", "vim");
  auto second = put("alice", "editor", "emacs");
  BOOST_TEST(second.body["value"] == "emacs");
  BOOST_TEST(second.body["created_at_ms"] == first.body["created_at_ms"]);
  auto live = get("/v1/users/alice/facts");
  BOOST_REQUIRE(live.body["facts"].size() == 1u);
  BOOST_TEST(live.body["facts"][0]["value"] == "emacs");
  auto history = get("/v1/users/alice/facts?include_inactive=true");
  BOOST_REQUIRE(history.body["facts"].size() == 2u);
  json old;
  for (const auto& f : history.body["facts"])
    if (f["value"] == "vim")
      old = f;
  BOOST_REQUIRE(!old.is_null());
  BOOST_TEST(old["state"] == "replaced");
  BOOST_TEST(old["replaced_by"] == second.body["id"]);
}

BOOST_AUTO_TEST_CASE(a_delete_retires_the_fact_as_a_tombstone_and_deletes_nothing) {
  serve();
  put("alice", "editor", "vim");
  auto del = send("DELETE", "/v1/users/alice/facts/editor", "");
  BOOST_REQUIRE_MESSAGE(del.status == 200, del.text);
  BOOST_TEST(del.body["state"] == "removed");
  BOOST_TEST(del.body["active"] == false);
  BOOST_TEST(del.body["removed_at_ms"].get<int64_t>() > 0);
  BOOST_TEST(del.body["value"] == "vim");
  BOOST_TEST(keys_of(get("/v1/users/alice/facts")).empty());
  BOOST_TEST(keys_of(get("/v1/users/alice/facts?q=vim")).empty());
  auto kept = get("/v1/users/alice/facts?include_inactive=true");
  BOOST_REQUIRE(kept.body["facts"].size() == 1u);
  BOOST_TEST(kept.body["facts"][0]["value"] == "vim");
  auto again = send("DELETE", "/v1/users/alice/facts/editor", "");
  BOOST_TEST(again.status == 404);
  BOOST_TEST(again.body["error"]["code"] == "not_found");
}

BOOST_AUTO_TEST_CASE(a_user_never_sees_another_users_facts) {
  serve();
  put("alice", "editor", "vim");
  put("bob", "editor", "nano");
  auto bob = get("/v1/users/bob/facts?q=vim");
  BOOST_TEST(keys_of(bob).empty());
  auto bobs = get("/v1/users/bob/facts");
  BOOST_REQUIRE(bobs.body["facts"].size() == 1u);
  BOOST_TEST(bobs.body["facts"][0]["value"] == "nano");
  BOOST_TEST(send("DELETE", "/v1/users/carol/facts/editor", "").status == 404);
}

// The store's limits (store/facts.hpp): a value of 65,536 bytes, a key of 256 bytes.
BOOST_AUTO_TEST_CASE(the_value_and_key_limits_reach_the_client_as_400) {
  serve();
  auto at_limit = send("PUT", "/v1/users/alice/facts/big",
                       json{{"value", std::string(65536, 'v')}}.dump());
  BOOST_TEST(at_limit.status == 200);
  auto over = send("PUT", "/v1/users/alice/facts/big",
                   json{{"value", std::string(65537, 'v')}}.dump());
  BOOST_TEST(over.status == 400);
  BOOST_TEST(over.body["error"]["message"].get<std::string>().find("value") != std::string::npos);
  BOOST_TEST(send("PUT", "/v1/users/alice/facts/" + std::string(256, 'k'),
                  R"({"value":"x"})").status == 200);
  auto long_key = send("PUT", "/v1/users/alice/facts/" + std::string(257, 'k'),
                       R"({"value":"x"})");
  BOOST_TEST(long_key.status == 400);
  BOOST_TEST(long_key.body["error"]["message"].get<std::string>().find("key")
             != std::string::npos);
}

struct bad_case {
  const char* method;
  const char* path;
  std::string body;
  const char* says;  // part of the error message
};
std::ostream& operator<<(std::ostream& os, const bad_case& c) {
  return os << c.method << " " << c.path;
}

const std::vector<bad_case> bad_cases = {
  {"PUT", "/v1/users/alice/facts/editor", R"({"value":5})", "field 'value' must be a string"},
  {"PUT", "/v1/users/alice/facts/editor", "not json", "not valid JSON"},
  {"PUT", "/v1/users/alice/facts/editor", "[1]", "must be a JSON object"},
  {"PUT", "/v1/users/alice/facts/editor", "{\"value\":\"\xff\"}", "not valid UTF-8"},
  {"PUT", "/v1/users/alice/facts/editor", "{}", "missing field 'value'"},
  {"PUT", "/v1/users/alice/facts/editor", R"({"value":""})", "field 'value' is empty"},
  {"PUT", "/v1/users/alice/facts/editor", R"({"value":"x","ttl":1})", "unknown field 'ttl'"},
  {"PUT", "/v1/users/alice/facts/editor", R"({"value":"x","source_session":1})",
   "field 'source_session' must be a string"},
  {"PUT", "/v1/users/alice/facts/", R"({"value":"x"})", "the fact key is empty"},
  {"PUT", "/v1/users/alice/facts/%FF", R"({"value":"x"})", "the fact key is not valid UTF-8"},
  {"PUT", "/v1/users/%FE/facts/editor", R"({"value":"x"})", "the user is not valid UTF-8"},
  {"DELETE", "/v1/users/alice/facts/", "", "the fact key is empty"},
  {"GET", "/v1/users/alice/facts?limit=0", "", "parameter 'limit' must be within 1..1000"},
  {"GET", "/v1/users/alice/facts?limit=1001", "", "parameter 'limit' must be within 1..1000"},
  {"GET", "/v1/users/alice/facts?limit=ten", "", "parameter 'limit' must be an integer"},
  {"GET", "/v1/users/alice/facts?include_inactive=yes", "",
   "parameter 'include_inactive' must be true or false"},
  {"GET", "/v1/users/alice/facts?q=%FF", "", "parameter 'q' is not valid UTF-8"},
  {"POST", "/v1/sessions/k/facts", R"({"limit":"x"})", "field 'limit' must be an integer"},
  {"POST", "/v1/sessions/k/facts", R"({"limit":0})", "field 'limit' must be within 1..1000"},
  {"POST", "/v1/sessions/k/facts", R"({"user":7})", "field 'user' must be a string"},
  {"POST", "/v1/sessions/k/facts", R"({"facts":[]})", "unknown field 'facts'"},
};

BOOST_DATA_TEST_CASE_F(facts_fixture, bad_input_is_a_400_naming_what_was_wrong,
                       data::make(bad_cases), c) {
  serve();
  auto a = send(c.method, c.path, c.body);
  BOOST_TEST(a.status == 400, a.text);
  BOOST_TEST(a.body["error"]["code"] == "bad_request");
  std::string message = a.body["error"]["message"];
  BOOST_TEST(message.find(c.says) != std::string::npos, a.text);
}

BOOST_AUTO_TEST_CASE(facts_enter_a_session_only_on_request_and_only_the_sessions_users) {
  serve();
  put("alice", "editor", "vim");
  put("alice", "city", "住在 上海");
  put("bob", "pet", "a cat called Turing");
  auto hello = send("POST", "/v1/sessions/k1/messages",
                    json{{"user", "alice"}, {"role", "user"}, {"content", "hello"}}.dump());
  BOOST_REQUIRE_MESSAGE(hello.status == 201, hello.text);
  BOOST_TEST(memory_rows(live_of("k1", "alice")) == 0);
  auto in = send("POST", "/v1/sessions/k1/facts?user=alice", "");
  BOOST_REQUIRE_MESSAGE(in.status == 201, in.text);
  BOOST_TEST(in.body["facts"] == 2);
  BOOST_TEST(in.body["user"] == "alice");
  BOOST_TEST(in.body["session_id"] == hello.body["session_id"]);
  auto live = live_of("k1", "alice");
  BOOST_REQUIRE(memory_rows(live) == 1);
  const auto& row = live.back();
  BOOST_TEST(row["id"] == in.body["id"]);
  BOOST_TEST(row["role"] == "system");
  auto content = row["content"].get<std::string>();
  BOOST_TEST(content.find("- editor: vim") != std::string::npos);
  BOOST_TEST(content.find("- city: 住在 上海") != std::string::npos);
  BOOST_TEST(content.find("Turing") == std::string::npos);
  // Someone else's facts cannot be put into alice's session: bob's k1 is bob's own key.
  auto cross = send("POST", "/v1/sessions/k1/facts", json{{"user", "bob"}}.dump());
  BOOST_TEST(cross.status == 201, cross.text);
  BOOST_TEST(cross.body["session_id"] != hello.body["session_id"]);
  BOOST_TEST(memory_rows(live_of("k1", "alice")) == 1);
}

BOOST_AUTO_TEST_CASE(a_facts_request_with_a_query_injects_only_the_matching_facts) {
  serve();
  put("bob", "editor", "vim");
  put("bob", "pet", "a cat called Turing");
  // k2 is not open: the request starts bob's session like an append would.
  auto in = send("POST", "/v1/sessions/k2/facts", json{{"user", "bob"}, {"q", "cat"}}.dump());
  BOOST_REQUIRE_MESSAGE(in.status == 201, in.text);
  BOOST_TEST(in.body["facts"] == 1);
  auto s = get("/v1/sessions/k2?user=bob");
  BOOST_TEST(s.body["session"]["user_id"] == "bob");
  auto content = s.body["live"].back()["content"].get<std::string>();
  BOOST_TEST(content.find("- pet: a cat called Turing") != std::string::npos);
  BOOST_TEST(content.find("editor") == std::string::npos);
  // A user without facts gets the explicit empty memory, not silence.
  auto none = send("POST", "/v1/sessions/k3/facts", json{{"user", "carol"}}.dump());
  BOOST_REQUIRE_MESSAGE(none.status == 201, none.text);
  BOOST_TEST(none.body["facts"] == 0);
  BOOST_TEST(none.body["content"].get<std::string>().find("(no facts remembered)")
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_facts_routes_need_the_bearer_token_when_one_is_set) {
  api::http_api_options opt;
  opt.auth_token = "s3cret";
  serve(opt);
  put("alice", "editor", "vim");
  httplib::Client anonymous{"127.0.0.1", port};
  auto r = anonymous.Get("/v1/users/alice/facts");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 401);
  auto d = anonymous.Delete("/v1/users/alice/facts/editor");
  BOOST_REQUIRE(d);
  BOOST_TEST(d->status == 401);
  BOOST_TEST(keys_of(get("/v1/users/alice/facts")).size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // http_facts_test
