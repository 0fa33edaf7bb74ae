// The context service (issue 27 item 2, SPEC §8.1): for agents that call their model
// themselves, mneme owns the context. One request type for the three operations, carried
// unchanged from the HTTP front (apps/common/api/routes/context_service.hpp) through the
// gateway (gw_context_atom) to the session actor (ss_context_atom,
// actors/session/session_context.cpp), and one reply type:
//   context      append the new rows, run the pre-call checks (T1, T10, pruning, the
//                window guard) -> the messages to send the model now;
//   usage        store the model's answer (if any) with its usage -> T2;
//   model_error  the model refused the request: classified like the session's own
//                calls (T6-T9), compacted when the error calls for it -> whether to
//                retry, and with which messages.
// Plain values plus their CAF inspect(); included by messages/mneme_types.hpp inside the
// type-ID block (it uses no __COUNTER__). Safe from any thread; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "caf/meta/type_name.hpp"

#include "messages/llm_error_kind.hpp"
#include "messages/session_messages.hpp"
#include "messages/transcript.hpp"

namespace mneme {

enum class context_op : uint8_t {
  context,
  usage,
  model_error,
  count_ // not an operation: how many there are (new ones go above)
};

inline std::string_view to_string(context_op op) {
  return op == context_op::usage         ? "usage"
         : op == context_op::model_error ? "model_error"
                                         : "context";
}

struct context_request {
  context_op op = context_op::context;
  // context: the rows new since the last call, in order (user, system, tool results,
  // assistant rows the agent kept itself); may be empty.
  std::vector<message> rows;
  // context: the tools the agent sends with its request (a JSON array, verbatim); they
  // count in the window guard's estimate. Not stored.
  std::string tools_json;
  // context: the model the agent calls; its name picks the threshold rules (SPEC §2,
  // reasoning models, compression.model_thresholds). "" = the session's model.
  std::string model;
  // context: the request's max_tokens, kept free as the output reserve (0 = the
  // model block's max_tokens).
  int64_t max_tokens = 0;
  // usage: the API's figures, and the answer to store (an assistant row).
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  bool has_answer = false;
  message answer;
  // model_error: the HTTP status and body the model answered.
  int64_t status = 0;
  std::string body;
};

struct context_reply {
  std::string session_id;
  // The messages to send the model now (tool pairing repaired as the session's own
  // requests are): context, and model_error when retry is true.
  std::vector<message> messages;
  bool has_messages = false;
  int64_t estimated_tokens = 0;  // the request's local estimate: messages + tools
  int64_t threshold_tokens = 0;  // what T1/T2 compare against
  int64_t context_window = 0;    // the declared window (T7 may have lowered it)
  int64_t live_messages = 0;
  int64_t live_tokens = 0;
  std::vector<compaction_report> compactions; // run by this request, in order
  std::vector<int64_t> appended_ids;          // context: the stored ids of the new rows
  int64_t answer_id = 0;                      // usage: the stored answer, 0 = none
  // model_error: the classification, the error trigger it fired (trigger::none when
  // it calls for no compaction), and the advice (policies/context_retry.hpp).
  llm_error_kind error_kind = llm_error_kind::none;
  trigger fired = trigger::none;
  bool retry = false;
  bool retry_after_backoff = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, context_request& x) {
  return f(caf::meta::type_name("mneme::context_request"), x.op, x.rows, x.tools_json, x.model,
           x.max_tokens, x.prompt_tokens, x.completion_tokens, x.has_answer, x.answer, x.status,
           x.body);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, context_reply& x) {
  return f(caf::meta::type_name("mneme::context_reply"), x.session_id, x.messages,
           x.has_messages, x.estimated_tokens, x.threshold_tokens, x.context_window,
           x.live_messages, x.live_tokens, x.compactions, x.appended_ids, x.answer_id,
           x.error_kind, x.fired, x.retry, x.retry_after_backoff);
}

} // namespace mneme
