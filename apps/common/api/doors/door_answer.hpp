// What every door's answer shares, whatever its wire (doors/openai_chat/,
// doors/openai_responses/, doors/anthropic_messages/): the X-Mneme-* headers saying
// what mneme did, and the door's counters in GET /metrics. The stateless pass-through's
// upstream request is door_passthrough.hpp's.
// Pure functions of their arguments; safe from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "apps/common/api/doors/door_conversation.hpp"
#include "apps/common/api/front/http_exchange.hpp"
#include "messages/agent_turn.hpp"
#include "messages/chat_request.hpp"
#include "messages/session_messages.hpp"
#include "policies/idempotency.hpp"

namespace mneme::api {

// The compactions a turn committed (X-Mneme-Compactions).
int64_t committed_compactions(const turn_reply& r);

// X-Mneme-Session-Id (when `session_id` is set), X-Mneme-Compactions (when `with_count`),
// X-Mneme-Rebased (when `rebased` > 0).
header_list mneme_answer_headers(const std::string& session_id, int64_t compactions,
                                 bool with_count, int64_t rebased);

// What an answer says of the request's Idempotency-Key (docs/api.md "Idempotency-Key"):
// Idempotent-Replayed: true on the first answer sent again (`replayed`), Retry-After: 1
// on the refusal of error code idempotency_in_flight (the first request answers soon).
void add_idempotency_headers(header_list& h, bool replayed, std::string_view error_code);

// The head of a door's replay_by_key (doors/door_conversation.hpp): the answer row's
// session when the request opened none (`session_id` "" ), and Idempotent-Replayed on
// the head of the stream (`relay`, when streamed) before its first event.
template <class Relay>
void head_replay_by_key(const std::shared_ptr<Relay>& relay, std::string& session_id,
                        const message& answer) {
  if (session_id.empty())
    session_id = answer.session_id;
  if (relay)
    relay->add_header(idempotent_replayed_header, "true");
}

// The door's counters in the exposition format: mneme_DOOR_requests_total{style} (the
// `stateless` count and the conversations' styles), mneme_DOOR_rebased_total,
// _replayed_total, _history_reads_total and _errors_total. `route` names the requests
// counted ("POST /v1/chat/completions").
std::string door_metrics_text(std::string_view door, std::string_view route, int64_t stateless,
                              int64_t errors, const door_conversations::counters& h);

// The same counters under one name for every door, labelled door="LABEL" (chat,
// responses, anthropic): mneme_door_requests_total{door,style},
// mneme_door_rebased_total{door}, _replayed_total, _history_reads_total and
// _errors_total. Each door renders its own samples; the route registry's /metrics text
// merges them into one family each (policies/metric_families.hpp).
std::string door_label_metrics_text(std::string_view label, int64_t stateless, int64_t errors,
                                    const door_conversations::counters& h);

} // namespace mneme::api
