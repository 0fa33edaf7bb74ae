// The streamed answer of the Anthropic door (`"stream": true`, docs/api.md "Anthropic
// door"): the model's answer relayed as Anthropic's named server-sent events —
// message_start and a ping, then per content block content_block_start, its deltas
// (text_delta for text, input_json_delta for a tool_use's input) and
// content_block_stop, then message_delta (stop_reason, output tokens) and message_stop.
// A failure after the stream opened is one `error` event and the end (the official SDKs
// raise it as an API error).
//
// Blocks follow the pieces as they come: text opens a text block (closing a tool_use
// block), a call's first fragment opens its tool_use block (closing the open one).
// Calls of mneme's built-in tools are not the client's: their fragments are not relayed.
//
// Contract: pieces come on the LLM transport thread, finish()/fail() on the request
// actor's; a mutex orders them and nothing blocks. The HTTP head (200 and the headers
// given) goes with the first event, so a request refused before any piece still answers
// with its own status.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "apps/common/api/doors/anthropic_messages/anthropic_wire.hpp"
#include "apps/common/api/front/sse_channel.hpp"
#include "messages/answer_stream.hpp"

namespace mneme::api {

class anthropic_event_relay final : public answer_stream {
 public:
  // `head`: id and model of message_start. `builtin_names`: calls not relayed.
  anthropic_event_relay(http_reply reply, anthropic_answer head,
                        std::vector<std::string> builtin_names);

  // A header of the HTTP head; only before the first event.
  void add_header(std::string name, std::string value);
  // The answer ended: blocks the pieces did not carry (a replayed answer's), the open
  // block's stop, message_delta and message_stop.
  void finish(const anthropic_answer& whole);
  // False (nothing sent) when no event was sent yet: the caller answers the HTTP error.
  bool fail(const nlohmann::json& error_body);

 protected:
  void on_text(std::string_view delta) override;
  void on_tool_call(size_t index, std::string_view id, std::string_view name,
                    std::string_view arguments_delta) override;

 private:
  enum class block_kind { none, text, tool_use };
  void start_locked();
  void close_block_locked();
  void open_text_locked();
  void open_tool_locked(std::string_view id, std::string_view name);
  void text_delta_locked(std::string_view delta);
  void json_delta_locked(std::string_view partial);

  std::mutex mu_; // guards everything below
  sse_channel channel_;
  anthropic_answer head_;
  std::vector<std::string> builtin_names_;
  bool started_ = false;
  int64_t blocks_ = 0;           // blocks opened so far; the open one is blocks_ - 1
  block_kind open_ = block_kind::none;
  bool any_piece_ = false;       // a text or a client's call was relayed
  std::vector<bool> hidden_;     // by call index: a built-in call's fragments
  std::vector<int64_t> call_block_; // by call index: its block (-1: none yet)
};

} // namespace mneme::api
