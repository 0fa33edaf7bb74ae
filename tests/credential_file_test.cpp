// The permission check of credential files (policies/credential_file.hpp): a file every
// user may write is refused naming its mode; any other mode is accepted.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "policies/credential_file.hpp"

BOOST_AUTO_TEST_SUITE(credential_file_test)

namespace data = boost::unit_test::data;

namespace {

struct mode_case {
  unsigned mode;
  std::string problem; // "" = accepted
};

std::ostream& operator<<(std::ostream& os, const mode_case& c) {
  return os << std::oct << c.mode << std::dec;
}

const std::vector<mode_case> mode_cases{
  {0600, ""},
  {0640, ""},
  {0644, ""},
  {0660, ""},
  {0400, ""},
  {0664, ""},
  {0666, "is writable by every user (mode 0666); remove that with chmod o-w"},
  {0602, "is writable by every user (mode 0602); remove that with chmod o-w"},
  {0777, "is writable by every user (mode 0777); remove that with chmod o-w"},
  {0100646, "is writable by every user (mode 0646); remove that with chmod o-w"}, // st_mode
  {01666, "is writable by every user (mode 1666); remove that with chmod o-w"},
};

} // namespace

BOOST_DATA_TEST_CASE(a_credential_file_others_may_write_is_refused_naming_its_mode,
                     data::make(mode_cases), c) {
  BOOST_TEST(mneme::credential_file_problem(c.mode) == c.problem);
}

BOOST_AUTO_TEST_SUITE_END()
