// Table tests of merge_leading_system_rows (policies/system_merge.hpp): the leading
// system rows become one, daemon's text first; summaries and later system rows are kept.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "policies/system_merge.hpp"

BOOST_AUTO_TEST_SUITE(system_merge_test)

using namespace mneme;

namespace {

message row(msg_role role, std::string content, bool summary = false) {
  message m;
  m.role = role;
  m.content = std::move(content);
  m.is_summary = summary;
  return m;
}

std::string shape(const std::vector<message>& rows) {
  std::string out;
  for (const auto& m : rows)
    out += std::string{to_string(m.role)} + (m.is_summary ? "*" : "") + "[" + m.content + "] ";
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(the_leading_system_rows_become_one_and_nothing_else_moves) {
  using R = msg_role;
  struct {
    std::vector<message> in;
    std::string out;
  } cases[] = {
    {{}, ""},
    {{row(R::user, "hi")}, "user[hi] "},
    {{row(R::system, "daemon"), row(R::user, "hi")}, "system[daemon] user[hi] "},
    {{row(R::system, "daemon"), row(R::system, "client"), row(R::user, "hi")},
     "system[daemon\n\nclient] user[hi] "},
    {{row(R::system, "a"), row(R::system, ""), row(R::system, "c")}, "system[a\n\nc] "},
    {{row(R::system, ""), row(R::system, "client")}, "system[client] "},
    // A summary ends the run; a system row after a user row stays where it is.
    {{row(R::system, "daemon"), row(R::system, "sum", true), row(R::system, "late")},
     "system[daemon] system*[sum] system[late] "},
    {{row(R::system, "daemon"), row(R::user, "hi"), row(R::system, "late")},
     "system[daemon] user[hi] system[late] "},
    {{row(R::user, "hi"), row(R::system, "a"), row(R::system, "b")},
     "user[hi] system[a] system[b] "},
  };
  for (auto& c : cases)
    BOOST_TEST(shape(merge_leading_system_rows(c.in)) == c.out);
}

BOOST_AUTO_TEST_CASE(the_merged_row_keeps_the_first_rows_identity) {
  auto a = row(msg_role::system, "daemon");
  a.id = 7;
  auto b = row(msg_role::system, "client");
  b.id = 8;
  auto out = merge_leading_system_rows({a, b, row(msg_role::user, "hi")});
  BOOST_REQUIRE(out.size() == 2u);
  BOOST_TEST(out[0].id == 7);
  BOOST_TEST(out[1].content == "hi");
}

BOOST_AUTO_TEST_SUITE_END() // system_merge_test
