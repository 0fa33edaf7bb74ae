// How a route answers; see answer.hpp.
#include "apps/common/api/plumbing/answer.hpp"

#include "apps/common/api/http_status.hpp"
#include "apps/common/api/plumbing/api_state.hpp"
#include "messages/llm_errc.hpp"
#include "policies/client_text.hpp"
#include "policies/retry_after.hpp"

namespace mneme::api {

namespace {

constexpr const char* json_type = "application/json";

} // namespace

http_response json_response(int status, const json& body) {
  return http_response{status, json_type, dump_json(body), {}, false};
}

http_response error_response(int status, const std::string& code, const std::string& message) {
  return json_response(status, error_json(code, message));
}

void send_json(const call_ptr& c, int status, const json& body) {
  c->finish(json_response(status, body));
}

void send_error(const call_ptr& c, int status, const std::string& code, const std::string& msg) {
  send_json(c, status, error_json(code, msg));
}

std::pair<int, json> error_answer(const call_ptr& c, const caf::error& refusal) {
  auto& api = *c->api;
  // Another user's session, found where the route opened or read it: a user token gets
  // the answer of an unknown key (the {key} of the route).
  if (hidden_from(c->who, refusal))
    c->refused_for_scope();
  auto err = as_seen_by(c->who, refusal, c->path.empty() ? std::string{} : c->path[0]);
  if (api.shutting_down.load() && err != errc::bad_request && err != errc::not_found
      && err != errc::foreign_session)
    return {503, error_json("shutting_down", "the daemon is shutting down")};
  auto status = http_status_of(err);
  if (status >= 500)
    api.log->warn("method={} path={} status={} error={}", c->req.method,
                  log_quoted(raw_path_of(c->req.target)), status, log_quoted(render_error(err)));
  auto body = error_json(error_code_of(err), error_message_of(err));
  if (auto r = turn_reply_of(err)) { // an exhausted turn: the new session, the notice,
    auto turn = to_json(*r);         // the compactions it tried
    turn.erase("answer");
    turn.erase("prompt_tokens");
    body.update(turn);
  }
  return {status, std::move(body)};
}

void fail(const call_ptr& c, const caf::error& err) {
  if (c->forward_elsewhere(err))
    return;
  auto [status, body] = error_answer(c, err);
  auto res = json_response(status, body);
  if (err == errc::idempotency_in_flight) // the first request answers soon
    res.headers.emplace_back("Retry-After", "1");
  add_upstream_retry_after(res.headers, upstream_retry_after_of(err), status);
  c->finish(std::move(res));
}

void add_upstream_retry_after(header_list& headers, std::optional<int64_t> upstream_wait,
                              int client_status) {
  if (upstream_wait && passes_retry_after(client_status))
    headers.emplace_back("Retry-After", std::to_string(*upstream_wait));
}

} // namespace mneme::api
