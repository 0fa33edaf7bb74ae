// The stateless pass-through of the doors; see door_passthrough.hpp.
#include "apps/common/api/doors/door_passthrough.hpp"

namespace mneme::api {

chat_request passthrough_request(std::string model, std::vector<message> messages,
                                 const turn_input& turn, answer_stream_ptr sink) {
  chat_request req;
  req.model = std::move(model);
  req.messages = std::move(messages);
  req.purpose = llm_purpose::chat;
  req.tools_json = turn.tools_json;
  const auto& opt = turn.options;
  req.extra_json = opt.extra_json;
  if (opt.has_max_tokens)
    req.max_tokens = opt.max_tokens;
  if (opt.has_temperature)
    req.temperature = opt.temperature;
  req.stream = sink != nullptr;
  req.sink = std::move(sink);
  return req;
}

std::string passthrough_finish_reason(const chat_answer& a) {
  if (!a.tool_calls.empty())
    return "tool_calls";
  return a.finish_reason.empty() ? "stop" : a.finish_reason;
}

} // namespace mneme::api
