// Tests of keys in a user's namespace over the in-process HTTP API (docs/api.md
// "Authentication", policies/key_namespace.hpp), with user tokens for alice, bob and
// carol and the admin token: the same key under two users is two sessions and each
// reads its own; a key another user opened first is still its owner's to open (no
// first come, first served); bob never reads, appends to or shadows carol's key on any
// route or door; an admin reaches a user's key by naming the user (`?user=` or the
// body's `user`), and without one reaches gateway.default_user's; a key holding U+001F
// is refused naming it.
#include <boost/test/unit_test.hpp>

#include <memory>
#include <string>

#include "apps/common/api/tokens/token_store.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(http_namespaces_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

const std::string ns_admin_token = "admin-secret-token";
const std::string ns_alice_token = "mneme_0000000a_alice-secret";
const std::string ns_bob_token = "mneme_0000000b_bob-secret";
const std::string ns_carol_token = "mneme_0000000c_carol-secret";

std::string ns_line(const std::string& id, const std::string& token, const std::string& scope) {
  return id + " sha256:" + api::sha256_hex(token) + " " + scope + "\n";
}

struct ns_fixture : test::http_api_fixture {
  void serve_users() {
    api::http_api_options opt;
    opt.auth_token = ns_admin_token;
    auto set = api::token_set::parse(ns_line("0000000a", ns_alice_token, "user:alice")
                                       + ns_line("0000000b", ns_bob_token, "user:bob")
                                       + ns_line("0000000c", ns_carol_token, "user:carol"),
                                     "tokens");
    BOOST_REQUIRE_MESSAGE(set, testing::err_of(set));
    opt.tokens = std::make_shared<const api::token_set>(std::move(*set));
    serve(opt); // the fixture's own client carries the admin token
  }

  answer as(const std::string& token, const std::string& method, const std::string& path,
            const std::string& body = "", httplib::Headers h = {}) {
    httplib::Client c{"127.0.0.1", port};
    c.set_read_timeout(60, 0);
    h.emplace("Authorization", "Bearer " + token);
    if (method == "GET")
      return read(c.Get(path.c_str(), h));
    return read(c.Post(path.c_str(), h, body, "application/json"));
  }

  answer append_as(const std::string& token, const std::string& key, const std::string& text) {
    return as(token, "POST", "/v1/sessions/" + key + "/messages",
              json{{"role", "user"}, {"content", text}}.dump());
  }

  // The contents of the live rows of a state answer but the system prompt, in order.
  static std::string contents(const answer& state) {
    std::string out;
    for (const auto& m : state.body["live"])
      if (m["role"] != "system")
        out += m["content"].get<std::string>() + "|";
    return out;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(namespaces, ns_fixture)

BOOST_AUTO_TEST_CASE(the_same_key_under_two_users_is_two_sessions_each_reading_its_own) {
  serve_users();
  auto a = append_as(ns_alice_token, "inbox", "from alice");
  auto b = append_as(ns_bob_token, "inbox", "from bob");
  BOOST_REQUIRE_MESSAGE(a.status == 201, a.text);
  BOOST_REQUIRE_MESSAGE(b.status == 201, b.text); // once: 404, the key being alice's
  BOOST_TEST(a.body["session_id"] != b.body["session_id"]);

  auto hers = as(ns_alice_token, "GET", "/v1/sessions/inbox");
  auto his = as(ns_bob_token, "GET", "/v1/sessions/inbox");
  BOOST_REQUIRE_MESSAGE(hers.status == 200, hers.text);
  BOOST_REQUIRE_MESSAGE(his.status == 200, his.text);
  BOOST_TEST(contents(hers) == "from alice|");
  BOOST_TEST(contents(his) == "from bob|");
  // Clients see their own key, never the stored form.
  BOOST_TEST(hers.body["session"]["session_key"] == "inbox");
  BOOST_TEST(hers.text.find("\\u001f") == std::string::npos, hers.text);
  auto export_his = as(ns_bob_token, "GET", "/v1/sessions/inbox/export");
  BOOST_TEST(export_his.text.find("from bob") != std::string::npos);
  BOOST_TEST(export_his.text.find("from alice") == std::string::npos);

  // An admin names the user; without one it reaches gateway.default_user's namespace.
  auto admin_hers = get("/v1/sessions/inbox?user=alice");
  BOOST_REQUIRE_MESSAGE(admin_hers.status == 200, admin_hers.text);
  BOOST_TEST(contents(admin_hers) == "from alice|");
  BOOST_TEST(get("/v1/sessions/inbox/export?user=bob").text == export_his.text);
  BOOST_TEST(get("/v1/sessions/inbox").status == 404);
  auto listed = get("/v1/sessions?key=inbox&user=bob");
  BOOST_REQUIRE_EQUAL(listed.body["sessions"].size(), 1u);
  BOOST_TEST(listed.body["sessions"][0]["session_key"] == "inbox");
  BOOST_TEST(listed.body["sessions"][0]["user_id"] == "bob");
  // The admin's list shows the user beside each key.
  auto all = get("/v1/sessions");
  BOOST_REQUIRE_EQUAL(all.body["sessions"].size(), 2u);
  for (const auto& s : all.body["sessions"]) {
    BOOST_TEST(s["session_key"] == "inbox");
    BOOST_TEST((s["user_id"] == "alice" || s["user_id"] == "bob"));
  }
  // An admin's append naming a user in the body writes into that user's key.
  auto admin_write = post("/v1/sessions/inbox/messages",
                          json{{"user", "alice"}, {"role", "user"}, {"content", "by admin"}});
  BOOST_REQUIRE_MESSAGE(admin_write.status == 201, admin_write.text);
  BOOST_TEST(admin_write.body["session_id"] == a.body["session_id"]);
  auto two_users = post("/v1/sessions/inbox/messages?user=bob",
                        json{{"user", "alice"}, {"role", "user"}, {"content", "x"}});
  BOOST_TEST(two_users.status == 400, two_users.text);
}

BOOST_AUTO_TEST_CASE(a_key_another_user_opened_first_is_still_its_owners_to_open) {
  serve_users();
  auto bobs = append_as(ns_bob_token, "carol-inbox", "bob was here first");
  BOOST_REQUIRE_MESSAGE(bobs.status == 201, bobs.text);
  auto hers = append_as(ns_carol_token, "carol-inbox", "carol's own");
  BOOST_REQUIRE_MESSAGE(hers.status == 201, hers.text); // once: 404 for good
  auto state = as(ns_carol_token, "GET", "/v1/sessions/carol-inbox");
  BOOST_REQUIRE_MESSAGE(state.status == 200, state.text);
  BOOST_TEST(contents(state) == "carol's own|");
  BOOST_TEST(state.body["session"]["user_id"] == "carol");
}

BOOST_AUTO_TEST_CASE(bob_never_reads_appends_to_or_shadows_carols_key_on_any_route_or_door) {
  serve_users();
  auto first = append_as(ns_carol_token, "carol-inbox", "carol's secret");
  BOOST_REQUIRE_MESSAGE(first.status == 201, first.text);
  const auto carols_id = first.body["session_id"].get<std::string>();
  auto carols_data = [&] {
    return get("/v1/sessions/carol-inbox/export?user=carol").text
           + get("/v1/sessions/carol-inbox/checkpoints?user=carol").text
           + get("/v1/sessions?user=carol").text;
  };
  const auto before = carols_data();

  struct route_try {
    const char* method;
    const char* suffix;
    const char* body;
  };
  const route_try routes[] = {
    {"GET", "", ""},
    {"GET", "/export", ""},
    {"GET", "/rows", ""},
    {"GET", "/checkpoints", ""},
    {"GET", "/compactions", ""},
    {"POST", "/compact", "{}"},
    {"POST", "/checkpoints", R"({"name":"bobs"})"},
    {"POST", "/rollback", R"({"name":"bobs"})"},
    {"POST", "/messages", R"({"role":"user","content":"bob's row"})"},
    {"POST", "/turns", R"({"content":"bob's turn"})"},
    {"POST", "/facts", "{}"},
    {"POST", "/context", R"({"messages":[{"role":"user","content":"bob's context"}]})"},
    {"POST", "/usage", R"({"prompt_tokens":40,"completion_tokens":5})"},
    {"POST", "/model_error", R"({"status":503,"body":"down"})"},
  };
  for (const auto& r : routes) {
    auto a = as(ns_bob_token, r.method, std::string{"/v1/sessions/carol-inbox"} + r.suffix, r.body);
    BOOST_TEST(a.text.find("carol's secret") == std::string::npos, r.suffix << ": " << a.text);
    BOOST_TEST(a.text.find(carols_id) == std::string::npos, r.suffix << ": " << a.text);
  }
  const json chat{{"model", "mneme"}, {"messages", {{{"role", "user"}, {"content", "bob"}}}}};
  const json messages{{"model", "claude-sonnet-4-5"},
                      {"max_tokens", 64},
                      {"messages", {{{"role", "user"}, {"content", "bob"}}}}};
  const json responses{{"model", "mneme"}, {"input", "bob"}};
  struct door_try {
    const char* path;
    std::string body;
    const char* header;
  };
  const door_try doors[] = {
    {"/v1/chat/completions", chat.dump(), "X-Mneme-Session"},
    {"/v1/messages", messages.dump(), "X-Mneme-Session"},
    {"/v1/responses", responses.dump(), "session-id"},
  };
  for (const auto& d : doors) {
    auto a = as(ns_bob_token, "POST", d.path, d.body,
                {{d.header, "carol-inbox"}, {"anthropic-version", "2023-06-01"}});
    BOOST_TEST(a.status == 200, d.path << ": " << a.status << " " << a.text); // his own key
    BOOST_TEST(a.text.find("carol's secret") == std::string::npos, a.text);
  }
  auto mcp = as(ns_bob_token, "POST", "/mcp",
                json{{"jsonrpc", "2.0"},
                     {"id", 1},
                     {"method", "tools/call"},
                     {"params", {{"name", "session_context"}, {"arguments", {{"key", "carol-inbox"}}}}}}
                  .dump());
  BOOST_TEST(mcp.text.find("carol's secret") == std::string::npos, mcp.text);
  BOOST_TEST(mcp.text.find(carols_id) == std::string::npos, mcp.text);

  // Carol's session is untouched and still hers under the key; bob's writes went into
  // his own key of that name.
  BOOST_TEST(carols_data() == before);
  auto state = as(ns_carol_token, "GET", "/v1/sessions/carol-inbox");
  BOOST_REQUIRE_MESSAGE(state.status == 200, state.text);
  BOOST_TEST(state.body["session"]["id"] == carols_id);
  BOOST_TEST(contents(state) == "carol's secret|");
  auto his = as(ns_bob_token, "GET", "/v1/sessions/carol-inbox");
  BOOST_REQUIRE_MESSAGE(his.status == 200, his.text);
  BOOST_TEST(his.body["session"]["user_id"] == "bob");
  BOOST_TEST(his.body["session"]["id"] != carols_id);
}

BOOST_AUTO_TEST_CASE(a_key_holding_the_namespace_separator_is_refused_naming_it) {
  serve_users();
  const std::string sep_key = "carol%1Finbox";
  for (const auto& path : {"/v1/sessions/" + sep_key + "/messages", "/v1/sessions/" + sep_key}) {
    auto a = path.find("/messages") != std::string::npos
               ? append_as(ns_bob_token, "carol%1Finbox", "x")
               : as(ns_bob_token, "GET", path);
    BOOST_TEST(a.status == 400, path << ": " << a.text);
    BOOST_TEST(a.text.find("U+001F") != std::string::npos, a.text);
  }
  const json chat{{"model", "mneme"}, {"messages", {{{"role", "user"}, {"content", "x"}}}},
                  {"metadata", {{"session_id", std::string{"carol\x1f" "inbox"}}}}};
  auto door = as(ns_bob_token, "POST", "/v1/chat/completions", chat.dump());
  BOOST_TEST(door.status == 400, door.text);
  BOOST_TEST(door.text.find("U+001F") != std::string::npos, door.text);
  BOOST_TEST(get("/v1/sessions?user=bob").body["sessions"].empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // http_namespaces_test
