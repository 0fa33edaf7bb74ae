// One system message at the head of a request; see system_merge.hpp.
#include "policies/system_merge.hpp"

#include <iterator>

namespace mneme {

namespace {

bool is_head_system(const message& m) { return m.role == msg_role::system && !m.is_summary; }

} // namespace

std::vector<message> merge_leading_system_rows(std::vector<message> rows) {
  size_t run = 0;
  while (run < rows.size() && is_head_system(rows[run]))
    ++run;
  if (run < 2)
    return rows;
  auto& first = rows[0];
  for (size_t i = 1; i < run; ++i) {
    const auto& more = rows[i].content;
    if (more.empty())
      continue;
    if (!first.content.empty())
      first.content += system_merge_separator;
    first.content += more;
  }
  rows.erase(rows.begin() + 1, rows.begin() + static_cast<std::ptrdiff_t>(run));
  return rows;
}

} // namespace mneme
