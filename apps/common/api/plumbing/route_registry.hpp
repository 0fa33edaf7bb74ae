// The API's routes and what each needs (docs/api.md "Endpoints"): one row per route —
// method, pattern, handler, access, kind and, for a door, the shape of its refusals —
// added by the route groups (routes/route_groups.hpp) when the API is built; http_api
// dispatches on it. Adding a route: its handler and its row in its group's file, a test,
// its section in docs/api.md.
//
// Patterns are route_table.hpp's. Access (policies/access_scope.hpp): a key_owned row
// takes the {key} as its first capture, a user_named row with a capture takes the {user}
// there (one without names it in the query or body). The methods of the rows at one path
// are listed in the Allow header of a 405 in the order the rows were added.
//
// Threads: add() and add_metrics() while the API is built, from one thread; find() and
// metrics_text() from any thread afterwards (const).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "apps/common/api/front/http_exchange.hpp"
#include "apps/common/api/plumbing/route_table.hpp"
#include "policies/access_scope.hpp"

namespace mneme::api {

struct call; // plumbing/call.hpp
using call_ptr = std::shared_ptr<call>;

// How a route runs: in a request actor (asks the runtime, never blocks), or on the
// API's one blocking thread (/metrics: scoped_actor asks and SQLite reads).
enum class route_kind { actor, blocking };

using route_handler = std::function<void(const call_ptr&)>;

// The body of a refusal in a door's wire format, from mneme's status, code and message.
// The refusals http_api makes before a route runs (401, 405, 503) take the body shape of
// the route at their path; empty: mneme's own {"error":{"code","message"}}.
using refusal_body = std::function<std::string(int status, const std::string& code,
                                               const std::string& message)>;

// `r` in the shape of `row`'s refusals when `row` has one and `r` is an error in mneme's
// own shape ({"error":{"code","message"}} and nothing else): the answers made outside
// the door (the front's 413, a 503 of shutdown, a 500 of a lost request) read as the
// door's own. Any other answer is left as it is.
struct route_row;
void reshape_refusal(http_response& r, const route_row* row);

struct route_row {
  std::string method;
  std::string pattern;
  route_handler handler;
  route_access access;
  route_kind kind = route_kind::actor;
  refusal_body refusal; // empty for mneme's own routes
  bool token_free = false; // served without a token even when credentials are configured
};

class route_registry {
 public:
  void add(std::string method, std::string pattern, route_handler handler, route_access access,
           route_kind kind = route_kind::actor, refusal_body refusal = {});
  // A GET route anyone may call without a token, even when credentials are configured
  // (the console's static files: they hold no data). Access open, run in an actor.
  void add_token_free(std::string pattern, route_handler handler);
  // A section of GET /metrics (a door's counters), appended in the order added; samples
  // of one family rendered by several sections are merged (policies/metric_families.hpp).
  void add_metrics(std::function<std::string()> section);

  struct found {
    const route_row* row = nullptr;     // the route of the method and path
    std::vector<std::string> args;      // its decoded captures
    std::vector<std::string> allowed;   // the methods of every route at the path
    const route_row* at_path = nullptr; // the first route at the path, any method
  };
  found find(std::string_view method, std::string_view raw_path) const;

  // Every section of add_metrics, in order.
  std::string metrics_text() const;

 private:
  route_table table_;
  std::vector<route_row> rows_; // at the index table_.add() returned
  std::vector<std::function<std::string()>> metrics_;
};

} // namespace mneme::api
