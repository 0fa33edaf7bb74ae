// Idempotent writes: see idempotency.hpp.
#include "policies/idempotency.hpp"

#include <ostream>

namespace mneme {

std::string check_idempotency_key(std::string_view value) {
  if (value.empty())
    return std::string{"header '"} + idempotency_header + "' is empty; send 1 to "
           + std::to_string(max_idempotency_key_bytes) + " printable ASCII characters";
  if (value.size() > max_idempotency_key_bytes)
    return std::string{"header '"} + idempotency_header + "' is "
           + std::to_string(value.size()) + " bytes; at most "
           + std::to_string(max_idempotency_key_bytes) + " are allowed";
  for (std::size_t i = 0; i < value.size(); ++i) {
    auto ch = static_cast<unsigned char>(value[i]);
    if (ch < 0x20 || ch > 0x7e)
      return std::string{"header '"} + idempotency_header + "' holds a byte outside printable"
             " ASCII at offset " + std::to_string(i);
  }
  if (value.front() == ' ' || value.back() == ' ')
    return std::string{"header '"} + idempotency_header
           + "' starts or ends with a space";
  return {};
}

bool same_request(const message& stored, const message& incoming) {
  return stored.role == incoming.role && stored.content == incoming.content
         && stored.tool_call_id == incoming.tool_call_id
         && stored.tool_name == incoming.tool_name && stored.tool_calls == incoming.tool_calls;
}

const char* to_string(idempotency_verdict v) {
  switch (v) {
    case idempotency_verdict::fresh: return "fresh";
    case idempotency_verdict::in_flight: return "in_flight";
    case idempotency_verdict::mismatch: return "mismatch";
    case idempotency_verdict::replay: return "replay";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, idempotency_verdict v) {
  return os << to_string(v);
}

idempotency_verdict decide_idempotent(bool running, const std::vector<message>& stored,
                                      const message& incoming) {
  if (running)
    return idempotency_verdict::in_flight;
  if (stored.empty())
    return idempotency_verdict::fresh;
  if (!same_request(stored.front(), incoming))
    return idempotency_verdict::mismatch;
  return idempotency_verdict::replay;
}

std::vector<message> turn_answer_rows(const std::vector<message>& stored) {
  std::vector<message> out;
  for (std::size_t i = 1; i < stored.size(); ++i) {
    if (is_real_user_message(stored[i]))
      break;
    out.push_back(stored[i]);
  }
  return out;
}

bool turn_answered(const std::vector<message>& answer_rows) {
  return !answer_rows.empty() && answer_rows.back().role == msg_role::assistant
         && !answer_rows.back().is_summary;
}

} // namespace mneme
