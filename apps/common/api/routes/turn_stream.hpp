// The streamed answer of a turn sent with `"stream": true` (docs/api.md, "Streamed
// turns"): the answer_stream the session's model calls write into, relayed to the HTTP
// client as server-sent events, and the turn's end written after them.
//
// Events, in order (each `event: NAME` + one `data:` line of JSON + a blank line):
//   delta  {"content": "..."}                        text as it arrives
//   delta  {"tool_call": {"index", "id"?, "name"?, "arguments": "..."}}
//                                                    a fragment of a call (id and name
//                                                    on its first fragment only)
//   reply  the JSON of the non-streamed reply        once, when the turn ended
//   error  the JSON of the non-streamed error        instead of reply, when it failed
//   data: [DONE]                                     last
// The HTTP head (200, text/event-stream) is sent with the first event, so a turn refused
// before the model produced anything (400, 409, a failed compaction...) still answers
// with its plain HTTP status and JSON error.
//
// Contract: pieces come on the LLM transport thread, finish()/fail() on the request
// actor's; a mutex orders them, and nothing blocks (event_stream::push queues). A client
// that went away makes pushes no-ops: the turn goes on and its answer is stored.
#pragma once

#include <mutex>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "apps/common/api/front/http_exchange.hpp"
#include "apps/common/api/front/sse_channel.hpp"
#include "messages/answer_stream.hpp"

namespace mneme::api {

// One server-sent event: "event: NAME\ndata: JSON\n\n" (invalid UTF-8 replaced).
std::string sse_event(std::string_view name, const nlohmann::json& data);

class turn_event_relay final : public answer_stream {
 public:
  explicit turn_event_relay(http_reply reply) : channel_(std::move(reply)) {}

  // The turn ended: the reply event, [DONE], the end of the answer.
  void finish(const nlohmann::json& reply);
  // The turn failed: when the stream is open, the error event, [DONE], the end, and
  // true; false (nothing sent) when no event was sent yet: the caller answers the
  // plain HTTP error.
  bool fail(const nlohmann::json& error_body);

 protected:
  void on_text(std::string_view delta) override;
  void on_tool_call(size_t index, std::string_view id, std::string_view name,
                    std::string_view arguments_delta) override;

 private:
  std::mutex mu_; // guards channel_
  sse_channel channel_;
};

} // namespace mneme::api
