// A request made on behalf of another one; see inner_request.hpp.
#include "apps/common/api/plumbing/inner_request.hpp"

#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/api_state.hpp"
#include "apps/common/api/plumbing/checks.hpp"
#include "apps/common/api/plumbing/route_run.hpp"

namespace mneme::api {

namespace {

// The connection side of an inner request: the answer goes to a function.
class answer_capture final : public reply_sink {
 public:
  explicit answer_capture(std::function<void(http_response)> done) : done_(std::move(done)) {}
  void deliver(http_response res) override {
    auto done = std::move(done_); // http_reply delivers at most once
    if (done)
      done(std::move(res));
  }
  std::shared_ptr<event_stream> open_stream(int, std::string, header_list) override {
    deliver(error_response(500, "internal", "an inner request cannot stream"));
    return nullptr;
  }

 private:
  std::function<void(http_response)> done_;
};

} // namespace

void run_inner_request(const call_ptr& outer, std::string method, std::string target,
                       std::string body, std::function<void(http_response)> done) {
  auto& api = outer->api;
  auto found = api->routes.find(method, raw_path_of(target));
  if (!found.row || found.row->kind != route_kind::actor)
    return done(error_response(found.row ? 500 : 404, found.row ? "internal" : "not_found",
                               "no inner route " + method + " " + std::string{raw_path_of(target)}));
  auto c = std::make_shared<call>();
  c->api = api;
  c->reply = http_reply{std::make_shared<answer_capture>(std::move(done))};
  c->id = api->pending.track(c->reply);
  c->req.method = std::move(method);
  c->req.target = std::move(target);
  c->req.body = std::move(body);
  c->req.remote = outer->req.remote;
  if (auto auth = outer->req.header("Authorization"); !auth.empty())
    c->req.headers.emplace_back("Authorization", std::move(auth));
  c->req.headers.emplace_back("Content-Type", "application/json");
  c->path = std::move(found.args);
  c->query = parse_query(c->req.target);
  c->who = outer->who;
  c->self = outer->self;
  const auto& row = *found.row;
  switch (row_verdict(row, c->who, c->path)) {
    case access_verdict::allow: return run_row(c, row);
    case access_verdict::unauthorized: // not for a scope the outer request was admitted with
    case access_verdict::forbidden:
    case access_verdict::hidden: return refuse_scope(c, scope_refusal_message(row, c->who));
  }
}

} // namespace mneme::api
