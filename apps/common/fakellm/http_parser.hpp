// Incremental HTTP/1.1 request parsing for the fake LLM server: a pure function
// over the bytes a connection has buffered so far. Understands the request line,
// headers and Content-Length bodies (no chunked request bodies), enforces size
// limits, and reports `Expect: 100-continue`. No I/O, no shared state: any
// thread may call it; each connection owns its own buffer.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mneme::fakellm {

struct http_limits {
  size_t max_header_bytes = 64 * 1024;
  size_t max_body_bytes = 64 * 1024 * 1024;
};

struct http_request {
  std::string method;
  std::string target;    // path plus query, as sent
  std::string version;   // "HTTP/1.1" or "HTTP/1.0"
  std::vector<std::pair<std::string, std::string>> headers; // names lower-cased
  std::string body;
  bool keep_alive = true;

  // The first header named `lower_name` (lower-case), or nullptr.
  const std::string* header(std::string_view lower_name) const;
  // The target without its query string.
  std::string_view path() const;
};

enum class parse_status {
  incomplete,   // need more bytes
  complete,     // `out` holds the request; `consumed` bytes belong to it
  bad_request,  // malformed; answer 400 and close
  too_large,    // header or body above the limits; answer 413 and close
  unsupported,  // e.g. a chunked request body; answer 411/400 and close
};

struct parse_result {
  parse_status status = parse_status::incomplete;
  size_t consumed = 0;            // set when complete
  bool headers_complete = false;  // the head was parsed (also while the body is incomplete)
  bool expects_continue = false;  // the client waits for "100 Continue" before the body
  std::string error;              // what was wrong, for bad_request/too_large/unsupported
};

// Parses the request at the start of `buffer`. On `complete` fills `*out`.
// REQUIRES: out != nullptr.
parse_result parse_request(std::string_view buffer, const http_limits& limits,
                           http_request* out);

std::string_view to_string(parse_status s);

} // namespace mneme::fakellm
