// What the fake LLM sends for one POST /v1/messages request (Anthropic's Messages API):
// the same decisions as the chat-completions endpoint (chat_responder.hpp: faults,
// tool calls, summaries, the window), written in Anthropic's format. The faults' HTTP
// answers in Anthropic's words:
//   unavailable          529 overloaded_error "Overloaded"
//   payload_too_large    413 request_too_large
//   long_context_429     429 rate_limit_error "Extra usage is required for long context requests."
//   rate_limit_429       429 rate_limit_error "This request would exceed the rate limit ..."
//   (a rule's retry_after: the Retry-After header on these, as on the chat endpoint)
//   overflow_400, and a prompt over the window
//                        400 invalid_request_error "prompt is too long: N tokens > W maximum"
//   output_too_large_400 400 invalid_request_error "input length and `max_tokens` exceed
//                        context limit: P + M > W, ..."
//   refuse/reset/silence, latency, and the body faults as on the chat endpoint
//   (malformed_json in a stream: an event whose data is not JSON).
// Pure, like plan_chat_response; any thread.
#pragma once

#include "apps/common/fakellm/chat_responder.hpp"

namespace mneme::fakellm {

// REQUIRES: decision.answer is set exactly when `rule` points at its rule.
response_plan plan_messages_response(const chat_call& call, const chat_facts& facts,
                                     const fault_decision& decision, const fault_rule* rule,
                                     const answer_settings& settings);

// A 4xx/5xx answer with Anthropic's error body.
response_plan messages_error_plan(int status, std::string_view type, std::string_view message,
                                  bool keep_alive);

} // namespace mneme::fakellm
