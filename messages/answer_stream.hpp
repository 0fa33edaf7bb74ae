// The receiver of a streamed model answer (issue 29 item 4): the LLM client hands it the
// pieces of an answer as they arrive from the upstream stream, before the answer is
// complete, and the front that asked for a stream (the daemon's HTTP API) relays them to
// its client. The complete answer still travels the normal way (chat_answer, turn_reply);
// this is only the early copy of it.
//
// Contract:
//   - Calls come from the LLM client's transport thread, in the order of the stream, and
//     must not block (queue the bytes and return).
//   - Text pieces have reasoning blocks (<think> ...) removed already; their concatenation
//     is the stored content, up to the whitespace the stored content trims at its ends.
//   - A tool-call piece names the call by its index in the answer; id and name arrive on
//     the first piece of a call (empty on later ones), the arguments in fragments.
//   - relayed() is true once any piece was handed over: from then on the turn cannot be
//     retried invisibly (the client saw part of an answer), so a failure ends the turn.
//   - cancel() (any thread; a door's POST /v1/responses/{id}/cancel) asks the model call
//     reading this answer to stop: the LLM client aborts the transfer at its next piece or
//     progress tick (actors/llm/curl_multi_loop.hpp http_call::cancelled), and the call
//     fails; cancel() also sets relayed(), so that failure ends the turn instead of a
//     retry. Later calls of the turn are aborted the same way.
// Carried by turn_input and chat_request as a local-only field: never serialized (a
// stream lives in this process).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string_view>

namespace mneme {

class answer_stream {
 public:
  virtual ~answer_stream() = default;

  void text(std::string_view delta) {
    if (delta.empty())
      return;
    relayed_.store(true);
    on_text(delta);
  }

  void tool_call(size_t index, std::string_view id, std::string_view name,
                 std::string_view arguments_delta) {
    relayed_.store(true);
    on_tool_call(index, id, name, arguments_delta);
  }

  bool relayed() const { return relayed_.load(); }

  void cancel() {
    relayed_.store(true);
    cancelled_.store(true);
  }
  bool cancelled() const { return cancelled_.load(); }

 protected:
  virtual void on_text(std::string_view delta) = 0;
  virtual void on_tool_call(size_t index, std::string_view id, std::string_view name,
                            std::string_view arguments_delta) = 0;

 private:
  std::atomic<bool> relayed_{false};
  std::atomic<bool> cancelled_{false};
};

using answer_stream_ptr = std::shared_ptr<answer_stream>;

} // namespace mneme
