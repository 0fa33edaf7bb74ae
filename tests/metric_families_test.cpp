// Tests of policies/metric_families.hpp: families rendered by several sections come out
// once each (HELP, TYPE, every sample), in first-appearance order; a text already
// grouped is unchanged; histogram suffixes stay with their family.
#include <boost/test/unit_test.hpp>

#include <string>

#include "policies/metric_families.hpp"

BOOST_AUTO_TEST_SUITE(metric_families_test)

using mneme::merge_metric_families;

BOOST_AUTO_TEST_CASE(a_family_rendered_by_two_sections_appears_once_with_all_its_samples) {
  std::string text =
    "# HELP mneme_door_errors_total Errors\n# TYPE mneme_door_errors_total counter\n"
    "mneme_door_errors_total{door=\"chat\"} 1\n"
    "# HELP mneme_openai_errors_total Old\n# TYPE mneme_openai_errors_total counter\n"
    "mneme_openai_errors_total 1\n"
    "# HELP mneme_door_errors_total Errors\n# TYPE mneme_door_errors_total counter\n"
    "mneme_door_errors_total{door=\"responses\"} 2\n";
  BOOST_TEST(merge_metric_families(text)
             == "# HELP mneme_door_errors_total Errors\n# TYPE mneme_door_errors_total counter\n"
                "mneme_door_errors_total{door=\"chat\"} 1\n"
                "mneme_door_errors_total{door=\"responses\"} 2\n"
                "# HELP mneme_openai_errors_total Old\n# TYPE mneme_openai_errors_total counter\n"
                "mneme_openai_errors_total 1\n");
}

BOOST_AUTO_TEST_CASE(a_grouped_text_with_a_histogram_is_unchanged) {
  std::string text = "# HELP h Latency\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\n"
                     "h_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count 2\n"
                     "# HELP g Gauge\n# TYPE g gauge\ng 5\nbare_sample 7\n";
  BOOST_TEST(merge_metric_families(text) == text);
  BOOST_TEST(merge_metric_families("") == "");
}

BOOST_AUTO_TEST_SUITE_END()
