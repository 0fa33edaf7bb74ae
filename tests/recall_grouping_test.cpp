// Table tests of the recall grouping policy (policies/recall_grouping, issue 25
// item 7): which conversation a session belongs to, and how a requested result
// limit is clamped.
#include <boost/test/unit_test.hpp>

#include <map>
#include <string>

#include "policies/recall_grouping.hpp"

BOOST_AUTO_TEST_SUITE(recall_grouping_test)

using namespace mneme;

namespace {

// session -> parent ("" = no parent); a session missing from the map is unknown.
std::string root_in(const std::map<std::string, std::string>& parents, const std::string& s) {
  return conversation_root(s, [&](const std::string& id) -> std::optional<std::string> {
    auto i = parents.find(id);
    if (i == parents.end()) return std::nullopt;
    return i->second;
  });
}

} // namespace

BOOST_AUTO_TEST_CASE(a_session_belongs_to_the_conversation_of_its_lineage_root) {
  // P continued in child C, C was reset into R; Q stands alone; X's parent is unknown.
  const std::map<std::string, std::string> parents{
    {"P", ""}, {"C", "P"}, {"R", "C"}, {"Q", ""}, {"X", "gone"}};
  struct row {
    const char* session;
    const char* root;
  };
  for (const row r : {row{"P", "P"}, row{"C", "P"}, row{"R", "P"}, row{"Q", "Q"},
                      row{"X", "gone"}, row{"unknown", "unknown"}})
    BOOST_TEST(root_in(parents, r.session) == r.root, r.session);
}

BOOST_AUTO_TEST_CASE(a_cyclic_lineage_ends_the_walk_instead_of_looping) {
  const std::map<std::string, std::string> parents{{"A", "B"}, {"B", "C"}, {"C", "A"}};
  BOOST_TEST(root_in(parents, "A") == "C");  // stops before revisiting A
  BOOST_TEST(root_in({{"S", "S"}}, "S") == "S");
}

BOOST_AUTO_TEST_CASE(a_lineage_deeper_than_the_cap_stops_at_the_cap) {
  std::map<std::string, std::string> parents;
  const int depth = recall_max_lineage_depth + 5;
  for (int i = 1; i <= depth; ++i) parents[std::to_string(i)] = std::to_string(i - 1);
  parents["0"] = "";
  BOOST_TEST(root_in(parents, std::to_string(depth)) == "5");
  BOOST_TEST(root_in(parents, "100") == "0");
}

BOOST_AUTO_TEST_CASE(a_limit_above_the_maximum_is_clamped_and_says_so) {
  struct row {
    int64_t requested;
    int32_t sessions;
    bool clamped;
  };
  for (const row r : {row{1, 1, false}, row{3, 3, false}, row{10, 10, false}, row{11, 10, true},
                      row{1000, 10, true}, row{INT64_MAX, 10, true}}) {
    const auto got = clamp_recall_limit(r.requested, 10);
    BOOST_TEST(got.sessions == r.sessions, r.requested);
    BOOST_TEST(got.clamped == r.clamped, r.requested);
  }
}

BOOST_AUTO_TEST_SUITE_END() // recall_grouping_test
