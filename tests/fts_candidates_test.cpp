// Table tests of recall's bounded plan for frequent queries (policies/fts_candidates,
// issue 46 target 4): when it applies, when its newest-first scan stops or gives up,
// and how its candidates become one best row per session in the full plan's order.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "policies/fts_candidates.hpp"

BOOST_AUTO_TEST_SUITE(fts_candidates_test)

using namespace mneme;

namespace {

struct step_case {
  int64_t examined, candidates, conversations, wanted;
  newest_scan_step expected;
};

std::vector<int64_t> ids_of(const std::vector<scored_row>& rows) {
  std::vector<int64_t> out;
  for (auto& r : rows)
    out.push_back(r.id);
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(only_frequent_queries_take_the_bounded_plan_and_only_when_allowed) {
  fts_candidate_params p;
  BOOST_TEST((choose_fts_route_plan(999, true, p) == fts_route_plan::rank_all));
  BOOST_TEST((choose_fts_route_plan(0, true, p) == fts_route_plan::rank_all));
  BOOST_TEST((choose_fts_route_plan(1000, true, p) == fts_route_plan::newest_first));
  BOOST_TEST((choose_fts_route_plan(1000, false, p) == fts_route_plan::rank_all));
  p.frequent_matches = 10;
  BOOST_TEST((choose_fts_route_plan(10, true, p) == fts_route_plan::newest_first));
}

BOOST_AUTO_TEST_CASE(the_scan_stops_with_enough_candidates_of_enough_conversations) {
  fts_candidate_params p;
  p.candidates = 100;
  p.max_examined = 4096;
  const step_case cases[] = {
    {0, 0, 0, 3, newest_scan_step::go_on},
    {150, 99, 3, 3, newest_scan_step::go_on},      // one candidate short
    {150, 100, 3, 3, newest_scan_step::enough},
    {150, 100, 2, 3, newest_scan_step::go_on},     // a conversation short: read on
    {150, 400, 10, 3, newest_scan_step::enough},
    {4095, 100, 1, 3, newest_scan_step::go_on},
    {4096, 100, 1, 3, newest_scan_step::give_up},  // bounded: the full plan runs
    {4096, 0, 0, 1, newest_scan_step::give_up},    // a small user's few matches
    {4096, 100, 1, 1, newest_scan_step::enough},   // enough wins over the bound
  };
  for (auto& c : cases)
    BOOST_TEST((next_newest_scan_step(c.examined, c.candidates, c.conversations, c.wanted, p)
                == c.expected),
               c.examined << "/" << c.candidates << "/" << c.conversations << "/" << c.wanted);
}

BOOST_AUTO_TEST_CASE(each_session_keeps_its_best_row_and_sessions_order_by_it) {
  std::vector<scored_row> rows = {
    {90, "a", -1.0}, {80, "b", -3.0}, {70, "a", -2.5}, {60, "c", -2.5},
    {50, "b", -0.5}, {40, "d", -2.5}, {30, "c", -2.5},
  };
  auto best = best_row_per_session(rows);
  // b (-3.0), then the -2.5 ties by row id: c (30, not its 60), d (40), a (70).
  BOOST_TEST(ids_of(best) == (std::vector<int64_t>{80, 30, 40, 70}),
             boost::test_tools::per_element());
  BOOST_TEST(best[0].session_id == "b");
  BOOST_TEST(best[1].session_id == "c");
  BOOST_TEST(best[2].session_id == "d");
  BOOST_TEST(best[3].session_id == "a");
  BOOST_TEST(best_row_per_session({}).empty());
}

BOOST_AUTO_TEST_SUITE_END() // fts_candidates_test
