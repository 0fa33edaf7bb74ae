// What the fake LLM sends for one compaction request (POST /v1/responses/compact,
// compaction_wire.hpp): a pure function of the parsed request, the fault decision
// and the answer settings, like plan_chat_response (chat_responder.hpp), whose
// plan invariants hold here too. Faults apply as to chat: the transport and
// status faults alike; malformed_json, truncated_body and trickle cut the JSON
// body; empty_content and reasoning_only answer a message item without text.
// No I/O, no clock; any thread.
#pragma once

#include "apps/common/fakellm/chat_responder.hpp"
#include "apps/common/fakellm/compaction_wire.hpp"

namespace mneme::fakellm {

// The deterministic compacted text of `call`: fake_summary of its input at the
// target its instructions name ("target about N tokens"), else the settings'
// default summary target.
std::string compaction_text(const compaction_call& call, const answer_settings& settings);

// REQUIRES: decision.answer is set exactly when `rule` points at its rule.
response_plan plan_compaction_response(const compaction_call& call, const chat_facts& facts,
                                       const fault_decision& decision, const fault_rule* rule,
                                       const answer_settings& settings);

} // namespace mneme::fakellm
