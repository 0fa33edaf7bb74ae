// Reciprocal rank fusion (policies/rank_fusion.hpp, issue 48): the fused order of two
// conversation rankings, the RRF sums, deterministic ties, repeated keys, the limit
// and the legs' sizes.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "policies/rank_fusion.hpp"

BOOST_AUTO_TEST_SUITE(rank_fusion_test)

using namespace mneme;

namespace {

using keys = std::vector<std::string>;

// The fused keys, each as "t<i>" (full text only), "v<j>" (vector only) or "t<i>v<j>".
std::vector<std::string> shape(const std::vector<fused_entry>& fused) {
  std::vector<std::string> out;
  for (auto& e : fused) {
    std::string s;
    if (e.full_text != fused_entry::absent)
      s += "t" + std::to_string(e.full_text);
    if (e.vector != fused_entry::absent)
      s += "v" + std::to_string(e.vector);
    out.push_back(s);
  }
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_conversation_both_rankings_hold_goes_first) {
  // "b" is second in full text and first by vector: 1/62 + 1/61 beats "a"'s 1/61;
  // "d" (vector rank 2, 1/62) beats "c" (full-text rank 3, 1/63).
  auto fused = fuse_rankings(keys{"a", "b", "c"}, keys{"b", "d"}, 10);
  BOOST_TEST((shape(fused) == std::vector<std::string>{"t1v0", "t0", "v1", "t2"}) == true);
  BOOST_TEST(fused[0].score == 1.0 / 62 + 1.0 / 61, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(fused[1].score == 1.0 / 61, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(equal_scores_order_by_full_text_then_key) {
  // "x" first by full text, "y" first by vector: equal sums, equal best ranks; the
  // full-text one goes first, whatever the argument order of the keys.
  auto fused = fuse_rankings(keys{"y2", "x"}, keys{"a", "b"}, 10);
  // t0 (y2) and v0 (a) both score 1/61: full text first; then t1 (x) and v1 (b).
  BOOST_TEST((shape(fused) == std::vector<std::string>{"t0", "v0", "t1", "v1"}) == true);
  // Two keys found by both legs at swapped ranks: equal sums and best ranks, both in
  // full text: the smaller key first.
  auto swapped = fuse_rankings(keys{"q", "p"}, keys{"p", "q"}, 10);
  BOOST_TEST((shape(swapped) == std::vector<std::string>{"t1v0", "t0v1"}) == true);
  // Deterministic: the same input, the same output.
  BOOST_TEST((shape(fuse_rankings(keys{"q", "p"}, keys{"p", "q"}, 10)) == shape(swapped))
             == true);
}

BOOST_AUTO_TEST_CASE(the_limit_the_empty_legs_and_a_repeated_key) {
  BOOST_TEST(fuse_rankings(keys{}, keys{}, 5).empty());
  BOOST_TEST((shape(fuse_rankings(keys{"a", "b", "c"}, keys{}, 2))
              == std::vector<std::string>{"t0", "t1"}) == true);
  BOOST_TEST((shape(fuse_rankings(keys{}, keys{"a", "b"}, 5))
              == std::vector<std::string>{"v0", "v1"}) == true);
  // A key repeated inside one ranking counts at its first place only.
  auto fused = fuse_rankings(keys{"a", "a", "b"}, keys{}, 5);
  BOOST_REQUIRE(fused.size() == 2u);
  BOOST_TEST(fused[0].full_text == 0u);
  BOOST_TEST(fused[0].score == 1.0 / 61, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(fused[1].full_text == 2u);
}

BOOST_AUTO_TEST_CASE(a_smaller_k_weighs_the_top_ranks_more) {
  // "b": rank 4 in both; "a": rank 1 in full text only. With k = 60 the pair wins
  // (2/64 > 1/61); with k = 1 the single top rank wins (1/2 > 2/5).
  auto k60 = fuse_rankings(keys{"a", "x", "y", "b"}, keys{"p", "q", "r", "b"}, 1);
  BOOST_TEST((shape(k60) == std::vector<std::string>{"t3v3"}) == true);
  auto k1 = fuse_rankings(keys{"a", "x", "y", "b"}, keys{"p", "q", "r", "b"}, 1, 1.0);
  BOOST_TEST((shape(k1) == std::vector<std::string>{"t0"}) == true);
}

BOOST_AUTO_TEST_CASE(each_leg_brings_more_than_the_caller_wants) {
  BOOST_TEST(fusion_leg_conversations(1) == 10u);
  BOOST_TEST(fusion_leg_conversations(3) == 10u);
  BOOST_TEST(fusion_leg_conversations(10) == 30u);
  for (std::size_t n = 1; n <= 10; ++n)
    BOOST_TEST(fusion_leg_conversations(n) > n);
  BOOST_TEST(vector_leg_rows(10) == 40u);
}

BOOST_AUTO_TEST_SUITE_END()
