// The session's special paths (actors/session/session_paths.cpp) under CAF's
// deterministic scheduler with the in-memory store of session_test_fakes.hpp: tool
// output eviction, proactive pruning and micro-compaction. For each: what it does
// to the live context and the stored rows, what a refused commit leaves behind
// (eviction and pruning: nothing changed; micro-compaction: the fold stands and the
// next full compaction reconciles the store), and its configuration.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>

#include "actors/session/session_actor.hpp"
#include "policies/eviction_plan.hpp"
#include "policies/micro_compaction.hpp"
#include "policies/summary_markers.hpp"
#include "policies/token_estimate.hpp"
#include "tests/session_harness.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(session_paths_test)

using namespace mneme;
using namespace mneme::test;
using mneme::testing::err_of;
using namespace std::chrono_literals;
namespace bdata = boost::unit_test::data;

namespace {

struct paths_fixture : session_harness {
  paths_fixture() {
    params.compression.threshold_tokens = 100000; // no automatic compaction unless set
    params.compression.protect_first_n = 1;
    params.compression.protect_last_n = 2;
  }

  const message& stored(int64_t id) const {
    for (const auto& m : db->rows)
      if (m.id == id)
        return m;
    BOOST_FAIL("no stored row " << id);
    return db->rows.front();
  }

  const message* live_row(const std::vector<message>& rows, int64_t id) const {
    for (const auto& m : rows)
      if (m.id == id)
        return &m;
    return nullptr;
  }
};

int64_t sum_estimates(const std::vector<message>& rows) {
  int64_t total = 0;
  for (const auto& m : rows)
    total += m.token_estimate;
  return total;
}

std::string big(const std::string& first_line, size_t filler, char c) {
  return first_line + "\n" + std::string(filler, c);
}

} // namespace

// --- configuration defaults (SPEC §6)

BOOST_AUTO_TEST_CASE(the_special_paths_default_to_the_spec_values) {
  compression_params p;
  BOOST_TEST(p.tool_output_eviction_chars == 16000);
  BOOST_TEST(p.proactive_prune_tokens == 0);
  BOOST_TEST(p.proactive_prune_min_result_chars == 8000);
  BOOST_TEST(p.proactive_prune_min_reclaim_tokens == 4096);
  BOOST_TEST(!p.micro_compact);
  BOOST_TEST(p.micro_compact_every_n_turns == 1);
  BOOST_TEST(p.micro_compact_defrag_threshold_tokens == 2000);
}

// --- tool output eviction

BOOST_FIXTURE_TEST_CASE(an_answered_large_tool_output_becomes_the_exact_marker_and_stays_stored,
                        paths_fixture) {
  auto [a, b] = two_tool_outputs(big("alpha", 19994, 'x'), "small output");
  start();
  auto before = state();
  auto r = turn();
  BOOST_REQUIRE(r);
  auto rows = live();
  BOOST_REQUIRE_EQUAL(rows.size(), 9u); // 7 seeded + the turn's user row and answer
  const auto& evicted = rows[3];
  BOOST_TEST(evicted.content == "[OUTPUT TRUNCATED - 20000 chars; recall with search]");
  BOOST_TEST(evicted.id != a);
  BOOST_TEST(evicted.id != 0);
  BOOST_TEST((evicted.role == msg_role::tool));
  BOOST_TEST(evicted.tool_call_id == "c1");
  BOOST_TEST(evicted.is_summary);
  BOOST_TEST(rows[4].id == b); // the small output is kept
  BOOST_TEST(rows[4].content == "small output");
  const auto& original = stored(a);
  BOOST_TEST(!original.active);
  BOOST_TEST(original.compacted);
  BOOST_TEST(original.content.size() == 20000u);
  // The store's live context is the session's.
  std::vector<int64_t> mem, disk;
  for (auto& m : rows)
    mem.push_back(m.id);
  for (auto& m : db->live(sid))
    disk.push_back(m.id);
  BOOST_TEST(mem == disk, boost::test_tools::per_element());
  auto after = state();
  BOOST_TEST(after.live_tokens == sum_estimates(rows));
  BOOST_TEST(after.live_tokens < before.live_tokens); // shrank by ~5,000 despite the turn
  BOOST_TEST(r->live_tokens == after.live_tokens);
}

struct eviction_case {
  int64_t eviction_chars;
  size_t output_chars;
  bool evicted;
};

std::ostream& operator<<(std::ostream& os, const eviction_case& c) {
  return os << "eviction_chars=" << c.eviction_chars << " output=" << c.output_chars;
}

const eviction_case eviction_cases[] = {
  {16000, 16000, false}, // the default: not longer than the limit
  {16000, 16001, true},
  {0, 200000, false},    // 0 = off
  {1000, 1000, false},
  {1000, 1001, true},
};

BOOST_DATA_TEST_CASE(eviction_happens_only_past_the_configured_size, bdata::make(eviction_cases),
                     c) {
  paths_fixture f;
  f.params.compression.tool_output_eviction_chars = c.eviction_chars;
  auto [a, b] = f.two_tool_outputs(big("alpha", c.output_chars - 6, 'x'), "small output");
  (void) b;
  f.start();
  BOOST_REQUIRE(f.turn());
  auto rows = f.live();
  BOOST_TEST((f.live_row(rows, a) == nullptr) == c.evicted);
  BOOST_TEST(f.stored(a).active == !c.evicted);
  BOOST_TEST(is_eviction_marker(rows[3].content) == c.evicted);
}

BOOST_FIXTURE_TEST_CASE(a_refused_eviction_commit_leaves_the_session_as_it_was, paths_fixture) {
  auto [a, b] = two_tool_outputs(big("alpha", 19994, 'x'), "small output");
  (void) b;
  start();
  db->fail_commits = true;
  auto r = turn();
  BOOST_REQUIRE(r); // the turn itself is answered
  auto rows = live();
  BOOST_REQUIRE_EQUAL(rows.size(), 9u);
  BOOST_TEST(rows[3].id == a);
  BOOST_TEST(rows[3].content.size() == 20000u);
  BOOST_TEST(stored(a).active);
  BOOST_TEST(db->commits == 0);
  BOOST_TEST(state().live_tokens == sum_estimates(rows));
}

// --- proactive pruning

namespace {

const std::string first_output = big("alpha first line", 12000, 'x'); // 12,017 chars
const std::string second_output = big("beta first line", 12000, 'y'); // 12,016 chars
const std::string first_marker = R"([PRUNED TOOL OUTPUT - read_file({"path":"/srv/a.log"}) returned 12,017 chars; first line: "alpha first line"; recall with search])";
const std::string second_marker = R"([PRUNED TOOL OUTPUT - read_file({"path":"/srv/b.log"}) returned 12,016 chars; first line: "beta first line"; recall with search])";

void lock_by_cooldown(paths_fixture& f) {
  auto& t = f.db->sessions[f.sid].triggers;
  t.cooldown_until_ms = t0 + 600'000;
  t.cooldown_reason = "summary failed";
}

} // namespace

BOOST_FIXTURE_TEST_CASE(pruning_replaces_large_middle_tool_outputs_while_compaction_is_locked,
                        paths_fixture) {
  params.compression.threshold_tokens = 2000; // over it: T1 fires but the cooldown refuses
  lock_by_cooldown(*this);
  auto [a, b] = two_tool_outputs(first_output, second_output);
  start();
  auto r = turn();
  BOOST_REQUIRE(r);
  BOOST_TEST(r->compactions.empty());
  BOOST_REQUIRE_EQUAL(chat->requests.size(), 1u);
  // The model already saw the pruned context.
  const auto& sent = chat->requests.front().messages;
  BOOST_REQUIRE_GE(sent.size(), 5u);
  BOOST_TEST(sent[3].content == first_marker);
  BOOST_TEST(sent[4].content == second_marker);
  auto rows = live();
  BOOST_REQUIRE_EQUAL(rows.size(), 9u);
  BOOST_TEST(rows[3].content == first_marker);
  BOOST_TEST(rows[3].tool_call_id == "c1");
  BOOST_TEST(rows[4].content == second_marker);
  BOOST_TEST(rows[4].tool_call_id == "c2");
  for (auto id : {a, b}) {
    BOOST_TEST(!stored(id).active);
    BOOST_TEST(stored(id).compacted);
    BOOST_TEST(live_row(rows, id) == nullptr);
  }
  BOOST_TEST(stored(a).content == first_output);
  BOOST_TEST(state().live_tokens == sum_estimates(rows));
  BOOST_TEST(state().live_tokens < 1000);
}

BOOST_FIXTURE_TEST_CASE(a_refused_prune_commit_leaves_the_session_as_it_was_and_is_not_retried,
                        paths_fixture) {
  params.compression.threshold_tokens = 2000;
  lock_by_cooldown(*this);
  auto [a, b] = two_tool_outputs(first_output, second_output);
  start();
  db->fail_commits = true;
  auto r = turn(); // returns at all: a refused prune does not loop
  BOOST_REQUIRE(r);
  auto rows = live();
  BOOST_REQUIRE_EQUAL(rows.size(), 9u);
  BOOST_TEST(rows[3].id == a);
  BOOST_TEST(rows[3].content == first_output);
  BOOST_TEST(rows[4].id == b);
  BOOST_TEST(stored(a).active);
  BOOST_TEST(stored(b).active);
  BOOST_TEST(db->commits == 0);
  BOOST_TEST(state().live_tokens == sum_estimates(rows));
}

struct prune_case {
  const char* name;
  bool locked;
  int64_t threshold_tokens;
  int64_t prune_tokens;
  int64_t min_result_chars;
  int64_t min_reclaim_tokens;
  bool pruned;
};

std::ostream& operator<<(std::ostream& os, const prune_case& c) { return os << c.name; }

const prune_case prune_cases[] = {
  {"defaults: not locked, under the threshold", false, 100000, 0, 8000, 4096, false},
  {"locked and over the threshold", true, 2000, 0, 8000, 4096, true},
  {"locked but under the threshold", true, 100000, 0, 8000, 4096, false},
  {"proactive_prune_tokens exceeded", false, 100000, 3000, 8000, 4096, true},
  {"proactive_prune_tokens not exceeded", false, 100000, 50000, 8000, 4096, false},
  {"reclaim below proactive_prune_min_reclaim_tokens", true, 2000, 0, 8000, 10000, false},
  {"outputs not above proactive_prune_min_result_chars", true, 2000, 0, 12017, 4096, false},
};

BOOST_DATA_TEST_CASE(pruning_runs_only_when_due_and_worth_it, bdata::make(prune_cases), c) {
  paths_fixture f;
  f.params.compression.threshold_tokens = c.threshold_tokens;
  f.params.compression.proactive_prune_tokens = c.prune_tokens;
  f.params.compression.proactive_prune_min_result_chars = c.min_result_chars;
  f.params.compression.proactive_prune_min_reclaim_tokens = c.min_reclaim_tokens;
  if (c.locked)
    lock_by_cooldown(f);
  auto [a, b] = f.two_tool_outputs(first_output, second_output);
  f.start();
  BOOST_REQUIRE(f.turn());
  auto rows = f.live();
  BOOST_TEST((f.live_row(rows, a) == nullptr) == c.pruned);
  BOOST_TEST((f.live_row(rows, b) == nullptr) == c.pruned);
  BOOST_TEST(f.stored(a).active == !c.pruned);
  if (c.pruned)
    BOOST_TEST(rows[3].content == first_marker);
}

// --- micro-compaction

namespace {

// system, user, [assistant call, tool, assistant] (the oldest exchange), user, assistant.
std::vector<int64_t> exchange_transcript(paths_fixture& f) {
  std::vector<int64_t> ids;
  ids.push_back(f.add(msg_role::system, "You are a helpful assistant."));
  ids.push_back(f.add(msg_role::user, "which port?"));
  ids.push_back(f.add(msg_role::assistant, "",
                      {tool_call{"c1", "read_file", R"({"path":"/srv/a.yaml"})"}}));
  ids.push_back(f.add(msg_role::tool, "port: 8080", {}, "c1"));
  ids.push_back(f.add(msg_role::assistant, "The port is 8080."));
  ids.push_back(f.add(msg_role::user, "thanks, and the host?"));
  ids.push_back(f.add(msg_role::assistant, "localhost"));
  return ids;
}

} // namespace

BOOST_FIXTURE_TEST_CASE(micro_compaction_is_off_by_default, paths_fixture) {
  auto ids = exchange_transcript(*this);
  start();
  BOOST_REQUIRE(turn());
  BOOST_REQUIRE(turn());
  auto rows = live();
  BOOST_TEST(rows.size() == 11u);
  for (const auto& m : rows)
    BOOST_TEST(!is_rolling_summary(m));
  for (auto id : ids)
    BOOST_TEST(stored(id).active);
}

BOOST_FIXTURE_TEST_CASE(micro_compaction_folds_the_oldest_exchange_into_a_stored_rolling_summary,
                        paths_fixture) {
  params.compression.micro_compact = true;
  auto ids = exchange_transcript(*this);
  start();
  auto before = state().live_tokens;
  BOOST_REQUIRE(turn());
  auto rows = live();
  // system, user, rolling summary, user, assistant, the turn's user and answer
  BOOST_REQUIRE_EQUAL(rows.size(), 7u);
  const auto& s = rows[2];
  BOOST_TEST(is_rolling_summary(s));
  BOOST_TEST(s.id != 0);
  BOOST_TEST((s.role == msg_role::assistant));
  BOOST_TEST(s.content.rfind(std::string{summary_prefix_tag}, 0) == 0u);
  BOOST_TEST(s.content.find(std::string{k_rolling_summary_title}) != std::string::npos);
  BOOST_TEST(s.content.find("/srv/a.yaml") != std::string::npos);
  BOOST_TEST(rows[1].id == ids[1]); // user rows are never absorbed
  BOOST_TEST(rows[3].id == ids[5]);
  BOOST_TEST((rows[5].role == msg_role::user));
  for (auto i : {2, 3, 4}) {
    BOOST_TEST(!stored(ids[static_cast<size_t>(i)]).active);
    BOOST_TEST(stored(ids[static_cast<size_t>(i)]).compacted);
  }
  BOOST_TEST(stored(s.id).active);
  std::vector<int64_t> mem, disk;
  for (auto& m : rows)
    mem.push_back(m.id);
  for (auto& m : db->live(sid))
    disk.push_back(m.id);
  BOOST_TEST(mem == disk, boost::test_tools::per_element());
  BOOST_TEST(state().live_tokens == sum_estimates(rows));
  (void) before;
}

BOOST_FIXTURE_TEST_CASE(micro_compaction_waits_for_every_n_turns, paths_fixture) {
  params.compression.micro_compact = true;
  params.compression.micro_compact_every_n_turns = 2;
  exchange_transcript(*this);
  start();
  BOOST_REQUIRE(turn());
  for (const auto& m : live())
    BOOST_TEST(!is_rolling_summary(m));
  BOOST_REQUIRE(turn());
  int rolling = 0;
  for (const auto& m : live())
    rolling += is_rolling_summary(m) ? 1 : 0;
  BOOST_TEST(rolling == 1);
}

BOOST_FIXTURE_TEST_CASE(a_failed_fold_sync_keeps_the_fold_and_the_next_compaction_reconciles,
                        paths_fixture) {
  params.compression.micro_compact = true;
  auto ids = exchange_transcript(*this);
  start();
  db->fail_commits = true;
  BOOST_REQUIRE(turn());
  auto rows = live();
  BOOST_REQUIRE_EQUAL(rows.size(), 7u);
  BOOST_TEST(is_rolling_summary(rows[2])); // the in-memory fold stands
  BOOST_TEST(rows[2].id == 0);             // ... but is not stored yet
  for (auto i : {2, 3, 4})
    BOOST_TEST(stored(ids[static_cast<size_t>(i)]).active); // the DB still has the originals
  BOOST_TEST(state().live_tokens == sum_estimates(rows));
  auto rolling_text = rows[2].content;
  db->fail_commits = false;
  auto report = ask<compaction_report>(ss_compact_atom_v, trigger::t12_manual_session,
                                       std::string{});
  BOOST_REQUIRE_MESSAGE(bool(report), err_of(report));
  BOOST_TEST(report->committed);
  // The originals folded in memory are archived in the store ...
  for (auto i : {2, 3, 4}) {
    BOOST_TEST(!stored(ids[static_cast<size_t>(i)]).active);
    BOOST_TEST(stored(ids[static_cast<size_t>(i)]).compacted);
  }
  // ... the rolling summary was stored (then compacted with the middle) ...
  int stored_rolling = 0;
  for (const auto& m : db->rows)
    stored_rolling += m.content == rolling_text ? 1 : 0;
  BOOST_TEST(stored_rolling == 1);
  // ... and memory and store agree row for row.
  std::vector<int64_t> mem, disk;
  for (auto& m : live())
    mem.push_back(m.id);
  for (auto& m : db->live(sid))
    disk.push_back(m.id);
  BOOST_TEST(mem == disk, boost::test_tools::per_element());
  for (auto id : mem)
    BOOST_TEST(id != 0);
}

BOOST_FIXTURE_TEST_CASE(a_failed_fold_sync_is_made_good_by_the_next_fold, paths_fixture) {
  params.compression.micro_compact = true;
  auto ids = exchange_transcript(*this);
  add(msg_role::assistant, "", {tool_call{"c2", "read_file", R"({"path":"/srv/b.yaml"})"}});
  add(msg_role::tool, "host: localhost", {}, "c2");
  add(msg_role::user, "and the user?");
  start();
  db->fail_commits = true;
  BOOST_REQUIRE(turn());
  BOOST_TEST(live()[2].id == 0);
  db->fail_commits = false;
  BOOST_REQUIRE(turn());
  auto rows = live();
  int rolling = 0;
  for (const auto& m : rows) {
    BOOST_TEST(m.id != 0);
    rolling += is_rolling_summary(m) ? 1 : 0;
  }
  BOOST_TEST(rolling == 1);
  for (auto i : {2, 3, 4})
    BOOST_TEST(!stored(ids[static_cast<size_t>(i)]).active);
  std::vector<int64_t> mem, disk;
  for (auto& m : rows)
    mem.push_back(m.id);
  for (auto& m : db->live(sid))
    disk.push_back(m.id);
  BOOST_TEST(mem == disk, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END() // session_paths_test
