// The web console's routes (docs/console.md): GET /console/ and its files, embedded in
// the program (console_files(), generated at build time), served without a token — the
// page holds no data; its scripts call the JSON API with the token the user pastes —
// and GET /console, which redirects to /console/ so relative file names resolve.
//
// Threads: the handlers run in the request's actor; they only copy static bytes.
#include "apps/common/api/console/console_page.hpp"
#include "apps/common/api/plumbing/call.hpp"
#include "apps/common/api/routes/route_groups.hpp"

namespace mneme::api {

void add_console_routes(route_registry& r, const api_state&) {
  auto files = std::make_shared<const std::vector<embedded_file>>(console_files());
  r.add_token_free("/console/{*}", [files](const call_ptr& c) {
    c->finish(console_answer(*files, c->path.at(0)));
  });
  r.add_token_free("/console", [](const call_ptr& c) {
    http_response moved{308, "text/plain; charset=utf-8", "see /console/\n", {}, false};
    moved.headers.emplace_back("Location", "/console/");
    c->finish(std::move(moved));
  });
}

} // namespace mneme::api
