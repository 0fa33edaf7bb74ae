// The stateless pass-through every door offers (docs/api.md "OpenAI door", "Responses
// door"): a request that names no session goes to the chat pool as it came — the
// client's messages, tools and sampling fields — and nothing is stored. Each door asks
// the pool itself (the answer is its wire's) with the request built here. Pure; any
// thread.
#pragma once

#include <string>
#include <vector>

#include "messages/agent_turn.hpp"
#include "messages/chat_request.hpp"

namespace mneme::api {

// The chat request of a pass-through: `messages` to `model` with the turn's tools and
// options; a stream to `sink` when it is set.
chat_request passthrough_request(std::string model, std::vector<message> messages,
                                 const turn_input& turn, answer_stream_ptr sink);

// The finish reason of a pass-through answer: "tool_calls" when it holds calls, the
// upstream's (or "stop") otherwise.
std::string passthrough_finish_reason(const chat_answer& a);

} // namespace mneme::api
