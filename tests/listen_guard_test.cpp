// Tests of the unauthenticated-listener guard (policies/listen_guard.hpp): which host
// texts count as loopback (never by resolving a name), and that a non-loopback listener
// without a credential needs gateway.allow_unauthenticated.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>

#include "policies/listen_guard.hpp"

BOOST_AUTO_TEST_SUITE(listen_guard_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

struct host_case {
  const char* host;
  bool loopback;
};

std::ostream& operator<<(std::ostream& os, const host_case& c) {
  return os << "'" << c.host << "' loopback=" << c.loopback;
}

const host_case host_cases[] = {
  {"127.0.0.1", true},     {"127.1.2.3", true},       {"127.255.255.255", true},
  {"localhost", true},     {"::1", true},             {"[::1]", true},
  {"0.0.0.0", false},      {"::", false},             {"10.0.0.1", false},
  {"128.0.0.1", false},    {"127.0.0", false},        {"127.0.0.1.5", false},
  {"127.0.0.256", false},  {"127.0.0.1 ", false},     {"127..0.1", false},
  {"1270.0.0.1", false},   {"example.org", false},    {"localhost.example", false},
  {"LOCALHOST", false},    {"", false},               {"127.0.0.0001", false},
};

} // namespace

BOOST_DATA_TEST_CASE(loopback_is_decided_on_the_text, data::make(host_cases), c) {
  BOOST_TEST(is_loopback_host(c.host) == c.loopback);
}

BOOST_AUTO_TEST_CASE(an_open_api_listens_elsewhere_only_when_allowed_explicitly) {
  BOOST_TEST(may_listen("127.0.0.1", false, false));
  BOOST_TEST(!may_listen("0.0.0.0", false, false));
  BOOST_TEST(may_listen("0.0.0.0", true, false));
  BOOST_TEST(may_listen("0.0.0.0", false, true));
  BOOST_TEST(!may_listen("example.org", false, false));
}

BOOST_AUTO_TEST_SUITE_END() // listen_guard_test
