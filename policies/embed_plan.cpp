// The embedder's decisions; see embed_plan.hpp for the rules and invariants.
#include "policies/embed_plan.hpp"

#include <algorithm>

#include "policies/utf8.hpp"

namespace mneme {

bool worth_embedding(std::string_view role, bool is_summary, bool active,
                     std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return false;
  if (role == "fact")
    return active;
  if (is_summary)
    return true;
  return role == "user" || role == "assistant";
}

std::string embed_input(std::string_view text, std::size_t max_chars) {
  return std::string{text.substr(0, byte_offset_of_code_point(text, max_chars))};
}

embed_action on_failure(llm_error_kind kind, std::size_t batch_rows) {
  switch (kind) {
    case llm_error_kind::payload_too_large:
    case llm_error_kind::context_overflow:
    case llm_error_kind::output_too_large:
    case llm_error_kind::bad_request:
    case llm_error_kind::unsupported_parameter:
      return batch_rows > 1 ? embed_action::split : embed_action::skip;
    default:
      return embed_action::back_off;
  }
}

int64_t backoff_ms(int64_t failures, int64_t initial_ms, int64_t max_ms,
                   std::optional<int64_t> retry_after_s) {
  initial_ms = std::max<int64_t>(1, initial_ms);
  max_ms = std::max(initial_ms, max_ms);
  int64_t wait = initial_ms;
  for (int64_t i = 1; i < failures && wait < max_ms; ++i)
    wait = std::min(max_ms, wait * 2);
  if (retry_after_s && *retry_after_s > 0)
    wait = std::max(wait, std::min(max_ms, *retry_after_s * 1000));
  return std::min(wait, max_ms);
}

std::size_t after_success(std::size_t current, std::size_t configured) {
  configured = std::max<std::size_t>(1, configured);
  return std::clamp<std::size_t>(current * 2, 1, configured);
}

std::size_t after_split(std::size_t current) {
  return std::max<std::size_t>(1, current / 2);
}

} // namespace mneme
