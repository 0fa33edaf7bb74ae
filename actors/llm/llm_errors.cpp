// Mapping of LLM failures onto mneme::errc; see llm_errors.hpp.
#include "actors/llm/llm_errors.hpp"

#include <cassert>

namespace mneme::llm {

errc to_errc(llm_error_kind kind) {
  // REQUIRES: a failure, not a success.
  assert(kind != llm_error_kind::none);
  switch (kind) {
    case llm_error_kind::none: return errc::internal;
    case llm_error_kind::refused: return errc::llm_refused;
    case llm_error_kind::dns: return errc::llm_dns;
    case llm_error_kind::tls: return errc::llm_tls;
    case llm_error_kind::idle_timeout: return errc::llm_idle_timeout;
    case llm_error_kind::total_timeout: return errc::llm_total_timeout;
    case llm_error_kind::network: return errc::llm_network;
    case llm_error_kind::payload_too_large: return errc::llm_payload_too_large;
    case llm_error_kind::long_context_rate_limit: return errc::llm_long_context_rate_limit;
    case llm_error_kind::rate_limited: return errc::llm_rate_limited;
    case llm_error_kind::output_too_large: return errc::llm_output_too_large;
    case llm_error_kind::context_overflow: return errc::llm_context_overflow;
    case llm_error_kind::unsupported_parameter: return errc::llm_unsupported_parameter;
    case llm_error_kind::auth: return errc::llm_auth;
    case llm_error_kind::quota: return errc::llm_quota;
    case llm_error_kind::server_error: return errc::llm_server_error;
    case llm_error_kind::bad_request: return errc::llm_bad_request;
    case llm_error_kind::malformed: return errc::llm_malformed;
    case llm_error_kind::empty_answer: return errc::llm_empty_answer;
  }
  return errc::internal;
}

llm_error_kind classify_curl_code(CURLcode code) {
  assert(code != CURLE_OK);
  switch (code) {
    case CURLE_COULDNT_CONNECT:
      return llm_error_kind::refused;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return llm_error_kind::dns;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_USE_SSL_FAILED:
      return llm_error_kind::tls;
    case CURLE_OPERATION_TIMEDOUT:
      return llm_error_kind::total_timeout;
    default:
      return llm_error_kind::network;
  }
}

std::string body_excerpt(std::string_view body, std::string_view secret, size_t max_chars) {
  std::string text{body};
  if (!secret.empty()) {
    for (auto pos = text.find(secret); pos != std::string::npos;
         pos = text.find(secret, pos))
      text.replace(pos, secret.size(), "[redacted]");
  }
  bool cut = text.size() > max_chars;
  if (cut) {
    text.resize(max_chars);
    // Do not leave half a UTF-8 sequence at the end.
    while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80)
      text.pop_back();
    if (!text.empty() && (static_cast<unsigned char>(text.back()) & 0x80))
      text.pop_back();
  }
  for (auto& c : text)
    if (static_cast<unsigned char>(c) < 0x20)
      c = ' ';
  if (cut)
    text += "...";
  return text;
}

caf::error make_llm_error(llm_error_kind kind, std::string_view detail, long status,
                          std::string_view body, std::string_view secret) {
  std::string ctx{detail};
  if (status != 0)
    ctx += "; HTTP " + std::to_string(status);
  if (!body.empty())
    ctx += "; body: " + body_excerpt(body, secret);
  return caf::make_error(to_errc(kind), std::move(ctx));
}

} // namespace mneme::llm
