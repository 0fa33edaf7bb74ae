// The gateway's hygiene compactions end to end (SPEC §2 T3/T4, §9 hygiene_* keys): a
// runtime whose hygiene pool talks to a fake LLM server of its own, so every summary
// call is counted per pool. Proves that a T3 or T4 compaction summarizes through the
// hygiene pool (and every other trigger through the summarizer), that without a
// hygiene pool the summarizer serves T3/T4, and that after a failed hygiene
// compaction the key's hygiene cooldown (compression.hygiene_failure_cooldown_seconds,
// gateway clock) keeps the next T3 fallback-only and skips the next T4 — no hygiene
// summary call — until it has passed, after which the hygiene pool is asked again.
// The clock moves by hand.
#include <boost/test/unit_test.hpp>

#include <string>

#include "actors/runtime.hpp"
#include "apps/common/api/metrics_exporter.hpp"
#include "tests/serve_runtime_fixture.hpp"

BOOST_AUTO_TEST_SUITE(hygiene_pool_test)

using namespace mneme;
using namespace mneme::test;
using mneme::testing::err_of;

namespace {

// A text whose message estimate is exactly `tokens`.
std::string text_of(int64_t tokens, char c = 'a') {
  return std::string(static_cast<size_t>((tokens - message_overhead_tokens) * 4), c);
}

// The summarizer pool on `llm`, the hygiene pool on `hygiene_llm`.
struct hygiene_fixture : serve_runtime_fixture {
  fakellm::fake_llm_server hygiene_llm;

  hygiene_fixture() {
    use_manual_clock();
    BOOST_REQUIRE(hygiene_llm.start());
    rc.hygiene = fake_llm_pool_config(hygiene_llm.base_url(), llm_purpose::summary);
    rc.hygiene->name = "hygiene";
  }
  ~hygiene_fixture() {
    if (rt) {
      rt->stop();
      rt.reset();
    }
    hygiene_llm.stop();
  }

  int64_t hygiene_summaries() const { return hygiene_llm.stats().summary_requests; }
  int64_t summarizer_summaries() const { return llm.stats().summary_requests; }

  // A stored session under `key`: a system prompt and `n` alternating rows of `tokens`.
  std::string seed_rows(const std::string& key, int n, int64_t tokens) {
    return seed(key, n,
                [tokens](int i) { return std::to_string(i) + " " + text_of(tokens - 2); });
  }

  void advance_seconds(int64_t s) { clock->fetch_add(s * 1000); }

  // The threshold a new session of the configured model gets.
  bool snapshot_threshold_is(int64_t want) {
    auto r = say_to("probe", "hello");
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    auto got = snapshot("probe").threshold_tokens;
    BOOST_TEST_MESSAGE("threshold " << got);
    return got == want;
  }

  // The hygiene server answers its next summary call with a 503.
  void fail_first_hygiene_summary() {
    fakellm::scenario s;
    s.plan.rules.push_back(
      rule(fakellm::fault_kind::unavailable, fakellm::purpose_filter::summary, 1));
    auto err = hygiene_llm.set_scenario(std::move(s));
    BOOST_REQUIRE_MESSAGE(!err, render_error(err));
  }

  // Turns under `key` until the session has made `want` T3 compactions; the number of
  // turns it took. Fails after `max_turns`.
  int turns_until_t3(const std::string& key, int64_t want, int max_turns = 16) {
    for (int t = 1; t <= max_turns; ++t) {
      auto r = say_to(key, "turn " + std::to_string(t));
      BOOST_REQUIRE_MESSAGE(r, err_of(r));
      if (compactions_of(snapshot(key), trigger::t3_hygiene_message_cap) >= want)
        return t;
    }
    BOOST_FAIL("no T3 compaction within " << max_turns << " turns");
    return 0;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(hygiene_pool, hygiene_fixture)

BOOST_AUTO_TEST_CASE(a_t4_hygiene_compaction_summarizes_through_the_hygiene_pool) {
  rc.model.context_length = 100000; // T4 at 85,000; T1 at 75,000
  rc.compression.hygiene_hard_message_limit = 0;
  start();
  seed_rows("t4", 60, 1450); // ~87,000 tokens
  auto r = say_to("t4", "next");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  auto s = snapshot("t4");
  BOOST_TEST(compactions_of(s, trigger::t4_hygiene_tokens) == 1);
  BOOST_TEST(hygiene_summaries() == 1);
  BOOST_TEST(summarizer_summaries() == 0);
  BOOST_TEST(s.record.triggers.fallback_streak == 0); // the LLM summary was used
  // /metrics shows the hygiene pool beside the other two.
  auto text = api::render_metrics_text(*sys, *rt, std::chrono::seconds{60});
  BOOST_TEST(text.find("mneme_llm_in_flight{pool=\"hygiene\"} 0") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_t3_hygiene_compaction_summarizes_through_the_hygiene_pool) {
  rc.compression.hygiene_hard_message_limit = 40;
  start();
  seed_rows("t3", 60, 200);
  auto r = say_to("t3", "next");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(compactions_of(snapshot("t3"), trigger::t3_hygiene_message_cap) == 1);
  BOOST_TEST(hygiene_summaries() == 1);
  BOOST_TEST(summarizer_summaries() == 0);
}

BOOST_AUTO_TEST_CASE(every_other_trigger_summarizes_through_the_summarizer_pool) {
  start();
  seed_rows("manual", 60, 200);
  auto r = call<compaction_report>(rt->gateway(), gw_command_atom_v, std::string{"manual"},
                                   trigger::t12_manual_session, std::string{});
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(r->committed);
  BOOST_TEST(summarizer_summaries() == 1);
  BOOST_TEST(hygiene_summaries() == 0);
}

BOOST_AUTO_TEST_CASE(without_a_hygiene_pool_the_summarizer_serves_hygiene_compactions) {
  rc.hygiene.reset();
  rc.compression.hygiene_hard_message_limit = 40;
  start();
  BOOST_TEST(!rt->hygiene_pool());
  BOOST_TEST(api::render_metrics_text(*sys, *rt).find("pool=\"hygiene\"") == std::string::npos);
  seed_rows("t3", 60, 200);
  auto r = say_to("t3", "next");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(compactions_of(snapshot("t3"), trigger::t3_hygiene_message_cap) == 1);
  BOOST_TEST(summarizer_summaries() == 1);
  BOOST_TEST(hygiene_summaries() == 0);
}

// The session's own summary cooldown (60 s) ends long before the gateway's hygiene
// cooldown (600 s): between the two only the gateway keeps T3 away from the LLM.
BOOST_AUTO_TEST_CASE(a_failed_hygiene_summary_keeps_t3_fallback_only_until_the_cooldown_ends) {
  rc.compression.hygiene_hard_message_limit = 40;
  rc.compression.summary_failure_cooldown_seconds = 60;
  rc.compression.hygiene_failure_cooldown_seconds = 600;
  start();
  seed_rows("cool", 60, 500);
  // The first hygiene summary call fails: the fallback commits, the cooldowns start.
  fail_first_hygiene_summary();
  BOOST_TEST(turns_until_t3("cool", 1) == 1);
  BOOST_TEST(hygiene_summaries() == 1);
  auto s = snapshot("cool");
  BOOST_TEST(s.record.triggers.fallback_streak == 1);
  BOOST_TEST(s.record.triggers.cooldown_until_ms > 0);

  // 120 s later the session's cooldown is over, the gateway's is not: the next T3
  // compacts with the local fallback and asks no summarizer at all.
  advance_seconds(120);
  turns_until_t3("cool", 2);
  BOOST_TEST(hygiene_summaries() == 1);
  BOOST_TEST(summarizer_summaries() == 0);
  s = snapshot("cool");
  BOOST_TEST(s.record.triggers.fallback_streak == 2);

  // Past the 600 s: the hygiene pool is asked again and its summary is used.
  advance_seconds(600);
  turns_until_t3("cool", 3);
  BOOST_TEST(hygiene_summaries() == 2);
  BOOST_TEST(summarizer_summaries() == 0);
  BOOST_TEST(snapshot("cool").record.triggers.fallback_streak == 0);
}

// T1 sits at 90,000 (model_thresholds), above T4's 85,000, so only the gateway's
// hygiene check can compact between the two.
BOOST_AUTO_TEST_CASE(a_failed_hygiene_summary_skips_t4_until_the_cooldown_ends) {
  rc.model.context_length = 100000;
  rc.compression.model_thresholds = {{"fake-chat", 0.9}};
  rc.compression.hygiene_hard_message_limit = 0;
  rc.compression.summary_failure_cooldown_seconds = 60;
  rc.compression.hygiene_failure_cooldown_seconds = 600;
  start();
  BOOST_REQUIRE(snapshot_threshold_is(90000));
  seed_rows("t4cool", 60, 1450); // ~87,000 tokens
  fail_first_hygiene_summary();
  auto r = say_to("t4cool", "one");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(compactions_of(snapshot("t4cool"), trigger::t4_hygiene_tokens) == 1);
  BOOST_TEST(hygiene_summaries() == 1);
  advance_seconds(120); // the session's own cooldown is over
  // Grow back over T4's 85,000 (steps of ~3,000 stay under T1's 90,000).
  auto grow_past_t4 = [&] {
    for (int t = 0; t < 40 && r->live_tokens < 85000; ++t) {
      r = say_to("t4cool", std::to_string(t) + " " + text_of(3000, 'g'));
      BOOST_REQUIRE_MESSAGE(r, err_of(r));
    }
    BOOST_REQUIRE(r->live_tokens >= 85000);
  };
  grow_past_t4();
  // The session itself would accept a T4 now (no summary cooldown, no anti-thrash
  // lock), so a T4 left out below is the gateway's hygiene cooldown, not a refusal.
  auto held = snapshot("t4cool").record.triggers;
  BOOST_TEST(held.cooldown_until_ms <= clock->load());
  BOOST_TEST(held.lock_until_ms <= clock->load());
  r = say_to("t4cool", "inside the cooldown");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  auto s = snapshot("t4cool");
  BOOST_TEST(compactions_of(s, trigger::t4_hygiene_tokens) == 1); // skipped
  BOOST_TEST(compactions_of(s, trigger::t1_pre_call) == 0);
  BOOST_TEST(hygiene_summaries() == 1);
  BOOST_TEST(summarizer_summaries() == 0);
  advance_seconds(600);
  r = say_to("t4cool", "after the cooldown");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(compactions_of(snapshot("t4cool"), trigger::t4_hygiene_tokens) == 2);
  BOOST_TEST(hygiene_summaries() == 2);
}

BOOST_AUTO_TEST_CASE(a_zero_hygiene_cooldown_asks_the_hygiene_pool_again_at_once) {
  rc.compression.hygiene_hard_message_limit = 40;
  rc.compression.summary_failure_cooldown_seconds = 60;
  rc.compression.hygiene_failure_cooldown_seconds = 0;
  start();
  seed_rows("nocool", 60, 500);
  fail_first_hygiene_summary();
  turns_until_t3("nocool", 1);
  BOOST_TEST(hygiene_summaries() == 1);
  advance_seconds(120); // only the session's own cooldown could hold it back
  turns_until_t3("nocool", 2);
  BOOST_TEST(hygiene_summaries() == 2);
  BOOST_TEST(snapshot("nocool").record.triggers.fallback_streak == 0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // hygiene_pool_test
