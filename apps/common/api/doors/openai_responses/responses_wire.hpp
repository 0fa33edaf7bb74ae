// The OpenAI Responses wire format of the Responses door (docs/api.md "Responses door"):
// a `POST /v1/responses` body decoded into session messages and mneme's turn values, and
// the answers — the `response` object, the events of a stream — built from what the
// session answered. Errors are the OpenAI shape of doors/openai_shape.hpp. Pure
// functions; safe from any thread; they never throw.
//
// Input items into messages (in order):
//   - a string: one user message;
//   - `message` (or an item with `role` and no `type`): role user | system | developer
//     (a system row) | assistant; content a string or parts input_text / output_text /
//     text (joined); any other part type is refused naming it;
//   - `function_call` (call_id, name, arguments): a call of the assistant message before
//     it when that message has no tool results after it, else a new assistant message
//     without text — so [message, function_call, ...] is the one stored assistant row
//     with its text and calls, as mneme answered it;
//   - `function_call_output` (call_id, output a string or text parts): a tool row, named
//     after its call when the call is in the same input;
//   - `compaction` (mneme's, responses_compact_wire.hpp): a summary message standing
//     for the rows it replaced;
//   - `reasoning` items are skipped (mneme's answers carry none); any other item type is
//     refused naming it.
// `instructions` is the leading system message. Tools: `{"type":"function","name",...}`
// become chat function tools; any other tool type is refused naming it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "caf/expected.hpp"

#include "messages/agent_turn.hpp"
#include "messages/transcript.hpp"

namespace mneme::api {

struct responses_request {
  std::vector<message> input;      // the input items as messages (instructions not included)
  std::string instructions;        // "" when absent
  std::string model;               // "" when absent
  bool stream = false;
  bool store = true;
  std::string previous_response_id;
  std::string conversation;        // `conversation` (an id or {"id"}), "" when absent
  std::string prompt_cache_key;
  std::string user;
  // The response whose output items the input holds back (referenced_response_id), ""
  // when none: a client resending its whole transcript without naming it continues
  // that response's session.
  std::string referenced_response;
  turn_input turn;                 // set_tools, tools_json (chat shape), options
  // The request's fields a response object repeats (tools, tool_choice, temperature,
  // top_p, max_output_tokens, parallel_tool_calls, metadata, instructions, user, store,
  // text), as sent or OpenAI's defaults.
  nlohmann::json echo = nlohmann::json::object();
};

// errc::bad_request naming the field ("field 'input[2].type' ...").
caf::expected<responses_request> decode_responses_request(std::string_view body);

// The input items as messages (see the header comment); `where` names the field.
caf::expected<std::vector<message>> decode_response_items(const nlohmann::json& items,
                                                           const std::string& where);

// The id of the response the last of mneme's output items in `input` came from: an
// item `id` "msg_<rest>" or "fc_<rest>_<k>" (response_message_id, response_call_id) is
// of "resp_<rest>"; "" when no item carries one.
std::string referenced_response_id(const nlohmann::json& input);

struct responses_usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
};

// One answer as a `response` object.
struct responses_answer {
  std::string id;                  // "resp_..."
  int64_t created_at = 0;          // Unix seconds
  std::string model;
  std::string status = "completed"; // in_progress | completed | incomplete | failed |
                                    // cancelled
  std::string content;             // the assistant's text ("" = no message item)
  std::vector<tool_call> tool_calls;
  bool incomplete_by_length = false; // finish_reason "length"
  responses_usage usage;
  std::string previous_response_id; // "" = null
  std::string conversation;         // "" = null
  nlohmann::json error;             // null, or {"code","message"} of a failed response
  // A cancelled response's output: the items its stream began, each as streamed with
  // status "incomplete" (responses_stream.hpp stopped_output()); null: none.
  nlohmann::json partial_output;
  nlohmann::json echo = nlohmann::json::object(); // responses_request::echo
};

// The ids of the output items (derived from the response's id, so an answer fetched
// again names the same items): "msg_<rest>", "fc_<rest>_<index>".
std::string response_message_id(const std::string& response_id);
std::string response_call_id(const std::string& response_id, size_t index);

// The output items of an answer: the message (when it has text or no calls), then a
// function_call per call.
nlohmann::json response_output(const responses_answer& a);
// The whole `response` object.
nlohmann::json to_response_object(const responses_answer& a);

// The SSE bytes of one event: "event: TYPE\ndata: JSON\n\n" (TYPE = payload["type"]).
std::string response_event_bytes(const nlohmann::json& payload);

} // namespace mneme::api
