// Tests of the window guard decision (SPEC §5.6, issue 25): send when the request
// fits the window, compact first (summarizer, or the fallback during a cooldown;
// the minimal tail when the ordinary plan would not fit or a pass already ran),
// and unfittable when even the minimal context cannot fit or the passes are spent.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <vector>

#include "policies/summary_budget.hpp"
#include "policies/summary_markers.hpp"
#include "policies/token_estimate.hpp"
#include "policies/window_guard.hpp"

BOOST_AUTO_TEST_SUITE(window_guard_test)

namespace data = boost::unit_test::data;
using namespace mneme;
using act = window_guard_action;

namespace {

struct guard_case {
  const char* what;
  window_guard_inputs in;
  act want;
  bool minimal_tail;
};
std::ostream& operator<<(std::ostream& os, const guard_case& c) { return os << c.what; }

window_guard_inputs in8k(int64_t live, int64_t planned, int64_t minimal, bool summarizer = true,
                         int passes = 0, int64_t reserve = 0, int64_t tools = 0) {
  window_guard_inputs in;
  in.context_window = 8192;
  in.output_reserve = reserve;
  in.tools_tokens = tools;
  in.live_tokens = live;
  in.planned_tokens = planned;
  in.minimal_tokens = minimal;
  in.summarizer_allowed = summarizer;
  in.passes_done = passes;
  return in;
}

} // namespace

BOOST_DATA_TEST_CASE(
    the_guard_sends_what_fits_compacts_what_can_fit_and_refuses_the_rest,
    data::make(std::vector<guard_case>{
      {"well under the window", in8k(4000, 1000, 500), act::send, false},
      {"exactly the window", in8k(8192, 1000, 500), act::send, false},
      {"one over: summarizer", in8k(8193, 3000, 500), act::compact_summarizer, false},
      {"over in a cooldown: fallback", in8k(9000, 3000, 500, false), act::compact_fallback,
       false},
      {"ordinary plan too big: minimal tail", in8k(15559, 9000, 2000),
       act::compact_summarizer, true},
      {"second pass: minimal tail", in8k(9000, 3000, 2000, true, 1), act::compact_summarizer,
       true},
      {"passes spent", in8k(9000, 3000, 2000, true, 2), act::unfittable, false},
      {"minimal context over the window", in8k(20000, 12000, 8193), act::unfittable, false},
      {"reserve counts: fits without, not with", in8k(8000, 1000, 500, true, 0, 500),
       act::compact_summarizer, false},
      {"tools count", in8k(8000, 1000, 500, true, 0, 0, 193), act::compact_summarizer, false},
      {"reserve makes the minimal context unfittable", in8k(9000, 4000, 4000, true, 0, 4193),
       act::unfittable, false},
      {"the cooldown never blocks the guard", in8k(30000, 4000, 1000, false, 1),
       act::compact_fallback, true},
    }),
    c) {
  auto d = decide_window_guard(c.in);
  BOOST_TEST(d.action == c.want);
  if (d.compacts())
    BOOST_TEST(d.minimal_tail == c.minimal_tail);
  BOOST_TEST(d.needed_tokens == c.in.live_tokens + c.in.tools_tokens + c.in.output_reserve);
  BOOST_TEST(d.minimal_needed_tokens
             == c.in.minimal_tokens + c.in.tools_tokens + c.in.output_reserve);
}

BOOST_DATA_TEST_CASE(negative_sizes_or_no_window_are_bad_input_and_send_nothing,
                     data::make({0, 1, 2, 3, 4, 5, 6}), which) {
  auto in = in8k(9000, 1000, 500);
  switch (which) {
    case 0: in.context_window = 0; break;
    case 1: in.output_reserve = -1; break;
    case 2: in.tools_tokens = -1; break;
    case 3: in.live_tokens = -1; break;
    case 4: in.planned_tokens = -1; break;
    case 5: in.minimal_tokens = -1; break;
    case 6: in.passes_done = -1; break;
  }
  BOOST_TEST(decide_window_guard(in).action == act::bad_input);
}

BOOST_AUTO_TEST_CASE(the_summary_bound_is_one_and_a_half_budgets_plus_the_framing) {
  const int64_t framing = estimate_text_tokens(wrap_summary("")) + message_overhead_tokens;
  BOOST_TEST(summary_bound_tokens(400) == 600 + framing);
  BOOST_TEST(summary_bound_tokens(1) == 1 + framing);
  BOOST_TEST(summary_bound_tokens(1166) == 1749 + framing);
}

// Across the windows of the table: a session of 40 rows of 300 tokens behind
// a 500-token head never gets a compaction whose bound does not fit after the guard
// said "compact" with the minimal tail (the guard's promise to the actor).
BOOST_DATA_TEST_CASE(on_every_window_a_compaction_the_guard_orders_fits_by_its_own_sizes,
                     data::make({int64_t{4096}, int64_t{8192}, int64_t{32768}, int64_t{131072},
                                 int64_t{200000}, int64_t{1000000}}),
                     window) {
  const int64_t head = 500, last_user = 300;
  const int64_t live = window + 1;
  const int64_t middle = live - head - last_user;
  auto budget = compute_summary_budget(middle, window);
  BOOST_REQUIRE(budget.ok());
  window_guard_inputs in;
  in.context_window = window;
  in.live_tokens = live;
  in.minimal_tokens = head + summary_bound_tokens(budget.tokens) + last_user;
  in.planned_tokens = in.minimal_tokens + 20 * 300;
  auto d = decide_window_guard(in);
  BOOST_TEST(d.compacts());
  BOOST_TEST(in.minimal_tokens <= window);
  BOOST_TEST(budget.tokens <= window / 20);
}

BOOST_AUTO_TEST_CASE(the_unfittable_message_names_every_size) {
  auto in = in8k(20000, 12000, 9000, true, 0, 100, 50);
  auto d = decide_window_guard(in);
  BOOST_REQUIRE(d.action == act::unfittable);
  auto text = describe_unfittable(in, d);
  for (const char* n : {"20150", "20000", "50", "100", "8192", "9150"})
    BOOST_TEST(text.find(n) != std::string::npos, n << " in: " << text);
}

BOOST_DATA_TEST_CASE(the_output_reserve_is_max_tokens_else_a_32nd_of_the_window_up_to_8192,
                     data::make({int64_t{4096}, int64_t{8192}, int64_t{32768}, int64_t{131072},
                                 int64_t{200000}, int64_t{1000000}, int64_t{8192}, int64_t{0}})
                         ^ data::make({int64_t{0}, int64_t{0}, int64_t{0}, int64_t{0},
                                       int64_t{0}, int64_t{0}, int64_t{1000}, int64_t{0}})
                         ^ data::make({int64_t{128}, int64_t{256}, int64_t{1024}, int64_t{4096},
                                       int64_t{6250}, int64_t{8192}, int64_t{1000}, int64_t{0}}),
                     window, max_tokens, want) {
  BOOST_TEST(guard_output_reserve(window, max_tokens) == want);
}

BOOST_AUTO_TEST_CASE(actions_print_their_names) {
  BOOST_TEST(to_string(act::compact_fallback) == "compact_fallback");
  BOOST_TEST(to_string(act::unfittable) == "unfittable");
}

BOOST_AUTO_TEST_SUITE_END() // window_guard_test
