// One chat-completions call as data: the HTTP call built from an endpoint and a
// chat_request, and the reading of its outcome into a chat_answer or a classified
// caf::error. Pure functions; the transport (curl_multi_loop) runs the call between them.
#pragma once

#include "caf/expected.hpp"

#include "actors/llm/curl_multi_loop.hpp"
#include "actors/llm/llm_endpoint.hpp"
#include "messages/chat_request.hpp"

namespace mneme::llm {

// POST endpoint.url with the wire JSON of `req` (model defaulted to endpoint.model),
// headers Content-Type, Authorization (when a key is set), and
// (endpoint.api anthropic: the Messages body of messages_api_wire.hpp, x-api-key instead
// of Authorization, anthropic-version: 2023-06-01), and
// "X-Mneme-Purpose: chat|summary|compaction" from req.purpose. A compaction request
// goes to compaction_url(endpoint.url) with the compaction body (compaction_wire.hpp). `total_timeout` is what is left of
// the request's deadline (REQUIRES: > 0); the idle timeout is the endpoint's, capped
// by it.
http_call build_http_call(const llm_endpoint& endpoint, const chat_request& req,
                          std::chrono::milliseconds total_timeout);

class streamed_answer;

// The answer of a finished call, or its failure: transport kinds as reported by the
// loop; HTTP non-2xx through policies' classify_http_answer(status, body); a 2xx error
// object likewise with its embedded status; a 2xx body through parse_chat_answer.
// The error context names the failure, the elapsed time, the HTTP status and a body
// excerpt with `api_key` redacted. Compaction answers are read by
// parse_compaction_answer. A call that asked for a stream passes the `stream` that read
// its body while it arrived: a 2xx body that was a stream is its assembled answer; one
// that was a whole JSON answer (the upstream ignored "stream") is parsed as such and
// handed to the stream's sink in one piece. With `api` anthropic the body is read by
// messages_api_wire.hpp and failures are classified by policies/messages_api_errors.hpp
// (an error object in a 2xx body, too); the stream is then a messages_sse_answer.
caf::expected<chat_answer> read_http_outcome(const http_outcome& out, llm_purpose purpose,
                                             const std::string& api_key,
                                             streamed_answer* stream = nullptr,
                                             llm_api api = llm_api::openai);

} // namespace mneme::llm
