// Mapping of LLM failures onto mneme::errc; see llm_errors.hpp.
#include "actors/llm/llm_errors.hpp"

#include <cassert>

#include "policies/utf8_cut.hpp"

namespace mneme::llm {

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
    text.resize(utf8_prefix_length(text, max_chars)); // never half a character
  }
  for (auto& c : text)
    if (static_cast<unsigned char>(c) < 0x20)
      c = ' ';
  if (cut)
    text += "...";
  return text;
}

caf::error make_llm_error(llm_error_kind kind, std::string_view detail, long status,
                          std::string_view body, std::string_view secret,
                          std::optional<int64_t> retry_after) {
  std::string ctx{detail};
  if (status != 0)
    ctx += "; HTTP " + std::to_string(status);
  if (retry_after)
    ctx += "; retry-after " + std::to_string(*retry_after) + " s";
  if (!body.empty())
    ctx += "; body: " + body_excerpt(body, secret);
  if (retry_after)
    return caf::make_error(mneme::to_errc(kind), std::move(ctx), *retry_after);
  return caf::make_error(mneme::to_errc(kind), std::move(ctx));
}

} // namespace mneme::llm
