// End to end, a summarizer that refuses its credentials (SPEC §5.6, issue 25 item 4): the
// daemon's HTTP API over a runtime whose chat model is the fake LLM and whose summarizer
// is a loopback server answering every call with HTTP 401. A turn over the threshold
// asks for a summary, gets the 401, and then: no fallback row is written (the
// transcript is unchanged), the session is in its auth cooldown (so the next turn does
// not call the summarizer again), the turn itself is answered, and /v1/health and
// /metrics show the auth failure. Asserted on stored rows and answers, never on timing.
#include <boost/test/unit_test.hpp>

#include <memory>
#include <string>

#include "actors/runtime.hpp"
#include "policies/summary_failure.hpp"
#include "tests/http_api_fixture.hpp"
#include "tests/llm_loopback_server.hpp"

BOOST_AUTO_TEST_SUITE(summarizer_auth_e2e_test)

using namespace mneme;
using namespace mneme::test;

namespace {

struct auth_refusing_fixture : http_api_fixture {
  std::unique_ptr<loopback_server> summarizer;

  auth_refusing_fixture() {
    summarizer = std::make_unique<loopback_server>(loopback_server::canned(
      401, R"({"error":{"message":"Incorrect API key provided","type":"invalid_request_error",)"
           R"("code":"invalid_api_key"}})"));
    rc.summarizer = fake_llm_pool_config("http://127.0.0.1:" + std::to_string(summarizer->port()),
                                         llm_purpose::summary);
    rc.compression.threshold_tokens = 1000; // the seeded session is over it: T1 fires
  }
};

std::string auth_row_text(int i) {
  return "row " + std::to_string(i) + " talks about the deployment of service " +
         std::to_string(i) + " and its configuration files in /etc/app/" + std::to_string(i);
}

} // namespace

BOOST_FIXTURE_TEST_CASE(a_summarizer_401_writes_no_fallback_cools_down_and_shows_in_health,
                        auth_refusing_fixture) {
  serve();
  auto sid = seed(stored_key("u", "auth"), 60, auth_row_text);
  const auto rows_before = all_rows(sid).size();
  BOOST_TEST(get("/v1/health").body["summarizer"] == "ok");

  auto turn = post("/v1/sessions/auth/turns", json{{"user", "u"}, {"content", "and now?"}});
  BOOST_REQUIRE_MESSAGE(turn.status == 200, turn.text);
  BOOST_TEST(!turn.body["answer"].empty());
  BOOST_REQUIRE(!turn.body["compactions"].empty());
  BOOST_TEST(turn.body["compactions"][0]["summary_auth_failed"] == true);
  BOOST_TEST(turn.body["compactions"][0]["committed"] == false);
  BOOST_TEST(summarizer->requests().size() == 1u);

  // No fallback row: nothing archived, no summary; only the turn's two rows were added.
  auto rows = all_rows(sid);
  BOOST_TEST(rows.size() == rows_before + 2);
  for (const auto& m : rows) {
    BOOST_TEST(!m.is_summary);
    BOOST_TEST(!m.compacted);
  }
  // The session cools down with the auth reason: the next turn does not ask again.
  auto s = snapshot("auth");
  BOOST_TEST(s.record.triggers.cooldown_until_ms > system_clock_ms());
  BOOST_TEST(is_auth_cooldown(s.record.triggers.cooldown_reason));
  auto again = post("/v1/sessions/auth/turns", json{{"user", "u"}, {"content", "still there?"}});
  BOOST_REQUIRE_MESSAGE(again.status == 200, again.text);
  BOOST_TEST(summarizer->requests().size() == 1u);

  BOOST_TEST(get("/v1/health").body["summarizer"] == "auth_failed");
  auto m = read(client->Get("/metrics"));
  BOOST_TEST(m.text.find("mneme_summarizer_auth_failures_total 1") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END() // summarizer_auth_e2e_test
