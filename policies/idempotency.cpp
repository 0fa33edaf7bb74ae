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
    case idempotency_verdict::unanswered: return "unanswered";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, idempotency_verdict v) {
  return os << to_string(v);
}

std::string idempotency_refusal_text(idempotency_verdict v, const std::string& key,
                                     const std::string& idem) {
  auto named = std::string{idempotency_header} + " '" + idem + "' of key '" + key + "'";
  switch (v) {
    case idempotency_verdict::in_flight:
      return named + ": a request with this key is still running; retry after it";
    case idempotency_verdict::mismatch:
      return named + " was used for a different request within the window; send this one"
                     " with a new key";
    case idempotency_verdict::unanswered:
      return named + ": the first request stored its message but no answer followed it (the"
                     " daemon stopped or the model call failed); send it again with a new key";
    default: return {};
  }
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

const message* turn_answer(const std::vector<message>& answer_rows) {
  for (auto it = answer_rows.rbegin(); it != answer_rows.rend(); ++it) {
    if (it->is_summary)
      continue;
    return it->role == msg_role::assistant ? &*it : nullptr;
  }
  return nullptr;
}

bool turn_answered(const std::vector<message>& answer_rows) {
  return turn_answer(answer_rows) != nullptr;
}

std::optional<message> door_keyed_row(const std::vector<message>& sent) {
  if (sent.empty())
    return std::nullopt;
  const auto& last = sent.back();
  if (last.is_summary || (last.role != msg_role::user && last.role != msg_role::tool))
    return std::nullopt;
  message m;
  m.role = last.role;
  m.content = last.content;
  m.tool_call_id = last.tool_call_id;
  return m;
}

bool same_door_request(const message& stored, const message& incoming) {
  return stored.role == incoming.role && stored.content == incoming.content
         && (incoming.role != msg_role::tool || stored.tool_call_id == incoming.tool_call_id);
}

idempotency_verdict decide_door_idempotent(const std::vector<message>& stored,
                                           const message& incoming) {
  if (stored.empty())
    return idempotency_verdict::fresh;
  if (!same_door_request(stored.front(), incoming))
    return idempotency_verdict::mismatch;
  if (!turn_answered(turn_answer_rows(stored)))
    return idempotency_verdict::unanswered;
  return idempotency_verdict::replay;
}

} // namespace mneme
