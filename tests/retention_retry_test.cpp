// Tests of the retry below compression.min_retention (policies/retention_retry.hpp):
// each rule of the decision in its order (off, not the summarizer, the retry already
// ran, too few identifiers, at or above the threshold), and the bounded list of
// missing identifiers the retry prompt carries.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "policies/retention_retry.hpp"

BOOST_AUTO_TEST_SUITE(retention_retry_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

struct retry_case {
  retention_retry_inputs in;
  retention_action want;
};

std::ostream& operator<<(std::ostream& os, const retry_case& c) {
  return os << "min=" << c.in.min_retention << " summarizer=" << c.in.from_summarizer
            << " attempt=" << c.in.attempt << " kept=" << c.in.identifiers_kept << "/"
            << c.in.identifiers_in << " -> " << c.want;
}

const retry_case retry_cases[] = {
  // 1. off
  {{0.0, true, 1, 10, 0}, retention_action::accept},
  // 2. not the summarizer
  {{0.5, false, 1, 10, 0}, retention_action::accept},
  // 3. the retry already ran
  {{0.5, true, 2, 10, 0}, retention_action::accept},
  // 4. too few identifiers to judge, then just enough
  {{0.5, true, 1, 4, 0}, retention_action::accept},
  {{0.5, true, 1, 5, 0}, retention_action::retry},
  // 5. at the threshold accepts, below it retries
  {{0.5, true, 1, 10, 5}, retention_action::accept},
  {{0.5, true, 1, 10, 4}, retention_action::retry},
  {{0.9, true, 1, 10, 9}, retention_action::accept},
  {{0.9, true, 1, 10, 8}, retention_action::retry},
  {{1.0, true, 1, 10, 10}, retention_action::accept},
};

} // namespace

BOOST_DATA_TEST_CASE(each_rule_decides_in_its_order, data::make(retry_cases), c) {
  BOOST_TEST(decide_retention_retry(c.in) == c.want);
}

BOOST_AUTO_TEST_CASE(the_missing_list_names_each_identifier_on_its_own_line) {
  std::vector<identifier> missing{{identifier_kind::path, "src/a.cpp"},
                                  {identifier_kind::code, "make test"}};
  BOOST_TEST(missing_identifiers_list(missing) == "- src/a.cpp\n- make test\n");
  BOOST_TEST(missing_identifiers_list({}).empty());
}

BOOST_AUTO_TEST_CASE(the_missing_list_is_bounded_in_items_and_bytes) {
  std::vector<identifier> many;
  for (int i = 0; i < 500; ++i)
    many.push_back({identifier_kind::id, "id" + std::to_string(i)});
  auto list = missing_identifiers_list(many);
  BOOST_TEST(std::count(list.begin(), list.end(), '\n') == static_cast<long>(retry_list_max_items));
  std::vector<identifier> long_ones(50, identifier{identifier_kind::code, std::string(190, 'c')});
  auto cut = missing_identifiers_list(long_ones);
  BOOST_TEST(cut.size() <= retry_list_max_bytes);
  BOOST_TEST(cut.size() > retry_list_max_bytes - 200);
  BOOST_TEST(cut.back() == '\n');
}

BOOST_AUTO_TEST_SUITE_END()
