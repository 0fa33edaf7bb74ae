// The streamed answer of the Responses door (`"stream": true`, docs/api.md "Responses
// door"): OpenAI's event sequence, each event `event: TYPE` + `data: {..., "type",
// "sequence_number"}` with sequence numbers from 0:
//
//   response.created, response.in_progress              (before the first output event)
//   per output item, in the order it appears:
//     message:       response.output_item.added, response.content_part.added,
//                    response.output_text.delta*, then at the end
//                    response.output_text.done, response.content_part.done,
//                    response.output_item.done
//     function_call: response.output_item.added, response.function_call_arguments.delta*,
//                    then at the end response.function_call_arguments.done,
//                    response.output_item.done
//   response.completed (or response.incomplete) with the whole response object.
// A stopped stream (POST /v1/responses/{id}/cancel, or its client gone: stop()) relays
// nothing more; its end gives every item it began its closing events with what it had
// streamed — a message: response.output_text.done, response.content_part.done,
// response.output_item.done; a call: response.function_call_arguments.done,
// response.output_item.done — each item with status "incomplete", then
// response.incomplete carrying the object with status "cancelled" and those items as
// its output (stopped_output(): what the cancel answers and the record keeps). OpenAI's
// stream has three terminal events (completed, incomplete, failed): `response.cancelled`
// is a webhook event only, which the official stream readers refuse or never see as an
// end, so a cancelled stream ends with the one for a response that stopped short.
// A failure after the stream opened is response.failed (the object with status "failed"
// and its error) then an `error` event, and the end. The .done events carry the stored
// answer (its text, its calls), so they are what GET /v1/responses/{id} answers.
//
// Calls of mneme's built-in tools are not the client's: their fragments are not relayed.
//
// Contract: pieces come on the LLM transport thread, finish()/fail() on the request
// actor's, stop() on any; a mutex orders them and nothing blocks. The HTTP head (200 and
// the headers added before) goes with the first event, so a request refused before any
// piece still answers with its own status. An event that finds the client gone stops
// the stream (cancel(): the turn's model call is aborted at its next piece or tick).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/common/api/doors/openai_responses/responses_wire.hpp"
#include "apps/common/api/front/sse_channel.hpp"
#include "messages/answer_stream.hpp"

namespace mneme::api {

class responses_event_relay final : public answer_stream {
 public:
  // `head`: the response's id, created_at, model and echo. `builtin_names`: calls not
  // relayed.
  responses_event_relay(http_reply reply, responses_answer head,
                        std::vector<std::string> builtin_names);

  // A header of the HTTP head; only before the first event.
  void add_header(std::string name, std::string value);
  // The answer ended: the .done events of every item, then response.completed.
  void finish(const responses_answer& whole);
  // False (nothing sent) when no event was sent yet: the caller answers the HTTP error.
  bool fail(const std::string& code, const std::string& message);
  // Stops the stream (cancel()) and answers the items it began, in output order, each
  // as streamed so far with status "incomplete"; the same from then on (nothing more is
  // relayed). finish() of a "cancelled" answer ends the stream with them.
  nlohmann::json stopped_output();

 protected:
  void on_text(std::string_view delta) override;
  void on_tool_call(size_t index, std::string_view id, std::string_view name,
                    std::string_view arguments_delta) override;

 private:
  struct call_slot {
    bool hidden = false;   // a built-in call
    int64_t output_index = -1;
    std::string item_id;
    std::string call_id, name, arguments; // as streamed so far
  };

  void emit_locked(nlohmann::json event);
  void open_locked();
  void open_message_locked();
  void close_message_locked(const std::string& text);
  // The items begun, by output index, as stopped_output() answers them.
  std::vector<std::pair<int64_t, nlohmann::json>> partial_items_locked() const;
  void end_stopped_locked(const responses_answer& whole);
  // An event that found the client gone stops the stream.
  void check_client_locked();

  std::mutex mu_; // guards everything below
  sse_channel channel_;
  responses_answer head_;
  std::vector<std::string> builtin_names_;
  int64_t sequence_ = 0;
  bool opened_ = false;
  int64_t next_output_ = 0;
  int64_t message_index_ = -1;    // the message item's output index (-1: none yet)
  std::string text_;              // the message's text as streamed so far
  int64_t visible_calls_ = 0;
  std::vector<call_slot> slots_;  // by the stream's call index (of the current answer)
  std::vector<int64_t> call_outputs_; // output index of the k-th visible call
};

} // namespace mneme::api
