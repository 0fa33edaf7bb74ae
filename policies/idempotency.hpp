// Idempotent writes (issue 47 item 8; docs/api.md "Idempotency-Key"): what a request
// carrying an Idempotency-Key may do, decided from what the store holds under that key.
// Pure functions over a header value and rows; standard library only (and the std-only
// vocabulary in messages/); no clock, no I/O; safe from any thread.
//
// Who calls what:
//   - the HTTP routes (appends, turns, the doors): check_idempotency_key on the header
//     before anything else of the request is looked at;
//   - the gateway (actors/gateway/gateway_appends.cpp), the one place per node that
//     sees every request of a key: decide_idempotent after it read the rows the store
//     keeps under (session key, idempotency key) within the window;
//   - the doors (apps/common/api/doors/door_conversation.cpp): decide_door_idempotent on
//     the same rows, read under the gateway's in-flight mark before the sent messages
//     are matched or anything is written.
//
// The verdicts, in the order decide_idempotent checks them:
//   1. in_flight   a request with the same key is still running on this node: 409 with
//                  Retry-After, nothing written (the first one answers its own client);
//   2. fresh       nothing stored under the key within the window: write as usual, the
//                  key stored with the row;
//   3. mismatch    a row is stored under the key but the request differs from it (role,
//                  content, tool fields): 422 idempotency_key_reused, nothing written;
//   4. replay      the same request was stored: answer the first answer, write nothing;
//   5. unanswered  (doors) the same request was stored but no answer followed its row:
//                  409 idempotency_unanswered, nothing written, the model not called.
// Invariants: 1. a verdict other than fresh never leads to a write.
//             2. replay only when same_request(stored first row, request row).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

// The header's name, as documented.
inline constexpr const char* idempotency_header = "Idempotency-Key";
// The answer header a replay carries: "Idempotent-Replayed: true".
inline constexpr const char* idempotent_replayed_header = "Idempotent-Replayed";
inline constexpr std::size_t max_idempotency_key_bytes = 255;

// "" when `value` is a usable key: 1..255 bytes, each printable ASCII (0x20..0x7E),
// not starting or ending with a space. Otherwise the reason, for a 400 naming the header.
std::string check_idempotency_key(std::string_view value);

// Whether `stored` (the row the first request wrote) is what `incoming` would write:
// role, content, tool_call_id, tool_name and tool_calls equal.
bool same_request(const message& stored, const message& incoming);

enum class idempotency_verdict { fresh, in_flight, mismatch, replay, unanswered };
const char* to_string(idempotency_verdict v);
std::ostream& operator<<(std::ostream& os, idempotency_verdict v);

// The text of a refusal (in_flight, mismatch, unanswered) naming the header's value and
// the session key; "" for fresh and replay.
std::string idempotency_refusal_text(idempotency_verdict v, const std::string& key,
                                     const std::string& idem);

// `stored`: the row stored under the key within the window first, then the rows of its
// session after it (store: message_store::idempotent_rows); empty when none.
// `running`: a request with this key is in flight on this node.
idempotency_verdict decide_idempotent(bool running, const std::vector<message>& stored,
                                      const message& incoming);

// The rows that answered a turn whose user row is stored[0]: the rows after it up to,
// not including, the next real user row (messages/transcript.hpp is_real_user_message).
// The answer is complete when the last of them is an assistant row without tool calls
// (the model's final answer) or with tool calls (an agent turn's pending calls).
// Summary rows among them (a compaction stored between this turn and the next) are
// neither the answer nor a sign that it is missing.
std::vector<message> turn_answer_rows(const std::vector<message>& stored);
// The answer among `answer_rows`: the last row that is not a summary, when it is an
// assistant row; nullptr otherwise (not answered).
const message* turn_answer(const std::vector<message>& answer_rows);
bool turn_answered(const std::vector<message>& answer_rows);

// --- door requests (chat completions, Responses, Anthropic Messages)
// A door request is a transcript (all of it, or what is new); the row it writes for
// itself is the one its turn stores: its last message when that is a user message
// (the user row) or a tool result (the last tool row). nullopt when the last message is
// neither (e.g. an assistant message: the request writes no row of its own, its key is
// neither checked nor stored).
std::optional<message> door_keyed_row(const std::vector<message>& sent);
// Whether `stored` (the row stored under the key) is what `incoming` (door_keyed_row)
// would write: role and content equal and, for a tool result, its call id (the session
// adds the tool's name, a door request does not send it).
bool same_door_request(const message& stored, const message& incoming);
// The verdict of a door request that is not in flight: fresh (nothing stored), mismatch
// (!same_door_request with stored[0]), unanswered (the same, no turn_answer after it),
// replay (the same, answered: the first answer is turn_answer(turn_answer_rows(stored))).
idempotency_verdict decide_door_idempotent(const std::vector<message>& stored,
                                           const message& incoming);

} // namespace mneme
