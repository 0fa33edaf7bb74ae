// The Idempotency-Key header of a write; see idempotency_header.hpp.
#include "apps/common/api/plumbing/idempotency_header.hpp"

#include <cctype>
#include <string_view>

#include "apps/common/api/plumbing/answer.hpp"
#include "policies/idempotency.hpp"

namespace mneme::api {

namespace {

bool same_header_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i]))
        != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

} // namespace

std::optional<std::string> idempotency_key_of(const call_ptr& c) {
  const std::string* found = nullptr;
  for (const auto& [name, value] : c->req.headers) {
    if (!same_header_name(name, idempotency_header))
      continue;
    if (found != nullptr) {
      send_error(c, 400, "bad_request",
                 std::string{"header '"} + idempotency_header + "' is sent more than once");
      return std::nullopt;
    }
    found = &value;
  }
  if (found == nullptr)
    return std::string{};
  if (auto why = check_idempotency_key(*found); !why.empty()) {
    send_error(c, 400, "bad_request", why);
    return std::nullopt;
  }
  return *found;
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
