// How the LLM client turns a failure into a caf::error: curl's result code and the
// kinds of messages/llm_error_kind.hpp map onto mneme::errc, and every error carries a
// context line with the HTTP status and a short excerpt of the answer body, with the
// API key redacted. Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <curl/curl.h>

#include "caf/error.hpp"
#include "caf/make_message.hpp" // errc.hpp needs it for make_error with a context

#include "messages/errc.hpp"
#include "messages/llm_errc.hpp"

namespace mneme::llm {

// The transport kind of a failed curl transfer (refused, DNS, TLS, total timeout,
// anything else = network). REQUIRES: code != CURLE_OK. The idle timeout is detected
// by the transport itself, never by curl.
llm_error_kind classify_curl_code(CURLcode code);

// At most `max_chars` of `body`, with every occurrence of `secret` (when non-empty)
// replaced by "[redacted]", control characters flattened to spaces, and "..." appended
// when cut. Used for error contexts and logs.
std::string body_excerpt(std::string_view body, std::string_view secret,
                         size_t max_chars = 200);

// The caf::error of a classified failure: code from `kind`, context
// "<detail>[; HTTP <status>][; body: <excerpt>]". `status` 0 = no HTTP answer. With
// `retry_after` (seconds, the upstream's Retry-After read by policies/retry_after.hpp)
// the context is (text, retry_after): messages/llm_errc.hpp upstream_retry_after_of.
caf::error make_llm_error(llm_error_kind kind, std::string_view detail, long status = 0,
                          std::string_view body = {}, std::string_view secret = {},
                          std::optional<int64_t> retry_after = std::nullopt);

} // namespace mneme::llm
