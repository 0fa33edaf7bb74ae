// GET /v1/sessions/{key}/compactions over the in-process HTTP API (routes/session_routes.cpp,
// docs/api.md): a session's compactions from its summary rows, oldest first, with the id
// range each replaced and whether a later compaction archived it; the key resolved and
// scoped as for the checkpoints (a stored session id works, another user's key and an
// unknown key are 404), each with its compaction log row, and every logged attempt.
#include <boost/test/unit_test.hpp>

#include <memory>
#include <string>
#include <vector>

#include "apps/common/api/tokens/token_store.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(http_compactions_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

const std::string compactions_admin_token = "admin-compactions-token";
const std::string compactions_alice_token = "mneme_0000000a_alice-compactions";
const std::string compactions_bob_token = "mneme_0000000b_bob-compactions";

struct compactions_fixture : test::http_api_fixture {
  void serve_scoped() {
    auto line = [](const std::string& id, const std::string& token, const std::string& scope) {
      return id + " sha256:" + api::sha256_hex(token) + " " + scope + "\n";
    };
    auto set = api::token_set::parse(line("0000000a", compactions_alice_token, "user:alice")
                                       + line("0000000b", compactions_bob_token, "user:bob"),
                                     "tokens");
    BOOST_REQUIRE_MESSAGE(set, testing::err_of(set));
    api::http_api_options opt;
    opt.auth_token = compactions_admin_token;
    opt.tokens = std::make_shared<const api::token_set>(std::move(*set));
    serve(opt); // the fixture's own client carries the admin token
  }

  // Alice's session under `key`: 60 long rows (a summary of them is smaller).
  std::vector<int64_t> seed(const std::string& key) {
    std::vector<int64_t> ids;
    for (int i = 0; i < 60; ++i) {
      auto a = post("/v1/sessions/" + key + "/messages",
                    json{{"user", "alice"},
                         {"role", i % 2 ? "assistant" : "user"},
                         {"content", "line " + std::to_string(i) + " of the quarterly budget review"
                                       + std::string(400, 'x')}});
      BOOST_REQUIRE_MESSAGE(a.status == 201, a.text);
      ids.push_back(a.body["id"].get<int64_t>());
    }
    return ids;
  }

  answer get_as(const std::string& token, const std::string& path) {
    httplib::Client c{"127.0.0.1", port};
    c.set_read_timeout(60, 0);
    c.set_bearer_token_auth(token.c_str());
    return read(c.Get(path.c_str()));
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(a_manual_compaction_is_listed_with_the_range_it_replaced,
                        compactions_fixture) {
  serve_scoped();
  auto ids = seed("budget");
  auto none = get("/v1/sessions/budget/compactions?user=alice");
  BOOST_REQUIRE_MESSAGE(none.status == 200, none.text);
  BOOST_TEST(none.body["compactions"].empty());

  auto local = post("/v1/sessions/budget/compact?user=alice", json{{"around_id", ids[30]}, {"radius", 2}});
  BOOST_REQUIRE_MESSAGE(local.status == 200, local.text);
  BOOST_REQUIRE(local.body["committed"] == true);
  auto listed = get("/v1/sessions/budget/compactions?user=alice");
  BOOST_REQUIRE_MESSAGE(listed.status == 200, listed.text);
  auto state = get("/v1/sessions/budget?live=false&user=alice");
  BOOST_TEST(listed.body["session_id"] == state.body["session"]["id"]);
  auto list = listed.body["compactions"];
  BOOST_REQUIRE(list.size() == 1u);
  BOOST_TEST(list[0]["id"] == local.body["summary_id"]);
  BOOST_TEST(list[0]["replaced_first_id"] == ids[28]);
  BOOST_TEST(list[0]["replaced_last_id"] == ids[32]);
  BOOST_TEST(list[0]["state"] == "live");
  BOOST_TEST(list[0]["token_estimate"].get<int64_t>() > 0);
  BOOST_TEST(list[0]["created_at_ms"].get<int64_t>() > 0);

  // A whole-session compaction replaces the first summary with the rest of the middle:
  // both are listed, oldest first, the first one archived.
  auto whole = post("/v1/sessions/budget/compact?user=alice", json::object());
  BOOST_REQUIRE_MESSAGE(whole.status == 200, whole.text);
  BOOST_REQUIRE(whole.body["committed"] == true);
  auto both = get("/v1/sessions/budget/compactions?user=alice").body["compactions"];
  BOOST_REQUIRE(both.size() == 2u);
  BOOST_TEST(both[0]["id"] == local.body["summary_id"]);
  BOOST_TEST(both[0]["state"] == "archived");
  BOOST_TEST(both[1]["id"] == whole.body["summary_id"]);
  BOOST_TEST(both[1]["state"] == "live");
  BOOST_TEST(both[1]["replaced_first_id"].get<int64_t>() < ids[28]);
  BOOST_TEST(both[1]["replaced_last_id"].get<int64_t>() > ids[32]);
}

BOOST_FIXTURE_TEST_CASE(compactions_are_read_by_key_or_session_id_and_scoped_like_checkpoints,
                        compactions_fixture) {
  serve_scoped();
  auto ids = seed("owned");
  auto local = post("/v1/sessions/owned/compact?user=alice", json{{"around_id", ids[10]}, {"radius", 1}});
  BOOST_REQUIRE_MESSAGE(local.status == 200, local.text);
  auto sid = get("/v1/sessions/owned?live=false&user=alice").body["session"]["id"].get<std::string>();
  auto by_id = get("/v1/sessions/" + sid + "/compactions");
  BOOST_REQUIRE_MESSAGE(by_id.status == 200, by_id.text);
  BOOST_TEST(by_id.body["session_id"] == sid);
  BOOST_TEST(by_id.body["compactions"].size() == 1u);

  auto own = get_as(compactions_alice_token, "/v1/sessions/owned/compactions");
  BOOST_REQUIRE_MESSAGE(own.status == 200, own.text);
  BOOST_TEST(own.body["compactions"].size() == 1u);
  auto other = get_as(compactions_bob_token, "/v1/sessions/owned/compactions");
  BOOST_TEST(other.status == 404);
  BOOST_TEST(other.body["error"]["code"] == "not_found");
  BOOST_TEST(other.body["error"]["message"] == "no session under key or id 'owned'");
  auto unknown = get("/v1/sessions/nobody/compactions");
  BOOST_TEST(unknown.status == 404);
  BOOST_TEST(unknown.body["error"]["code"] == "not_found");
  BOOST_TEST(unknown.body["error"]["message"] == "no session under key or id 'nobody'");
}

BOOST_FIXTURE_TEST_CASE(a_compaction_carries_its_log_row_and_the_log_lists_every_attempt,
                        compactions_fixture) {
  serve_scoped();
  auto ids = seed("logged");
  // Identifiers for the retention figures, in the middle of the session.
  for (int i = 0; i < 4; ++i) {
    auto a = post("/v1/sessions/logged/messages?user=alice",
                  json{{"role", "user"},
                       {"content", "edit src/budget" + std::to_string(i)
                                     + ".cpp and run `make report` " + std::string(300, 'y')}});
    BOOST_REQUIRE_MESSAGE(a.status == 201, a.text);
  }
  seed("logged");
  auto whole = post("/v1/sessions/logged/compact?user=alice", json::object());
  BOOST_REQUIRE_MESSAGE(whole.status == 200, whole.text);
  BOOST_REQUIRE(whole.body["committed"] == true);
  auto listed = get("/v1/sessions/logged/compactions?user=alice");
  BOOST_REQUIRE_MESSAGE(listed.status == 200, listed.text);
  auto list = listed.body["compactions"];
  BOOST_REQUIRE(list.size() == 1u);
  const auto& one = list[0];
  BOOST_TEST(one["logged"] == true);
  BOOST_TEST(one["id"] == whole.body["summary_id"]);
  BOOST_TEST(one["summary_id"] == whole.body["summary_id"]);
  BOOST_TEST(one["outcome"] == "committed");
  BOOST_TEST(one["trigger"] == "T12_manual_session");
  BOOST_TEST(one["origin"] == "manual");
  BOOST_TEST(one["mode"] == "summarizer");
  BOOST_TEST(one["first_id"] == one["replaced_first_id"]);
  BOOST_TEST(one["last_id"] == one["replaced_last_id"]);
  BOOST_TEST(one["rows_replaced"].get<int64_t>()
             == one["last_id"].get<int64_t>() - one["first_id"].get<int64_t>() + 1);
  BOOST_TEST(one["tokens_before"].get<int64_t>() > one["tokens_after"].get<int64_t>());
  BOOST_TEST(one["tokens_before"] == whole.body["tokens_before"]);
  BOOST_TEST(one["summary_tokens"].get<int64_t>() > 0);
  BOOST_TEST(one["duration_ms"].get<int64_t>() >= 0);
  BOOST_TEST(!one["summarizer_model"].get<std::string>().empty());
  // src/budget0..3.cpp and `make report`: five identifiers in the middle.
  BOOST_TEST(one["identifiers_in"] == 5);
  BOOST_TEST(one["identifiers_kept"].get<int64_t>() <= 5);
  BOOST_TEST(one["retention"].get<double>()
             == one["identifiers_kept"].get<double>() / 5.0);
  auto attempts = listed.body["attempts"];
  BOOST_REQUIRE(attempts.size() == 1u);
  BOOST_TEST(attempts[0]["log_id"] == one["log_id"]);
  BOOST_TEST(attempts[0]["outcome"] == "committed");
}

BOOST_AUTO_TEST_SUITE_END() // http_compactions_test
