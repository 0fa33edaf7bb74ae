// The Idempotency-Key header of a write; see idempotency_header.hpp.
#include "apps/common/api/plumbing/idempotency_header.hpp"

#include <string_view>

#include "apps/common/api/plumbing/answer.hpp"
#include "policies/idempotency.hpp"

namespace mneme::api {

std::optional<std::string> idempotency_key_of(const call_ptr& c) {
  auto sent = c->req.header_count(idempotency_header);
  if (sent > 1) {
    send_error(c, 400, "bad_request",
               std::string{"header '"} + idempotency_header + "' is sent more than once");
    return std::nullopt;
  }
  if (sent == 0)
    return std::string{};
  auto value = c->req.header(idempotency_header);
  if (auto why = check_idempotency_key(value); !why.empty()) {
    send_error(c, 400, "bad_request", why);
    return std::nullopt;
  }
  return value;
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
