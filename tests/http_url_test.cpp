// Tests of advertise URL parsing (policies/http_url.hpp): host, port and base path of
// the forms a node may advertise, and every malformed form refused.
#include <boost/test/unit_test.hpp>

#include "policies/http_url.hpp"

BOOST_AUTO_TEST_SUITE(http_url_test)

using namespace mneme;

BOOST_AUTO_TEST_CASE(host_port_and_base_are_split) {
  auto u = parse_http_url("http://10.0.0.7:8077");
  BOOST_REQUIRE(u);
  BOOST_TEST(u->host == "10.0.0.7");
  BOOST_TEST(u->port == "8077");
  BOOST_TEST(u->base == "");
  u = parse_http_url("http://node-b.internal/mneme/");
  BOOST_REQUIRE(u);
  BOOST_TEST(u->host == "node-b.internal");
  BOOST_TEST(u->port == "80");
  BOOST_TEST(u->base == "/mneme");
  u = parse_http_url("http://[::1]:9000/x");
  BOOST_REQUIRE(u);
  BOOST_TEST(u->host == "::1");
  BOOST_TEST(u->port == "9000");
  BOOST_TEST(u->base == "/x");
}

BOOST_AUTO_TEST_CASE(malformed_urls_are_refused) {
  for (const char* bad : {"", "https://a:1", "a:1", "http://", "http://:80", "http://a:",
                          "http://a:123456", "http://a:8x", "http://u@a:1", "http://a:1?q=1",
                          "http://a:1#f", "http://[::1", "http://[::1]x", "http://a:b:c"})
    BOOST_TEST(!parse_http_url(bad), bad);
}

BOOST_AUTO_TEST_SUITE_END()
