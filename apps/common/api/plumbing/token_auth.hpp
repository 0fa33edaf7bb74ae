// Who sends a request (docs/api.md "Authentication"): the scope of its bearer token (or,
// without an Authorization header, of its `x-api-key`, the header Anthropic's clients send) —
// admin for gateway.auth_token, the scope a tokens file gives it (tokens/token_store.hpp),
// admin for every caller when neither is configured — and the refusal of a request
// without a valid token: 401 with `WWW-Authenticate: Bearer`, counted, and logged at
// most `logs_per_second` times a second (the rest are counted in the next logged line).
//
// Threads: every member from any thread; set_tokens() swaps the whole token set under
// a mutex, so a request checked after it returns sees the new set.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <spdlog/logger.h>

#include "apps/common/api/front/http_exchange.hpp"
#include "apps/common/api/tokens/token_store.hpp"
#include "messages/transcript.hpp"
#include "policies/access_scope.hpp"
#include "policies/log_rate.hpp"

namespace mneme::api {

class token_auth {
 public:
  // admin_token: gateway.auth_token ("" = none); tokens: the tokens file's (null = none).
  token_auth(std::string admin_token, std::shared_ptr<const token_set> tokens,
             int64_t logs_per_second, std::shared_ptr<spdlog::logger> log,
             std::function<time_ms()> clock);

  // The scope of the request's bearer token; nullopt when none is valid.
  std::optional<access_scope> scope_of(const http_request& req) const;

  // REQUIRES: tokens is not null.
  void set_tokens(std::shared_ptr<const token_set> tokens);

  // The 401 of a request without a valid token (counted and logged).
  http_response unauthorized(const http_request& head) const;
  int64_t unauthorized_count() const { return unauthorized_.load(); }

 private:
  std::string admin_token_;
  mutable std::mutex tokens_mu_; // guards tokens_
  std::shared_ptr<const token_set> tokens_;
  std::shared_ptr<spdlog::logger> log_;
  std::function<time_ms()> clock_;
  mutable std::mutex logs_mu_; // guards logs_
  mutable log_rate_gate logs_;
  mutable std::atomic<int64_t> unauthorized_{0};
};

} // namespace mneme::api
