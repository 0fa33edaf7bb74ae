// HTTP/1.1 response framing for the fake LLM server: whole responses with a
// Content-Length, the head of a chunked response and its chunks. Pure string
// building; safe from any thread.
#pragma once

#include <string>
#include <string_view>

namespace mneme::fakellm {

std::string_view reason_phrase(int status);

// A complete response. `content_length_override` >= 0 announces that many bytes
// instead of body.size() (used to send a truncated body on purpose).
std::string http_response(int status, std::string_view content_type, std::string_view body,
                          bool keep_alive, long content_length_override = -1);

// The head of a `Transfer-Encoding: chunked` response.
std::string http_chunked_head(int status, std::string_view content_type, bool keep_alive);

// `response` (a whole response or a head) with the header line "name: value" added
// right after its status line.
std::string with_header(std::string response, std::string_view name, std::string_view value);

// One chunk; an empty `data` is the terminating chunk.
std::string http_chunk(std::string_view data);

} // namespace mneme::fakellm
