// The streamed answer of the OpenAI door (`"stream": true`, docs/api.md "OpenAI door"):
// the pieces of the model's answer relayed as `chat.completion.chunk` events, OpenAI's
// way: a first chunk with the role, content and tool-call deltas (a call's id, type and
// name on its first fragment), a last chunk with the finish_reason, a usage chunk
// ("choices": []) when stream_options.include_usage was set, then `data: [DONE]`. A
// failure after the stream opened is one `data: {"error":{...}}` event (the official
// SDKs raise it as an API error) and the end.
//
// Calls of mneme's built-in tools are not the client's: their fragments are not relayed
// (the turn runs them and goes on; only text and the client's calls reach it).
//
// Contract: pieces come on the LLM transport thread, finish()/fail() on the request
// actor's; a mutex orders them and nothing blocks. The HTTP head (200 and the headers
// given at construction) goes with the first chunk, so a request refused before any
// piece still answers with its own status.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "apps/common/api/doors/openai_chat/openai_wire.hpp"
#include "apps/common/api/front/sse_channel.hpp"
#include "messages/answer_stream.hpp"

namespace mneme::api {

class openai_chunk_relay final : public answer_stream {
 public:
  // `head`: id, created and model of every chunk. `builtin_names`: calls not relayed.
  openai_chunk_relay(http_reply reply, header_list headers, openai_answer head,
                     bool include_usage, std::vector<std::string> builtin_names);

  // A header of the HTTP head; only before the first chunk.
  void add_header(std::string name, std::string value);
  // The answer ended: the last chunk (with finish_reason), the usage chunk, [DONE].
  void finish(const openai_answer& whole);
  // False (nothing sent) when no chunk was sent yet: the caller answers the HTTP error.
  bool fail(const nlohmann::json& error_body);

 protected:
  void on_text(std::string_view delta) override;
  void on_tool_call(size_t index, std::string_view id, std::string_view name,
                    std::string_view arguments_delta) override;

 private:
  void chunk_locked(nlohmann::json delta, const std::string& finish_reason);

  std::mutex mu_; // guards everything below
  sse_channel channel_;
  openai_answer head_;
  bool include_usage_;
  std::vector<std::string> builtin_names_;
  bool role_sent_ = false;
  std::vector<bool> hidden_; // by call index: a built-in call's fragments
};

} // namespace mneme::api
