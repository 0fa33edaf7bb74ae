// The input of one agent turn (SPEC §8.1, issue 29): what a client sends to
// POST /v1/sessions/{key}/turns after validation, carried unchanged from the HTTP front
// through the gateway to the session actor. Either a user message (`content`) or the
// results of the model's pending tool calls (`tool_results`), plus the tools offered to
// the model and the per-request sampling fields. Plain values, standard library only
// (the CAF inspect() overloads are in messages/session_messages.hpp). Safe from any
// thread; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "messages/answer_stream.hpp"

namespace mneme {

// One result of a pending tool call, stored as a `tool` row answering it.
struct tool_result_input {
  std::string tool_call_id;
  std::string content;
  bool is_error = false; // the tool failed: the row's content says so
};

// The model settings of one request (not kept with the session). CAF 0.17 carries no
// std::optional: presence is a flag.
struct turn_options {
  bool has_max_tokens = false;
  int64_t max_tokens = 0;      // sent as max_tokens and kept free as the output reserve
  bool has_temperature = false;
  double temperature = 0.0;
  // A JSON object of the other request fields passed to the model verbatim:
  // tool_choice, top_p, response_format, stop, seed, parallel_tool_calls. "" = none.
  std::string extra_json;
  // The upstream model name for this request (the OpenAI door's `model`); "" = the
  // session's model.name.
  std::string model;
  // false: none of gateway.builtin_tools is offered to the model in this turn (a door
  // request's X-Mneme-Builtin-Tools: off).
  bool builtin_tools = true;
  // > 0: the token count at which this turn's automatic compaction triggers fire,
  // instead of the session's threshold (a Responses request's context_management
  // compact_threshold); 0 = the session's.
  int64_t compact_threshold = 0;
};

// Exactly one of `content` (a user turn) and `tool_results` (a continuation) is set.
struct turn_input {
  std::string content;
  std::vector<tool_result_input> tool_results;
  // `tools` was sent: the session's tools become `tools_json` (a JSON array of OpenAI
  // function tools, verbatim; "[]" clears them) before the model is called.
  bool set_tools = false;
  std::string tools_json;
  // A user turn while tool calls are pending: store a stub result per pending call
  // instead of refusing the turn with errc::tool_results_pending.
  bool abandon_pending = false;
  // A channel message (gw_message_atom: CLI, soak users, channel commands): pending calls
  // are neither refused nor answered in the store; the request sent to the model answers
  // them with a stub (policies/request_pairing.hpp), as before agent turns.
  bool repair_pending = false;
  turn_options options;
  // The request's Idempotency-Key (docs/api.md), stored with the turn's user row; ""
  // = none. Ignored on a continuation (tool_results: a call is answered once anyway),
  // unless idempotency_checked.
  std::string idempotency_key;
  // A door checked the key itself (gw_idem_atom: read under the gateway's in-flight mark,
  // which it holds until its answer): the gateway decides nothing again, the session
  // stores the key with the turn's user row or, on a continuation, its last tool row.
  bool idempotency_checked = false;
  // `"stream": true`: the model's answer is handed to this receiver piece by piece as it
  // arrives (messages/answer_stream.hpp). Local only: not part of the inspected fields.
  answer_stream_ptr stream;

  bool is_continuation() const { return !tool_results.empty(); }

  // A channel message (see repair_pending).
  static turn_input text(std::string content) {
    turn_input in;
    in.content = std::move(content);
    in.repair_pending = true;
    return in;
  }
};

} // namespace mneme
