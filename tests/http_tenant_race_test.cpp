// Regression tests of two ways a user token once reached another user's session, over the
// in-process HTTP API with two user tokens (alice, bob) and the admin token:
//   - the race on a new key: the owner's first append creating the session while the
//     other user asks for the key (reads, a compaction, a checkpoint). Ownership was
//     checked on a lookup of the key before the route ran and the route read the key
//     again, so an answer could carry the owner's session. Now every answer to the other
//     user is the 404 of an unknown key, whatever the interleaving; the test counts the
//     tries and the foreign answers (0) and prints both;
//   - a session id sent as a door's session header (or a route's {key}) by another
//     user: it once opened the sender's own session under the owner's id, after which
//     the owner's reads by id answered 404. Now it is the 404 of an unknown key on every
//     door and route, nothing is created, and the owner's reads by id are untouched.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/api/tokens/token_store.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(http_tenant_race_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

const std::string race_admin_token = "admin-secret-token";
const std::string race_alice_token = "mneme_0000000a_alice-secret";
const std::string race_bob_token = "mneme_0000000b_bob-secret";

std::string race_token_line(const std::string& id, const std::string& token,
                            const std::string& scope) {
  return id + " sha256:" + api::sha256_hex(token) + " " + scope + "\n";
}

// One answer as a worker thread keeps it (no Boost.Test outside the test thread).
struct seen_answer {
  std::string what; // method and path
  int status = 0;   // 0: no HTTP answer
  std::string text;
};

// What bob asks about a key while alice may be creating it: every read of a key_owned
// route, and two writes that act on an existing session only.
struct probe {
  const char* method;
  const char* suffix; // after /v1/sessions/{key}
  const char* body;
};
const probe race_probes[] = {
  {"GET", "", ""},
  {"GET", "/export", ""},
  {"GET", "/rows", ""},
  {"GET", "/checkpoints", ""},
  {"GET", "/compactions", ""},
  {"POST", "/compact", "{}"},
  {"POST", "/checkpoints", R"({"name":"bobs"})"},
};

struct race_fixture : test::http_api_fixture {
  void serve_tenants() {
    api::http_api_options opt;
    opt.auth_token = race_admin_token;
    auto set = api::token_set::parse(race_token_line("0000000a", race_alice_token, "user:alice")
                                       + race_token_line("0000000b", race_bob_token, "user:bob"),
                                     "tokens");
    BOOST_REQUIRE_MESSAGE(set, testing::err_of(set));
    opt.tokens = std::make_shared<const api::token_set>(std::move(*set));
    serve(opt); // the fixture's own client carries the admin token
  }

  seen_answer ask(httplib::Client& c, const std::string& token, const std::string& method,
                  const std::string& path, const std::string& body,
                  httplib::Headers headers = {}) {
    headers.emplace("Authorization", "Bearer " + token);
    auto r = method == "GET" ? c.Get(path.c_str(), headers)
                             : c.Post(path.c_str(), headers, body, "application/json");
    seen_answer a{method + " " + path, 0, {}};
    if (r) {
      a.status = r->status;
      a.text = r->body;
    }
    return a;
  }

  httplib::Client client_for_thread() {
    httplib::Client c{"127.0.0.1", port};
    c.set_read_timeout(120, 0);
    c.set_keep_alive(true);
    return c;
  }

  std::string session_id_of(const std::string& key, const std::string& user) {
    auto s = get("/v1/sessions/" + key + "?live=false&user=" + user);
    BOOST_REQUIRE_MESSAGE(s.status == 200, s.text);
    return s.body["session"]["id"].get<std::string>();
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(a_key_its_owner_creates_while_another_user_polls_is_never_answered_to_him,
                        race_fixture) {
  serve_tenants();
  constexpr int keys = 150;
  std::vector<seen_answer> bobs;      // every answer bob got
  std::vector<seen_answer> alices;    // alice's appends
  int64_t after_creation = 0;         // bob's answers sent once alice's session existed
  for (int k = 0; k < keys; ++k) {
    auto key = "fresh-" + std::to_string(k);
    std::atomic<bool> created{false};
    std::atomic<bool> polling{false};
    std::vector<seen_answer> mine;
    int64_t late = 0;
    std::thread bob([&] {
      auto c = client_for_thread();
      // Polls from before alice's append until two full rounds after it was answered.
      int rounds_after = 0;
      for (size_t i = 0; rounds_after < 2; ++i) {
        const auto& p = race_probes[i % std::size(race_probes)];
        bool done_before = created.load();
        polling.store(true); // alice starts while this request is on its way
        mine.push_back(ask(c, race_bob_token, p.method, "/v1/sessions/" + key + p.suffix, p.body));
        if (done_before)
          ++late;
        if (done_before && i % std::size(race_probes) == std::size(race_probes) - 1)
          ++rounds_after;
      }
    });
    {
      auto c = client_for_thread();
      while (!polling.load()) // bob's first request is (about to be) on its way
        std::this_thread::yield();
      auto row = json{{"role", "user"}, {"content", "alice's secret #" + std::to_string(k)}};
      alices.push_back(
        ask(c, race_alice_token, "POST", "/v1/sessions/" + key + "/messages", row.dump()));
      created.store(true);
    }
    bob.join();
    after_creation += late;
    bobs.insert(bobs.end(), mine.begin(), mine.end());
  }

  int64_t foreign = 0, not_found = 0;
  for (const auto& a : bobs) {
    if (a.status == 404 && a.text.find("\"not_found\"") != std::string::npos
        && a.text.find("alice") == std::string::npos)
      ++not_found;
    else {
      ++foreign;
      BOOST_TEST_MESSAGE("foreign answer to bob: " << a.what << " -> " << a.status << " "
                                                   << a.text.substr(0, 200));
    }
  }
  BOOST_TEST_MESSAGE("race: " << keys << " fresh keys, " << bobs.size() << " tries by bob ("
                              << after_creation << " after alice's session existed), "
                              << foreign << " foreign answers");
  BOOST_TEST(foreign == 0);
  BOOST_TEST(not_found == static_cast<int64_t>(bobs.size()));
  BOOST_TEST(after_creation >= keys * static_cast<int64_t>(std::size(race_probes) + 1));
  // Alice opened every key, and bob left nothing in her sessions (no checkpoint).
  for (int k = 0; k < keys; ++k) {
    BOOST_TEST(alices[static_cast<size_t>(k)].status == 201, alices[static_cast<size_t>(k)].text);
    auto key = "fresh-" + std::to_string(k);
    auto cps = get("/v1/sessions/" + key + "/checkpoints?user=alice");
    BOOST_TEST(cps.body["checkpoints"].empty(), key << ": " << cps.text);
    auto s = get("/v1/sessions/" + key + "?live=false&user=alice");
    BOOST_TEST(s.body["session"]["user_id"] == "alice", key);
  }
}

BOOST_FIXTURE_TEST_CASE(another_users_session_id_as_a_session_header_is_refused_on_every_door,
                        race_fixture) {
  serve_tenants();
  auto c = client_for_thread();
  auto first = ask(c, race_alice_token, "POST", "/v1/chat/completions",
                   json{{"model", "mneme"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}}
                     .dump(),
                   {{"X-Mneme-Session", "alice-door"}});
  BOOST_REQUIRE_MESSAGE(first.status == 200, first.text);
  auto id = session_id_of("alice-door", "alice");
  auto rows_before = get("/v1/sessions/" + id + "/export").text;

  const json chat{{"model", "mneme"}, {"messages", {{{"role", "user"}, {"content", "mine now"}}}}};
  const json messages{{"model", "claude-sonnet-4-5"},
                      {"max_tokens", 64},
                      {"messages", {{{"role", "user"}, {"content", "mine now"}}}}};
  const json responses{{"model", "mneme"}, {"input", "mine now"}};
  struct door_try {
    const char* path;
    std::string body;
    const char* header;
  };
  const door_try tries[] = {
    {"/v1/chat/completions", chat.dump(), "X-Mneme-Session"},
    {"/v1/chat/completions", chat.dump(), "X-Session-Id"},
    {"/v1/messages", messages.dump(), "X-Mneme-Session"},
    {"/v1/responses", responses.dump(), "X-Mneme-Session"},
    {"/v1/responses", responses.dump(), "session-id"},
  };
  for (const auto& t : tries) {
    auto a = ask(c, race_bob_token, "POST", t.path, t.body,
                 {{t.header, id}, {"anthropic-version", "2023-06-01"}});
    BOOST_TEST(a.status == 404,
               t.path << " with " << t.header << ": " << a.status << " " << a.text);
    BOOST_TEST(a.text.find("alice") == std::string::npos, a.text);
  }
  // The routes take a session id as a {key} the same way.
  for (auto suffix : {"/messages", "/turns", "/context"}) {
    std::string s = suffix;
    auto body = s == "/messages" ? R"({"role":"user","content":"mine"})"
                : s == "/turns"  ? R"({"content":"mine"})"
                                 : R"({"messages":[{"role":"user","content":"x"}]})";
    auto a = ask(c, race_bob_token, "POST", "/v1/sessions/" + id + suffix, body);
    BOOST_TEST(a.status == 404, suffix << ": " << a.status << " " << a.text);
  }

  // Nothing was opened under the id, and the owner's reads by id still answer her session.
  auto under_id = get("/v1/sessions?key=" + id + "&user=bob");
  BOOST_TEST(under_id.body["sessions"].empty(), under_id.text);
  auto by_bob = get("/v1/sessions?user=bob");
  BOOST_TEST(by_bob.body["sessions"].empty(), by_bob.text);
  auto hers = ask(c, race_alice_token, "GET", "/v1/sessions/" + id + "?live=false", "");
  BOOST_REQUIRE_MESSAGE(hers.status == 200, hers.text);
  auto state = json::parse(hers.text);
  BOOST_TEST(state["session"]["id"] == id);
  BOOST_TEST(state["session"]["user_id"] == "alice");
  BOOST_TEST(get("/v1/sessions/" + id + "/export").text == rows_before);

  // Her own id as her session header is hers to use.
  auto own = ask(c, race_alice_token, "POST", "/v1/chat/completions", chat.dump(),
                 {{"X-Mneme-Session", id}});
  BOOST_TEST(own.status == 200, own.text);
}

BOOST_AUTO_TEST_SUITE_END()
