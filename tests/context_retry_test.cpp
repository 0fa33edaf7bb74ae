// Tests of the context service's advice after a model error (issue 27 item 2;
// policies/context_retry.hpp): a compaction means "send the new messages now", a transient
// failure "wait, then send the same again", anything else "do not retry".
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <vector>

#include "policies/context_retry.hpp"

BOOST_AUTO_TEST_SUITE(context_retry_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

struct advice_case {
  llm_error_kind kind;
  bool compacted;
  model_error_advice expected;
};
std::ostream& operator<<(std::ostream& os, const advice_case& c) {
  return os << c.kind << (c.compacted ? " compacted" : "");
}

const model_error_advice now{true, false};
const model_error_advice later{true, true};
const model_error_advice never{false, false};

const std::vector<advice_case> advice_cases{
  {llm_error_kind::context_overflow, true, now},
  {llm_error_kind::payload_too_large, true, now},
  {llm_error_kind::long_context_rate_limit, true, now},
  {llm_error_kind::output_too_large, true, now},
  {llm_error_kind::context_overflow, false, never}, // its compaction did not run
  {llm_error_kind::rate_limited, false, later},
  {llm_error_kind::server_error, false, later},
  {llm_error_kind::malformed, false, later},
  {llm_error_kind::empty_answer, false, later},
  {llm_error_kind::total_timeout, false, later},
  {llm_error_kind::auth, false, never},
  {llm_error_kind::quota, false, never},
  {llm_error_kind::bad_request, false, never},
  {llm_error_kind::unsupported_parameter, false, never},
  {llm_error_kind::tls, false, never},
};

} // namespace

BOOST_DATA_TEST_CASE(the_advice_follows_the_kind_and_the_compaction, data::make(advice_cases),
                     c) {
  auto got = advise_after_model_error(c.kind, c.compacted);
  BOOST_TEST(got == c.expected);
  BOOST_TEST((!got.retry_after_backoff || got.retry)); // invariant
}

BOOST_AUTO_TEST_SUITE_END() // context_retry_test
