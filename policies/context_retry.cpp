// The advice after a model error; see context_retry.hpp.
#include "policies/context_retry.hpp"

namespace mneme {

std::ostream& operator<<(std::ostream& os, const model_error_advice& a) {
  return os << "{retry=" << a.retry << " backoff=" << a.retry_after_backoff << "}";
}

model_error_advice advise_after_model_error(llm_error_kind kind, bool compacted) {
  if (compacted)
    return {true, false};
  switch (kind) {
    case llm_error_kind::rate_limited:
    case llm_error_kind::server_error:
    case llm_error_kind::refused:
    case llm_error_kind::network:
    case llm_error_kind::idle_timeout:
    case llm_error_kind::total_timeout:
    case llm_error_kind::malformed:
    case llm_error_kind::empty_answer:
      return {true, true};
    default:
      return {false, false};
  }
}

} // namespace mneme
