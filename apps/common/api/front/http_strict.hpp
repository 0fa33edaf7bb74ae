// The front's own HTTP rules (docs/api.md "Strict HTTP"): which request heads it refuses
// before any route sees them, the closing error answer it makes for them, and the
// chunk-size line of a chunked answer. Used by the front (http_front.cpp) only.
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <string>

#include <boost/beast/http.hpp>

#include "apps/common/api/front/http_exchange.hpp"

namespace mneme::api {

// mneme's {"error":{"code","message"}} answer that closes the connection after it.
http_response closing_error_response(int status, const char* code, const std::string& message);

// The strict-HTTP verdict on a parsed head: an error message, or "" when acceptable
// (one Content-Length of one decimal number, not with Transfer-Encoding; Transfer-Encoding
// only once and only `chunked`).
std::string strict_head_problem(
  const boost::beast::http::request_parser<boost::beast::http::empty_body>& p);

// `n` in lower-case hexadecimal, no leading zeros ("0" for 0): a chunk's size line.
std::string chunk_size_hex(size_t n);

} // namespace mneme::api
