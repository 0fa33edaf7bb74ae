// Tests of which slot a new client connection takes (policies/connection_admission.hpp)
// on data: regular while both caps leave room, the per-address cap whatever the total
// leaves free, the reserve beyond them, displacement only of a connection still waiting
// for its head, and refusal without a reserve.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>

#include "policies/connection_admission.hpp"

BOOST_AUTO_TEST_SUITE(connection_admission_test)

using namespace mneme::policies;
namespace data = boost::unit_test::data;

namespace {

struct admission_case {
  const char* name;
  connection_limits limits;
  connection_counts now;
  connection_slot expected;
};

std::ostream& operator<<(std::ostream& os, const admission_case& c) { return os << c.name; }

const admission_case admission_cases[] = {
  {"empty server", {10, 4, 2}, {0, 0, 0, 0}, connection_slot::regular},
  {"room in all and for the address", {10, 4, 2}, {9, 3, 0, 0}, connection_slot::regular},
  {"the address at its cap, total has room", {10, 4, 2}, {5, 4, 0, 0}, connection_slot::reserve},
  {"total at its cap, a new address", {10, 4, 2}, {10, 0, 0, 0}, connection_slot::reserve},
  {"reserve has one left", {10, 4, 2}, {10, 4, 1, 1}, connection_slot::reserve},
  {"reserve full, one still waiting", {10, 4, 2}, {10, 4, 2, 1},
   connection_slot::reserve_displacing_oldest},
  {"reserve full, every one being served", {10, 4, 2}, {10, 4, 2, 0}, connection_slot::refuse},
  {"no reserve: the address at its cap", {10, 4, 0}, {5, 4, 0, 0}, connection_slot::refuse},
  {"no reserve: total at its cap", {10, 4, 0}, {10, 0, 0, 0}, connection_slot::refuse},
  {"reserve counts never admit a regular beyond the caps", {10, 4, 2}, {10, 4, 0, 0},
   connection_slot::reserve},
  {"per-address cap above the total: the total decides", {3, 100, 1}, {3, 3, 0, 0},
   connection_slot::reserve},
};

} // namespace

BOOST_DATA_TEST_CASE(the_slot_of_a_new_connection, data::make(admission_cases), c) {
  BOOST_TEST(to_string(slot_for_new_connection(c.limits, c.now)) == to_string(c.expected));
}

BOOST_AUTO_TEST_CASE(an_address_at_its_cap_never_gets_a_regular_slot_whatever_the_total) {
  connection_limits limits{1000, 5, 0};
  for (int64_t regular = 5; regular < 1000; regular += 37)
    BOOST_TEST(to_string(slot_for_new_connection(limits, {regular, 5, 0, 0}))
               == to_string(connection_slot::refuse));
}

BOOST_AUTO_TEST_SUITE_END()
