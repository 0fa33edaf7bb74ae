// End to end, the window guard and the size guard (SPEC §5.6, issue 25) against the
// fake LLM over loopback, set up like the report: an OpenAI-compatible server
// that neither enforces the window (its own window is far larger) nor returns usage,
// an 8,192-token model window, and a summarizer that fails every call (503), so the
// session sits in its 600 s cooldown. Asserted on what the fake received (its largest
// chat prompt) and on the session's live context after every turn, never on timing.
#include <boost/test/unit_test.hpp>

#include <string>

#include "actors/runtime.hpp"
#include "policies/token_estimate.hpp"
#include "policies/window_guard.hpp"
#include "tests/serve_runtime_fixture.hpp"

BOOST_AUTO_TEST_SUITE(window_guard_e2e_test)

using namespace mneme;
using namespace mneme::test;
using mneme::testing::err_of;

namespace {

constexpr int64_t window = 8192;

struct guard_fixture : serve_runtime_fixture {
  guard_fixture() {
    rc.model.context_length = window;
    rc.model.max_tokens = 0; // the guard then reserves window / 32 for the answer
  }

  // No window at the server, no usage in answers, the summarizer down.
  void outage_without_usage() {
    fakellm::scenario s;
    s.window_tokens = 100'000'000;
    s.report_usage = false;
    s.plan.rules = {rule(fakellm::fault_kind::unavailable, fakellm::purpose_filter::summary)};
    set_scenario(std::move(s));
  }
};

// A user message of about `tokens` tokens, distinct per turn.
std::string text_of(int turn, int64_t tokens) {
  std::string s = "turn " + std::to_string(turn) + " asks about /srv/app/mod_"
                  + std::to_string(turn) + ".cpp ";
  while (estimate_text_tokens(s) < tokens)
    s += "and the details of the build step ";
  return s;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(window_guard_e2e, guard_fixture)

BOOST_AUTO_TEST_CASE(two_hundred_turns_never_send_or_keep_more_than_the_window) {
  start();
  outage_without_usage();
  const int64_t reserve = guard_output_reserve(window, 0);
  int guard_compactions = 0;
  int64_t max_live = 0;
  for (int turn = 0; turn < 200; ++turn) {
    auto r = say_to("guarded", text_of(turn, 150));
    BOOST_REQUIRE_MESSAGE(r, "turn " << turn << ": " << err_of(r));
    BOOST_TEST(r->prompt_tokens == 0); // the server reports no usage
    BOOST_TEST(r->live_tokens <= window, "turn " << turn << " live " << r->live_tokens);
    max_live = std::max(max_live, r->live_tokens);
    for (const auto& c : r->compactions) {
      guard_compactions += c.window_guard ? 1 : 0;
      if (c.committed) // the size guard: nothing committed grows the context
        BOOST_TEST(c.tokens_after < c.tokens_before);
      else
        BOOST_TEST((c.grew || c.nothing_to_compact || c.summary_failed));
    }
  }
  auto stats = llm.stats();
  BOOST_TEST_MESSAGE("max live " << max_live << " / window " << window << ", largest chat prompt "
                                 << stats.max_chat_prompt_tokens << ", guard compactions "
                                 << guard_compactions);
  BOOST_TEST(stats.chat_requests == 200);
  BOOST_TEST(stats.max_chat_prompt_tokens + reserve <= window);
  BOOST_TEST(stats.max_chat_prompt_tokens > window / 2); // the run did fill the window
  BOOST_TEST(guard_compactions >= 1);
  BOOST_TEST(stats.summary_requests >= 1);  // it failed once and armed the cooldown ...
  BOOST_TEST(stats.summary_requests <= 3);  // ... so the guard did not hammer it
  BOOST_REQUIRE(rt->metrics());
  BOOST_TEST(rt->metrics()->window_guard[static_cast<size_t>(
                 window_guard_label::compacted_fallback)].load() >= 1u);
  auto s = snapshot("guarded");
  BOOST_TEST(s.live_tokens <= window);
  BOOST_TEST(stored_stats(s.record.id).live_token_estimate <= window);
}

// A message over compression.max_row_share of the window would become a marker with an
// excerpt (docs/compaction-rules.md): with the share at 1, a message just under the
// window fits no request once the answer reserve is added.
BOOST_AUTO_TEST_CASE(a_turn_that_cannot_fit_fails_as_unfittable_and_sends_nothing) {
  rc.compression.max_row_share = 1.0;
  start();
  outage_without_usage();
  auto first = say_to("huge", "hello");
  BOOST_REQUIRE_MESSAGE(first, err_of(first));
  const auto chats_before = llm.stats().chat_requests;
  auto r = say_to("huge", text_of(1, window - 150));
  BOOST_REQUIRE(!r);
  BOOST_TEST(r.error() == errc::context_unfittable);
  auto text = render_error(r.error());
  BOOST_TEST(text.find(std::to_string(window)) != std::string::npos, text);
  BOOST_TEST(llm.stats().chat_requests == chats_before); // nothing was sent
  BOOST_TEST(llm.stats().max_chat_prompt_tokens <= window);
  BOOST_REQUIRE(rt->metrics());
  BOOST_TEST(rt->metrics()->window_guard[static_cast<size_t>(window_guard_label::unfittable)]
                 .load() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // window_guard_e2e_test
