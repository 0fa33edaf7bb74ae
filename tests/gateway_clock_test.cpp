// The gateway's time-driven behaviour on CAF's deterministic scheduler
// (tests/gateway_harness.hpp): the eviction sweep (every quarter of the idle time, only
// idle sessions without work in flight, rehydration after), lease renewal in node mode
// (its period, a failed renewal, a lost lease stopping the key's session and the next
// message acquiring again), the hygiene failure cooldown (T3 fallback-only until it
// ends, at its instant) and the replay after an exhaustion reset (re-run once in the new
// session, no second reset when the re-run exhausts too). The clock moves by hand and
// every message due runs before an assertion, so an event that did not happen has not
// happened: nothing sleeps.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <string>

#include "actors/gateway/gateway_actor.hpp"
#include "tests/gateway_harness.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(gateway_clock_test)

using namespace mneme;
using namespace mneme::test;
using namespace std::chrono_literals;
using mneme::testing::err_of;

namespace {

struct clock_fixture : gateway_harness {
  // Moves the clocks by `d` in steps of at most `step`, so a timer re-armed by a tick
  // fires at its own time within the span.
  void advance_by(std::chrono::milliseconds d, std::chrono::milliseconds step = 100ms) {
    while (d > 0ms) {
      auto s = std::min(d, step);
      advance(s);
      d -= s;
    }
  }

  // Appends rows under `key` through the gateway until it counts `n` live rows, from
  // `live` (the count of the last reply).
  void fill_to(const std::string& key, int64_t live, int64_t n) {
    for (; live < n; ++live)
      BOOST_REQUIRE(append(key, "row " + std::to_string(live)));
  }

  // Fills `key` up to the T3 cap from `live` rows and sends `text`: the reply, whose
  // first compaction must be the hygiene check's T3.
  turn_reply t3_turn(const std::string& key, int64_t live, const std::string& text) {
    fill_to(key, live, compression.hygiene_hard_message_limit);
    auto r = say(key, text);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    BOOST_REQUIRE(!r->compactions.empty());
    BOOST_TEST(r->compactions[0].by == trigger::t3_hygiene_message_cap);
    return *r;
  }

  // The user rows of session `sid` whose text is `text`.
  size_t user_rows(const std::string& sid, const std::string& text) {
    return static_cast<size_t>(std::count_if(db->rows.begin(), db->rows.end(), [&](const message& m) {
      return m.session_id == sid && m.role == msg_role::user && m.content == text;
    }));
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(gateway_clock, clock_fixture)

// ---------------------------------------------------------------- eviction sweep

BOOST_AUTO_TEST_CASE(the_sweep_evicts_a_session_once_it_is_idle_for_the_idle_time) {
  gw.gateway.idle_evict_seconds = 8; // a sweep every 2 s
  start();
  auto r = say("k", "remember the number 42");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(stats().hosted == 1);
  advance_by(7999ms); // sweeps at 2, 4 and 6 s: idle for less than 8 s
  BOOST_TEST(stats().hosted == 1);
  advance_by(1ms); // the sweep at 8 s
  auto evicted = stats();
  BOOST_TEST(evicted.hosted == 0);
  BOOST_TEST(evicted.spawned == 1);
  // The next message rehydrates the same session, with its rows, from the store.
  auto back = say("k", "what was the number?");
  BOOST_REQUIRE_MESSAGE(back, err_of(back));
  auto rehydrated = stats();
  BOOST_TEST((rehydrated.spawned == 2 && rehydrated.hosted == 1));
  BOOST_TEST((back->session_id == r->session_id && back->live_messages == 5));
}

BOOST_AUTO_TEST_CASE(the_sweep_leaves_a_session_with_a_turn_in_flight) {
  gw.gateway.idle_evict_seconds = 8;
  start();
  BOOST_REQUIRE(say("k", "hello"));
  chat->hold = true;
  self->send(gateway, gw_message_atom_v, std::string{"k"}, std::string{"u"},
             std::string{"a slow question"});
  sched.run();
  BOOST_REQUIRE(chat->held.size() == 1u);
  advance_by(10s); // five sweeps; the key has a request in flight
  BOOST_TEST(stats().hosted == 1);
  BOOST_TEST(!reply_waiting());
  self->send(chat_pool, caf::ok_atom_v); // the model answers
  sched.run();
  auto slow = reply<turn_reply>();
  BOOST_REQUIRE_MESSAGE(slow, err_of(slow));
  advance_by(2s); // idle since the turn began, 12 s ago
  BOOST_TEST(stats().hosted == 0);
}

BOOST_AUTO_TEST_CASE(a_sweep_asked_for_answers_how_many_sessions_left) {
  gw.gateway.idle_evict_seconds = 600; // the timer stays out of the way
  start();
  BOOST_REQUIRE(say("a", "hello"));
  BOOST_REQUIRE(say("b", "hello"));
  clock_ms += 599'000;
  auto none = ask<int64_t>(gw_evict_atom_v);
  BOOST_REQUIRE(none);
  BOOST_TEST(*none == 0);
  BOOST_TEST(stats().hosted == 2);
  clock_ms += 1'000;
  auto both = ask<int64_t>(gw_evict_atom_v);
  BOOST_REQUIRE(both);
  BOOST_TEST(*both == 2);
  BOOST_TEST(stats().hosted == 0);
}

// ---------------------------------------------------------------- lease renewal

BOOST_AUTO_TEST_CASE(leases_are_renewed_every_third_of_the_lease_time) {
  node_mode = true;
  gw.gateway.lease_seconds = 3; // renewed every 1 s
  start();
  BOOST_REQUIRE(say("k", "hello"));
  BOOST_TEST(lease->acquires == 1);
  BOOST_REQUIRE(!store_log->fences.empty());
  BOOST_TEST((store_log->fences.back() == std::make_pair(std::string{"k"}, int64_t{1})));
  advance_by(999ms);
  BOOST_TEST(lease->renewals == 0);
  advance_by(1ms);
  BOOST_TEST(lease->renewals == 1);
  advance_by(1000ms);
  BOOST_TEST(lease->renewals == 2);
  // A failed renewal (the database down) keeps the timer going.
  lease->renew_fails = true;
  advance_by(1000ms);
  BOOST_TEST(lease->renewals == 3);
  lease->renew_fails = false;
  advance_by(1000ms);
  BOOST_TEST(lease->renewals == 4);
  BOOST_TEST(stats().hosted == 1); // nothing lost so far
}

BOOST_AUTO_TEST_CASE(a_lease_lost_at_renewal_stops_the_session_until_the_next_message) {
  node_mode = true;
  gw.gateway.lease_seconds = 3;
  start();
  auto r = say("k", "hello");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  lease->lose_next = {"k"};
  advance_by(1000ms);
  BOOST_TEST(lease->renewals == 1);
  // The fence is dropped and the key's session actor stopped (not restarted).
  BOOST_TEST((store_log->fences.back() == std::make_pair(std::string{"k"}, int64_t{0})));
  BOOST_TEST(stats().hosted == 0);
  BOOST_TEST(stats().restarts == 0);
  // The next message takes the lease again and rehydrates the session.
  auto again = say("k", "still there?");
  BOOST_REQUIRE_MESSAGE(again, err_of(again));
  BOOST_TEST(lease->acquires == 2);
  BOOST_TEST((store_log->fences.back() == std::make_pair(std::string{"k"}, int64_t{2})));
  BOOST_TEST(again->session_id == r->session_id);
  BOOST_TEST(stats().spawned == 2);
}

// ---------------------------------------------------------------- hygiene cooldown

BOOST_AUTO_TEST_CASE(a_failed_hygiene_summary_keeps_t3_fallback_only_until_the_cooldown_ends) {
  compression.hygiene_hard_message_limit = 30; // T3 at 30 live rows
  compression.hygiene_failure_cooldown_seconds = 600;
  compression.summary_failure_cooldown_seconds = 60; // the session's own, over long before
  seed("s-1", "k", 40, 200); // 41 live rows with the system row
  summarizer->down = true;
  start();
  auto first = t3_turn("k", 41, "first");
  BOOST_TEST(first.compactions[0].summary_failed);
  BOOST_TEST(first.compactions[0].used_fallback);
  auto asked = summarizer->requests.size();
  BOOST_TEST(asked >= 1u);
  summarizer->down = false; // it would answer now: the cooldown is what keeps it unasked
  // 599 s later, still inside the cooldown: T3 compacts with the fallback only.
  advance_by(599s, 1s);
  auto inside = t3_turn("k", first.live_messages, "second");
  BOOST_TEST(inside.compactions[0].used_fallback);
  BOOST_TEST(!inside.compactions[0].summary_failed);
  BOOST_TEST(summarizer->requests.size() == asked);
  // At the cooldown's end the summarizer is asked again.
  advance_by(1s);
  auto after = t3_turn("k", inside.live_messages, "third");
  BOOST_TEST(after.compactions[0].committed);
  BOOST_TEST(!after.compactions[0].used_fallback);
  BOOST_TEST(summarizer->requests.size() == asked + 1);
}

// ---------------------------------------------------------------- replay after reset

BOOST_AUTO_TEST_CASE(an_exhausted_turn_is_re_run_once_in_the_reset_session) {
  seed("s-1", "spent", 60, 50);
  chat->overflow_sessions = {"s-1"}; // the model refuses every prompt of the old session
  start();
  auto r = say("spent", "one more");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(r->session_id == "s-100");
  BOOST_TEST(r->answer == "fine");
  BOOST_TEST(r->notice.find("answered in the new session") != std::string::npos, r->notice);
  BOOST_REQUIRE(!r->compactions.empty());
  BOOST_TEST(r->compactions[0].by == trigger::t9_context_overflow);
  // One reset (the supervisor's exhaustion signal found the key reset already), the old
  // session ended, its actor gone; the message stored in both sessions.
  BOOST_TEST(store_log->resets == 1);
  BOOST_TEST(db->sessions["s-1"].ended_at_ms > 0);
  BOOST_TEST(db->sessions["s-100"].parent_id == "s-1");
  BOOST_TEST(user_rows("s-1", "one more") == 1u);
  BOOST_TEST(user_rows("s-100", "one more") == 1u);
  auto sv_now = stats();
  BOOST_TEST(sv_now.exhausted == 1);
  BOOST_TEST(sv_now.hosted == 1);
  auto next = say("spent", "thanks");
  BOOST_REQUIRE_MESSAGE(next, err_of(next));
  BOOST_TEST(next->session_id == "s-100");
}

BOOST_AUTO_TEST_CASE(a_re_run_that_exhausts_too_answers_an_error_and_resets_no_further) {
  seed("s-1", "spent", 60, 50);
  chat->overflow_sessions = {"s-1", "s-100"}; // the reset session is refused as well
  start();
  auto r = say("spent", "one more");
  BOOST_REQUIRE(!r);
  BOOST_TEST((r.error() == errc::compaction_exhausted));
  auto carried = turn_reply_of(r.error());
  BOOST_REQUIRE(carried);
  BOOST_TEST(carried->notice.find("please send it again") != std::string::npos,
             carried->notice);
  BOOST_TEST(carried->session_id == "s-100");
  // Both sessions reported their exhaustion; only the first was reset.
  BOOST_TEST(stats().exhausted == 2);
  BOOST_TEST(store_log->resets == 1);
  BOOST_TEST(db->sessions["s-100"].ended_at_ms == 0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // gateway_clock_test
