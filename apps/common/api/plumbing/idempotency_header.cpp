// The Idempotency-Key header of a write; see idempotency_header.hpp.
#include "apps/common/api/plumbing/idempotency_header.hpp"

#include <string_view>

#include "apps/common/api/plumbing/answer.hpp"
#include "policies/idempotency.hpp"

namespace mneme::api {

std::optional<std::string> idempotency_key_in(const http_request& req, std::string& refused) {
  auto sent = req.header_count(idempotency_header);
  if (sent == 0)
    return std::string{};
  if (sent > 1) {
    refused = std::string{"header '"} + idempotency_header + "' is sent more than once";
    return std::nullopt;
  }
  auto value = req.header(idempotency_header);
  refused = check_idempotency_key(value);
  if (!refused.empty())
    return std::nullopt;
  return value;
}

std::optional<std::string> idempotency_key_of(const call_ptr& c) {
  std::string refused;
  auto key = idempotency_key_in(c->req, refused);
  if (!key)
    send_error(c, 400, "bad_request", refused);
  return key;
}

void mark_replayed(http_response& res) {
  res.headers.emplace_back(idempotent_replayed_header, "true");
}

void send_json_replayable(const call_ptr& c, int status, const json& body, bool replayed) {
  auto res = json_response(status, body);
  if (replayed)
    mark_replayed(res);
  c->finish(std::move(res));
}

} // namespace mneme::api
