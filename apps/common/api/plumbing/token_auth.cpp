// Who sends a request; see token_auth.hpp.
#include "apps/common/api/plumbing/token_auth.hpp"

#include <cassert>

#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/bearer_auth.hpp"
#include "apps/common/api/plumbing/route_table.hpp"
#include "policies/client_text.hpp"

namespace mneme::api {

token_auth::token_auth(std::string admin_token, std::shared_ptr<const token_set> tokens,
                       int64_t logs_per_second, std::shared_ptr<spdlog::logger> log,
                       std::function<time_ms()> clock)
  : admin_token_(std::move(admin_token)),
    tokens_(std::move(tokens)),
    log_(std::move(log)),
    clock_(std::move(clock)),
    logs_{logs_per_second} {}

std::optional<access_scope> token_auth::scope_of(const http_request& req) const {
  std::shared_ptr<const token_set> scoped;
  {
    std::lock_guard lock{tokens_mu_};
    scoped = tokens_;
  }
  if (admin_token_.empty() && !scoped)
    return access_scope::admin();
  const auto authorization = req.header("Authorization"); // presented points into it
  const auto api_key = req.header("x-api-key");            // or into this
  auto presented = bearer_token(authorization);
  if (!presented && !api_key.empty())
    presented = std::string_view{api_key};
  if (!presented)
    return std::nullopt;
  if (!admin_token_.empty() && constant_time_equals(*presented, admin_token_))
    return access_scope::admin();
  return scoped ? scoped->find(*presented) : std::nullopt;
}

void token_auth::set_tokens(std::shared_ptr<const token_set> tokens) {
  assert(tokens);
  std::lock_guard lock{tokens_mu_};
  tokens_ = std::move(tokens);
}

http_response token_auth::unauthorized(const http_request& head) const {
  unauthorized_.fetch_add(1);
  int64_t suppressed = 0;
  bool logged = false;
  {
    std::lock_guard lock{logs_mu_};
    logged = logs_.allow(clock_(), suppressed);
  }
  if (logged)
    log_->info("event=unauthorized client={} method={} path={} suppressed_before={}",
               log_quoted(head.remote), log_quoted(head.method),
               log_quoted(raw_path_of(head.target)), suppressed);
  auto r = error_response(401, "unauthorized",
                          "a valid 'Authorization: Bearer TOKEN' (or 'x-api-key: TOKEN') is required");
  r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

} // namespace mneme::api
