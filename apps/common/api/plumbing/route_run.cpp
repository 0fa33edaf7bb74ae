// Running one route row; see route_run.hpp.
#include "apps/common/api/plumbing/route_run.hpp"

#include "apps/common/api/plumbing/ask.hpp"

namespace mneme::api {

access_verdict row_verdict(const route_row& row, const std::optional<access_scope>& who,
                           const std::vector<std::string>& path) {
  access_question q{row.access, who, {}, std::nullopt};
  if (row.access == route_access::user_named && !path.empty())
    q.named_user = path[0];
  return decide_access(q);
}

std::string scope_refusal_message(const route_row& row, const access_scope& who) {
  return row.access == route_access::admin_only
           ? "this route needs an admin token"
           : "the path's user: a token of " + to_string(who) + " may not act for another user";
}

void run_row(const call_ptr& c, const route_row& row) {
  // A key_owned row decides its scope where it opens or reads its session
  // (plumbing/session_lookup.hpp), not here: a lookup of the key before the route ran
  // could be answered before the key's owner created its session.
  guarded(c, row.handler, c);
}

} // namespace mneme::api
