// Tests of the compaction log a session writes (actors/session/session_compaction_log.cpp)
// against the fake store and scripted pools of tests/session_harness.hpp: a committed
// compaction carries its row in its commit with what the summary kept, an auth refusal
// and a grown summary each write one uncommitted row, and below
// compression.min_retention the summarizer is asked once more with the missing
// identifiers listed (both attempts logged; a failed retry commits the first summary).
#include <boost/test/unit_test.hpp>

#include <string>

#include "actors/session/session_actor.hpp"
#include "tests/session_harness.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(session_compaction_log_test)

using namespace mneme;
using namespace mneme::test;
using mneme::testing::err_of;

namespace {

struct log_harness : session_harness {
  // A system row and `n` rows, each naming its own file (one identifier per row).
  void seed_files(int n) {
    add(msg_role::system, "You are a helpful assistant.");
    for (int i = 0; i < n; ++i)
      add(i % 2 == 0 ? msg_role::user : msg_role::assistant,
          "we changed src/mod" + std::to_string(i) + ".cpp " + std::string(400, 'z'));
  }

  caf::expected<compaction_report> compact_all() {
    return ask<compaction_report>(ss_compact_atom_v, trigger::t12_manual_session,
                                  std::string{});
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(a_committed_compaction_carries_its_row_with_what_the_summary_kept,
                        log_harness) {
  seed_files(60);
  summarizer->default_content = "We changed src/mod3.cpp and src/mod4.cpp.";
  start();
  auto r = compact_all();
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(r->committed);
  BOOST_REQUIRE_EQUAL(db->attempts.size(), 1u);
  const auto& e = db->attempts[0];
  BOOST_TEST(e.outcome == "committed");
  BOOST_TEST(e.summary_id == r->summary_id);
  BOOST_TEST(e.trigger == "T12_manual_session");
  BOOST_TEST(e.origin == "manual");
  BOOST_TEST(e.mode == "summarizer");
  BOOST_TEST(e.attempt == 1);
  BOOST_TEST(e.tokens_before == r->tokens_before);
  BOOST_TEST(e.tokens_after == r->tokens_after);
  BOOST_TEST(e.summary_tokens > 0);
  // One file per replaced row, two of them kept.
  BOOST_TEST(e.identifiers_in == r->archived_rows);
  BOOST_TEST(e.identifiers_kept == 2);
  BOOST_TEST(summarizer->requests.size() == 1u);
}

BOOST_FIXTURE_TEST_CASE(an_auth_refusal_writes_one_uncommitted_row, log_harness) {
  seed_files(60);
  summarizer->script.push_back(caf::make_error(errc::llm_auth, "HTTP 401"));
  start();
  BOOST_REQUIRE(!compact_all());
  BOOST_REQUIRE_EQUAL(db->attempts.size(), 1u);
  const auto& e = db->attempts[0];
  BOOST_TEST(e.outcome == "auth_failed");
  BOOST_TEST(e.mode == "summarizer");
  BOOST_TEST(e.summary_id == 0);
  BOOST_TEST(e.identifiers_in > 0);
  BOOST_TEST(e.identifiers_kept == 0);
  BOOST_TEST(!e.detail.empty());
}

BOOST_FIXTURE_TEST_CASE(a_summarizer_outage_commits_the_fallback_with_its_reason, log_harness) {
  seed_files(60);
  summarizer->down = true;
  start();
  auto r = compact_all();
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(r->used_fallback);
  BOOST_REQUIRE_EQUAL(db->attempts.size(), 1u);
  BOOST_TEST(db->attempts[0].outcome == "committed");
  BOOST_TEST(db->attempts[0].mode == "fallback");
  BOOST_TEST(db->attempts[0].detail.find("fake pool down") != std::string::npos,
             db->attempts[0].detail);
}

BOOST_FIXTURE_TEST_CASE(below_min_retention_the_summarizer_is_asked_again_with_what_it_missed,
                        log_harness) {
  params.compression.min_retention = 0.5;
  seed_files(60);
  chat_answer poor;
  poor.content = "We changed some files.";
  chat_answer better;
  better.content = "We changed src/mod3.cpp.";
  summarizer->script.push_back(poor);
  summarizer->script.push_back(better);
  start();
  auto r = compact_all();
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(r->committed);
  BOOST_REQUIRE_EQUAL(summarizer->requests.size(), 2u);
  const auto& retry_prompt = summarizer->requests[1].messages.back().content;
  BOOST_TEST(retry_prompt.find("dropped the identifiers") != std::string::npos);
  BOOST_TEST(retry_prompt.find("- src/mod3.cpp\n") != std::string::npos);
  BOOST_REQUIRE_EQUAL(db->attempts.size(), 2u);
  // The committed row travels with the commit, the retried one is written after it
  // is decided: order them by attempt.
  const auto& first = db->attempts[0].attempt == 1 ? db->attempts[0] : db->attempts[1];
  const auto& second = db->attempts[0].attempt == 2 ? db->attempts[0] : db->attempts[1];
  BOOST_TEST(first.outcome == "retried");
  BOOST_TEST(first.identifiers_kept == 0);
  BOOST_TEST(second.outcome == "committed");
  BOOST_TEST(second.attempt == 2);
  BOOST_TEST(second.identifiers_kept == 1);
  BOOST_TEST(second.summary_id == r->summary_id);
  // The committed summary is the retry's.
  bool retry_committed = false;
  for (const auto& m : db->live(sid))
    retry_committed = retry_committed
                      || (m.is_summary && m.content.find("src/mod3.cpp") != std::string::npos);
  BOOST_TEST(retry_committed);
}

BOOST_FIXTURE_TEST_CASE(a_failed_retry_commits_the_first_summary_as_attempt_two, log_harness) {
  params.compression.min_retention = 0.5;
  seed_files(60);
  chat_answer poor;
  poor.content = "We changed some files.";
  summarizer->script.push_back(poor);
  summarizer->script.push_back(caf::make_error(errc::llm_server_error, "HTTP 500"));
  start();
  auto r = compact_all();
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(r->committed);
  BOOST_TEST(!r->used_fallback);
  BOOST_REQUIRE_EQUAL(db->attempts.size(), 2u);
  const auto& second = db->attempts[0].attempt == 2 ? db->attempts[0] : db->attempts[1];
  BOOST_TEST(second.outcome == "committed");
  BOOST_TEST(second.detail.find("the retry failed") != std::string::npos, second.detail);
}

BOOST_FIXTURE_TEST_CASE(off_by_default_a_poor_summary_is_committed_at_once, log_harness) {
  seed_files(60);
  summarizer->default_content = "We changed some files.";
  start();
  auto r = compact_all();
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(summarizer->requests.size() == 1u);
  BOOST_REQUIRE_EQUAL(db->attempts.size(), 1u);
  BOOST_TEST(db->attempts[0].identifiers_kept == 0);
}

BOOST_AUTO_TEST_SUITE_END()
