// Tests of the API's scoped credentials over the in-process HTTP API (http_api.hpp,
// policies/access_scope.hpp, docs/api.md "Authentication"): every route × (no token,
// a wrong token, a user token on its own data, a user token on another user's data,
// the admin token) with the status each gets, and that the refused requests change
// nothing; then the single rules: the user of a user token's request is the token's
// user, another user's key answers exactly like an unknown key, a session id counts as
// a key, the session list and search without ?user are the token's own, and a token
// set replaced at run time (the daemon's SIGHUP) applies to the next request.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "apps/common/api/tokens/token_store.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(http_scopes_test)

using namespace mneme;
using json = nlohmann::json;
namespace data = boost::unit_test::data;

namespace {

const std::string scope_admin_token = "admin-secret-token";
const std::string scope_alice_token = "mneme_0000000a_alice-secret";
const std::string scope_bob_token = "mneme_0000000b_bob-secret";

std::shared_ptr<const api::token_set> scope_tokens(const std::string& text) {
  auto set = api::token_set::parse(text, "tokens");
  BOOST_REQUIRE_MESSAGE(set, testing::err_of(set));
  return std::make_shared<const api::token_set>(std::move(*set));
}

std::string scope_line(const std::string& id, const std::string& token, const std::string& scope) {
  return id + " sha256:" + api::sha256_hex(token) + " " + scope + "\n";
}

// Who calls, and whose data the request names ({key}, {user} of the path).
enum class scope_caller { none, wrong, self, other, admin };

const char* scope_caller_name(scope_caller c) {
  switch (c) {
    case scope_caller::none: return "no token";
    case scope_caller::wrong: return "wrong token";
    case scope_caller::self: return "user token, own data";
    case scope_caller::other: return "user token, another user's data";
    case scope_caller::admin: return "admin token";
  }
  return "?";
}

struct scope_fixture : test::http_api_fixture {
  void serve_scoped() {
    api::http_api_options opt;
    opt.auth_token = scope_admin_token;
    opt.tokens = scope_tokens(scope_line("0000000a", scope_alice_token, "user:alice")
                              + scope_line("0000000b", scope_bob_token, "user:bob"));
    serve(opt); // the fixture's own client carries the admin token
    seed("alice");
    seed("bob");
  }

  // The user's session under "<user>-k" with a row and checkpoint "cp0", and a fact.
  void seed(const std::string& user) {
    auto key = user + "-k";
    auto a = post("/v1/sessions/" + key + "/messages",
                  json{{"user", user}, {"role", "user"}, {"content", "hello from " + user}});
    BOOST_REQUIRE_MESSAGE(a.status == 201, a.text);
    auto cp = post("/v1/sessions/" + key + "/checkpoints?user=" + user, json{{"name", "cp0"}});
    BOOST_REQUIRE_MESSAGE(cp.status == 201, cp.text);
    auto f = send("PUT", "/v1/users/" + user + "/facts/seeded", json{{"value", "v"}}.dump());
    BOOST_REQUIRE_MESSAGE(f.status == 200, f.text);
  }

  answer ask_with(const std::string& authorization, const std::string& method,
                  const std::string& path, const std::string& body,
                  const std::string& header = "") {
    httplib::Client c{"127.0.0.1", port};
    c.set_read_timeout(60, 0);
    httplib::Headers h;
    if (!authorization.empty())
      h.emplace("Authorization", authorization);
    if (auto colon = header.find(": "); colon != std::string::npos)
      h.emplace(header.substr(0, colon), header.substr(colon + 2));
    if (method == "GET")
      return read(c.Get(path.c_str(), h));
    if (method == "PUT")
      return read(c.Put(path.c_str(), h, body, "application/json"));
    if (method == "DELETE")
      return read(c.Delete(path.c_str(), h));
    return read(c.Post(path.c_str(), h, body, "application/json"));
  }

  answer ask_as(scope_caller who, const std::string& method, const std::string& path,
                const std::string& body, const std::string& header = "") {
    switch (who) {
      case scope_caller::none: return ask_with("", method, path, body, header);
      case scope_caller::wrong: return ask_with("Bearer not-a-token", method, path, body, header);
      case scope_caller::self:
      case scope_caller::other:
        return ask_with("Bearer " + scope_alice_token, method, path, body, header);
      case scope_caller::admin:
        return ask_with("Bearer " + scope_admin_token, method, path, body, header);
    }
    return {};
  }

  // Everything stored for bob: his session's export and his facts, old versions too.
  std::string bobs_data() {
    auto e = get("/v1/sessions/bob-k/export?user=bob");
    auto f = get("/v1/users/bob/facts?include_inactive=true");
    auto l = get("/v1/sessions?user=bob");
    return e.text + "\n" + f.text + "\n" + l.text;
  }
};

struct scope_route_case {
  const char* method;
  const char* path;  // {key} and {user} are replaced by the caller's target
  const char* body;
  int self;          // status of the user token on its own data
  int other;         // status of the user token on another user's data (a {key}: its own
                     // key of that name, a new one: policies/key_namespace.hpp)
  int admin;         // status of the admin token (on the other user's data, a {key} with
                     // ?user= naming that user)
  bool needs_token;  // false: /v1/health, the console's files
  const char* header = ""; // "Name: value" sent too ({key}, {user} replaced), or empty
};

std::ostream& operator<<(std::ostream& os, const scope_route_case& c) {
  return os << c.method << " " << c.path << (*c.header ? " with " : "") << c.header;
}

std::string scope_fill(std::string text, const std::string& user) {
  for (auto [placeholder, value] : {std::pair<std::string, std::string>{"{key}", user + "-k"},
                                    {"{user}", user}}) {
    for (auto at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder))
      text.replace(at, placeholder.size(), value);
  }
  return text;
}

// One line per route of http_api.cpp's add_routes.
const scope_route_case scope_routes[] = {
  {"GET", "/v1/health", "", 200, 200, 200, false},
  {"GET", "/metrics", "", 403, 403, 200, true},
  {"GET", "/v1/sessions?user={user}", "", 200, 403, 200, true},
  {"GET", "/v1/search?q=hello&user={user}", "", 200, 403, 200, true},
  {"GET", "/v1/sessions/{key}", "", 200, 404, 200, true},
  {"POST", "/v1/sessions/{key}/messages", R"({"role":"user","content":"more"})", 201, 201, 201,
   true},
  {"POST", "/v1/sessions/{key}/turns", R"({"content":"a question"})", 200, 200, 200, true},
  {"POST", "/v1/sessions/{key}/compact", "{}", 200, 404, 200, true},
  {"POST", "/v1/sessions/{key}/checkpoints", R"({"name":"cp1"})", 201, 404, 201, true},
  {"GET", "/v1/sessions/{key}/checkpoints", "", 200, 404, 200, true},
  {"POST", "/v1/sessions/{key}/rollback", R"({"name":"cp0"})", 200, 404, 200, true},
  {"GET", "/v1/sessions/{key}/export", "", 200, 404, 200, true},
  {"GET", "/v1/sessions/{key}/rows", "", 200, 404, 200, true},
  {"GET", "/console/", "", 200, 200, 200, false}, // the page holds no data
  {"POST", "/v1/sessions/{key}/facts", "{}", 201, 201, 201, true},
  {"GET", "/v1/users/{user}/facts", "", 200, 403, 200, true},
  {"PUT", "/v1/users/{user}/facts/color", R"({"value":"blue"})", 200, 403, 200, true},
  {"DELETE", "/v1/users/{user}/facts/seeded", "", 200, 403, 200, true},
  {"POST", "/v1/sessions/{key}/context", R"({"messages":[{"role":"user","content":"next"}]})",
   200, 200, 200, true},
  {"POST", "/v1/sessions/{key}/usage", R"({"prompt_tokens":40,"completion_tokens":5})", 200,
   404, 200, true},
  {"POST", "/v1/sessions/{key}/model_error", R"({"status":503,"body":"upstream down"})", 200,
   404, 200, true},
  {"GET", "/v1/models", "", 200, 200, 200, true},
  // The OpenAI door: stateless (the body names the user), then on a session key.
  {"POST", "/v1/chat/completions",
   R"({"model":"mneme","user":"{user}","messages":[{"role":"user","content":"hi"}]})", 200, 403,
   200, true},
  {"POST", "/v1/chat/completions", R"({"model":"mneme","messages":[{"role":"user","content":"hi"}]})",
   200, 200, 200, true, "X-Mneme-Session: {key}"},
  // The Conversations API: a session key is a conversation (conv_ ids: a case below);
  // another user's key names the caller's own key of that name, which has no session.
  {"POST", "/v1/conversations", R"({"metadata":{"a":"b"}})", 200, 200, 200, true},
  {"GET", "/v1/conversations/{key}", "", 200, 404, 200, true},
  {"POST", "/v1/conversations/{key}", R"({"metadata":{}})", 200, 404, 200, true},
  {"GET", "/v1/conversations/{key}/items", "", 200, 404, 200, true},
  {"POST", "/v1/conversations/{key}/items", R"({"items":[{"role":"user","content":"more"}]})",
   200, 404, 200, true},
};

} // namespace

// The refused callers go first, so a refused request that changed something would show
// in bob's data before the allowed ones run.
BOOST_DATA_TEST_CASE_F(scope_fixture, every_route_answers_each_caller_by_its_scope,
                       data::make(scope_routes), route) {
  serve_scoped();
  auto before = bobs_data();
  for (auto who : {scope_caller::none, scope_caller::wrong, scope_caller::other,
                   scope_caller::self, scope_caller::admin}) {
    auto target = who == scope_caller::self ? "alice" : "bob";
    auto path = scope_fill(route.path, target);
    bool key_route = std::string{route.path}.rfind("/v1/sessions/{key}", 0) == 0
                     || std::string{route.path}.rfind("/v1/conversations/{key}", 0) == 0;
    if (who == scope_caller::admin && key_route)
      path += "?user=" + std::string{target}; // an admin names whose key it is
    auto a = ask_as(who, route.method, path, scope_fill(route.body, target),
                    scope_fill(route.header, target));
    int want = who == scope_caller::self    ? route.self
               : who == scope_caller::other ? route.other
                                            : route.admin;
    if (route.needs_token && (who == scope_caller::none || who == scope_caller::wrong))
      want = 401;
    BOOST_TEST(a.status == want, scope_caller_name(who) << ": " << route.method << " " << path
                                                        << " -> " << a.status << " " << a.text);
    if (a.status >= 400 && a.content_type == "application/json")
      BOOST_TEST(a.body["error"]["code"]
                   == (want == 401 ? "unauthorized" : want == 403 ? "forbidden" : "not_found"));
    if (who == scope_caller::other)
      BOOST_TEST(bobs_data() == before, "a refused request changed bob's data");
  }
}

BOOST_FIXTURE_TEST_SUITE(scope_rules, scope_fixture)

BOOST_AUTO_TEST_CASE(another_users_key_answers_exactly_like_an_unknown_key) {
  serve_scoped();
  auto theirs = ask_as(scope_caller::self, "GET", "/v1/sessions/bob-k/export", "");
  auto nobody = ask_as(scope_caller::self, "GET", "/v1/sessions/no-k/export", "");
  BOOST_TEST(theirs.status == 404);
  BOOST_TEST(nobody.status == 404);
  BOOST_TEST(theirs.body["error"]["code"] == nobody.body["error"]["code"]);
  auto same_key = theirs.text;
  same_key.replace(same_key.find("bob-k"), 5, "no-k");
  BOOST_TEST(same_key == nobody.text);
  auto m = theirs.body["error"]["message"].get<std::string>();
  BOOST_TEST(m.find("bob-k") != std::string::npos, m);
  BOOST_TEST(m.find("bob'") == std::string::npos, m); // the owner is not named
}

BOOST_AUTO_TEST_CASE(another_users_conversation_and_its_responses_answer_like_unknown_ids) {
  serve_scoped();
  auto bob = [this](const std::string& method, const std::string& path, const json& body) {
    return ask_with("Bearer " + scope_bob_token, method, path, body.dump());
  };
  auto made = bob("POST", "/v1/conversations",
                  {{"items", {{{"role", "user"}, {"content", "bob's plan"}}}}});
  BOOST_REQUIRE_MESSAGE(made.status == 200, made.text);
  auto id = made.body["id"].get<std::string>();
  auto resp = bob("POST", "/v1/responses", {{"conversation", id}, {"input", "go on"}});
  BOOST_REQUIRE_MESSAGE(resp.status == 200, resp.text);
  auto resp_id = resp.body["id"].get<std::string>();
  auto items = bob("GET", "/v1/conversations/" + id + "/items", json::object());
  BOOST_REQUIRE_MESSAGE(items.status == 200, items.text);
  auto item = items.body["data"][0]["id"].get<std::string>();
  auto bobs = [&] {
    return get("/v1/conversations/" + id + "/items?limit=100").text + get("/v1/conversations/" + id).text;
  };
  auto before = bobs();
  struct probe {
    std::string method, path, body;
  };
  auto conv = "/v1/conversations/" + id;
  for (const auto& p : std::vector<probe>{
         {"GET", conv, ""},
         {"POST", conv, R"({"metadata":{}})"},
         {"DELETE", conv, ""},
         {"GET", conv + "/items", ""},
         {"POST", conv + "/items", R"({"items":[{"role":"user","content":"alice was here"}]})"},
         {"GET", conv + "/items/" + item, ""},
         {"DELETE", conv + "/items/" + item, ""},
         {"GET", "/v1/responses/" + resp_id + "/input_items", ""},
         {"GET", "/v1/responses/" + resp_id, ""},
         {"POST", "/v1/responses", json{{"conversation", id}, {"input", "hi"}}.dump()}}) {
    auto a = ask_as(scope_caller::other, p.method, p.path, p.body);
    BOOST_TEST(a.status == 404, p.method << " " << p.path << " -> " << a.status << " " << a.text);
    BOOST_TEST(a.body["error"]["code"] == "not_found", p.method << " " << p.path);
    // an id that exists nowhere is answered the same way
    auto unknown = p.path;
    for (auto at = unknown.find(id); at != std::string::npos; at = unknown.find(id))
      unknown.replace(at, id.size(), "conv_00000000000000000000000000000000");
    auto body = p.body;
    if (auto at = body.find(id); at != std::string::npos)
      body.replace(at, id.size(), "conv_00000000000000000000000000000000");
    BOOST_TEST(ask_as(scope_caller::other, p.method, unknown, body).status == 404, unknown);
  }
  BOOST_TEST(bobs() == before, "a refused request changed bob's conversation");
  BOOST_TEST(bob("GET", conv, json::object()).status == 200);
  // alice's own conversation belongs to her
  auto mine = ask_as(scope_caller::self, "POST", "/v1/conversations", "{}");
  BOOST_REQUIRE_MESSAGE(mine.status == 200, mine.text);
  auto mine_id = mine.body["id"].get<std::string>();
  BOOST_TEST(ask_as(scope_caller::self, "GET", "/v1/conversations/" + mine_id, "").status == 200);
  BOOST_TEST(bob("GET", "/v1/conversations/" + mine_id, json::object()).status == 404);
  auto turn = ask_as(scope_caller::self, "POST", "/v1/responses",
                     json{{"conversation", mine_id}, {"input", "hello"}}.dump());
  BOOST_REQUIRE_MESSAGE(turn.status == 200, turn.text);
  BOOST_TEST(get("/v1/sessions/" + mine_id + "?user=alice&live=false").body["session"]["user_id"]
             == "alice");
}

BOOST_AUTO_TEST_CASE(a_user_token_writes_as_its_user_and_may_not_name_another) {
  serve_scoped();
  auto named = ask_as(scope_caller::self, "POST", "/v1/sessions/new-k/messages",
                      R"({"user":"bob","role":"user","content":"as bob"})");
  BOOST_TEST(named.status == 403);
  BOOST_TEST(named.body["error"]["message"].get<std::string>().find("field 'user'")
             != std::string::npos);
  BOOST_TEST(get("/v1/sessions?key=new-k").body["sessions"].empty());
  // No user given: the new key is opened for the token's user, not gateway.default_user.
  auto mine = ask_as(scope_caller::self, "POST", "/v1/sessions/new-k/messages",
                     R"({"role":"user","content":"mine"})");
  BOOST_REQUIRE_MESSAGE(mine.status == 201, mine.text);
  auto state = get("/v1/sessions/new-k?live=false&user=alice");
  BOOST_TEST(state.body["session"]["user_id"] == "alice", state.text);
  auto turn = ask_as(scope_caller::self, "POST", "/v1/sessions/t-k/turns",
                     R"({"user":"alice","content":"hi"})");
  BOOST_TEST(turn.status == 200, turn.text);
  auto inject = ask_as(scope_caller::self, "POST", "/v1/sessions/alice-k/facts",
                       R"({"user":"bob"})");
  BOOST_TEST(inject.status == 403, inject.text);
}

BOOST_AUTO_TEST_CASE(a_session_id_of_another_user_is_hidden_like_its_key) {
  serve_scoped();
  auto id = get("/v1/sessions/bob-k?live=false&user=bob").body["session"]["id"].get<std::string>();
  BOOST_TEST(ask_as(scope_caller::admin, "GET", "/v1/sessions/" + id, "").status == 200);
  for (auto path : {"/v1/sessions/" + id, "/v1/sessions/" + id + "/export",
                    "/v1/sessions/" + id + "/checkpoints"})
    BOOST_TEST(ask_as(scope_caller::self, "GET", path, "").status == 404, path);
  auto own = get("/v1/sessions/alice-k?live=false&user=alice").body["session"]["id"].get<std::string>();
  BOOST_TEST(ask_as(scope_caller::self, "GET", "/v1/sessions/" + own + "/export", "").status
             == 200);
}

BOOST_AUTO_TEST_CASE(the_session_list_and_search_without_a_user_are_the_tokens_own) {
  serve_scoped();
  auto all = get("/v1/sessions");
  BOOST_TEST(all.body["sessions"].size() == 2u);
  auto listed = ask_as(scope_caller::self, "GET", "/v1/sessions", "");
  BOOST_REQUIRE_MESSAGE(listed.status == 200, listed.text);
  BOOST_REQUIRE(listed.body["sessions"].size() == 1u);
  BOOST_TEST(listed.body["sessions"][0]["user_id"] == "alice");
  auto found = ask_as(scope_caller::self, "GET", "/v1/search?q=hello", "");
  BOOST_REQUIRE_MESSAGE(found.status == 200, found.text);
  BOOST_TEST(found.text.find("hello from alice") != std::string::npos, found.text);
  BOOST_TEST(found.text.find("hello from bob") == std::string::npos, found.text);
}

BOOST_AUTO_TEST_CASE(the_admin_token_still_works_beside_a_tokens_file) {
  serve_scoped();
  BOOST_TEST(ask_with("Bearer " + scope_admin_token, "GET", "/metrics", "").status == 200);
  auto m = ask_with("Bearer " + scope_admin_token, "GET", "/metrics", "");
  BOOST_TEST(m.text.find("mneme_http_forbidden_total") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_replaced_token_set_applies_to_the_next_request) {
  serve_scoped();
  BOOST_TEST(ask_with("Bearer " + scope_bob_token, "GET", "/v1/sessions/bob-k", "").status
             == 200);
  // bob's token revoked, alice's made an admin.
  server->api().set_tokens(scope_tokens(scope_line("0000000a", scope_alice_token, "admin")));
  BOOST_TEST(ask_with("Bearer " + scope_bob_token, "GET", "/v1/sessions/bob-k", "").status
             == 401);
  BOOST_TEST(ask_with("Bearer " + scope_alice_token, "GET", "/v1/sessions/bob-k?user=bob", "")
               .status
             == 200);
  BOOST_TEST(ask_with("Bearer " + scope_alice_token, "GET", "/metrics", "").status == 200);
}

BOOST_AUTO_TEST_CASE(an_empty_tokens_file_refuses_everyone_but_health) {
  api::http_api_options opt;
  opt.tokens = scope_tokens("# no tokens yet\n");
  serve(opt);
  BOOST_TEST(ask_with("", "GET", "/v1/sessions", "").status == 401);
  BOOST_TEST(ask_with("Bearer anything", "GET", "/v1/sessions", "").status == 401);
  BOOST_TEST(ask_with("", "GET", "/v1/health", "").status == 200);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // http_scopes_test
