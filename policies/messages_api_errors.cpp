// The Messages API error classification; rules in messages_api_errors.hpp.
#include "policies/messages_api_errors.hpp"

#include "policies/error_classifier.hpp"

namespace mneme {

llm_error_kind classify_messages_api_error(int status, std::string_view type,
                                           std::string_view message) {
  if (type == "overloaded_error" || type == "api_error" || type == "timeout_error")
    return llm_error_kind::server_error;
  if (type == "rate_limit_error" || status == 429)
    return classify_http_answer(429, message);
  if (type == "authentication_error" || type == "permission_error" || status == 401
      || status == 403)
    return llm_error_kind::auth;
  if (type == "billing_error" || status == 402)
    return llm_error_kind::quota;
  if (type == "request_too_large" || status == 413)
    return llm_error_kind::payload_too_large;
  if (type == "not_found_error" || status == 404)
    return llm_error_kind::bad_request;
  bool client_status = status >= 400 && status <= 499;
  if (type == "invalid_request_error" || client_status)
    return classify_http_answer(client_status ? status : 400, message);
  if (status == 0)
    return llm_error_kind::server_error;
  auto kind = classify_http_answer(status, message);
  return kind == llm_error_kind::none ? llm_error_kind::server_error : kind;
}

} // namespace mneme
