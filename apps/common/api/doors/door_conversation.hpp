// The wire-neutral half of every door (docs/api.md "OpenAI door"): a client's messages
// for a session key — translated by the door from its wire format into session messages
// — carried to the session, so that only what is new is stored and the client's branch
// is rolled back. The door keeps only its wire: decoding, answers, stream events, errors.
//
//   open ───► gw_state: the session under the key (none yet for a new key); a request
//             whose user is not the session's owner is refused (a user token: the 404
//             of an unknown key; an admin: 400). Every gateway call of the conversation
//             carries the token's reachable owner (policies/access_scope.hpp), so the
//             gateway decides again on the session it works on: a session its owner
//             opened after this step, or a key that is another user's session id, is
//             refused the same way, never served to the other user
//   key ────► with an Idempotency-Key (docs/api.md "Idempotency-Key"), after the open
//             and before anything is matched or written: the key's in-flight mark taken
//             in the gateway and the rows stored under it read (gw_idem_atom); the first
//             answer again (replay_by_key), a refusal (failed), or on: the mark held to
//             the end event, the key stored with the row of the request's own last
//             message (policies/idempotency.hpp door_keyed_row) by its turn
//   match ──► the key's history_print (policies/history_match.hpp) brought up to date
//             with the rows stored since (st_range), and the plan from it; when the
//             print cannot decide, every row of the conversation is read — the session
//             and, across continuations under the key, its parents (st_range,
//             st_session) — and the plan made from the rows
//   rebase ─► the plan's rollback: every row after its last kept row (gw_rollback,
//             labelled with the door's branch_label)
//   then ───► replay: the sent transcript is stored and answered: the stored answer
//             turn:   the new messages appended in order (gw_append), then the turn
//                     (gw_turn) with the last user message or the trailing tool results
//
// The door hears every step through its conversation_events, in the request's actor;
// exactly one of replay(), replay_by_key(), answered(), stored() (store_only) and
// failed() ends a conversation.
//
// Prints: one per session key, shared by the door's requests (bounded: the map is
// dropped past max_prints entries and rebuilt from the store on demand). A request reads
// only the rows stored since its print's last row, so matching costs the new rows; a
// session the door never saw, or one whose id changed (reset, child), is folded from all
// its rows once.
//
// One conversation per key at a time: a request on a key whose conversation is on its
// way (open to its last event, its turn's stream included) is refused at once with
// errc::session_busy (the doors answer 429 with Retry-After, which the SDKs retry), and
// stores nothing. Two transcripts matched against the same print would both be stored,
// the later one after the earlier's rollback: the live context would hold two answers in
// a row. The key is held until the conversation's end event (replay, answered, failed)
// or, when none comes, until its last continuation is gone.
//
// Threads: run() in the request's actor; counts() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caf/all.hpp"

#include "actors/gateway/gateway_actor.hpp"
#include "actors/storage/storage_actor.hpp"
#include "apps/common/api/doors/door_request.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "messages/agent_turn.hpp"
#include "messages/errc.hpp"
#include "policies/history_match.hpp"

namespace mneme::api {

struct conversation_config {
  gateway_actor gateway;
  storage_actor storage;
  std::chrono::milliseconds turn_timeout{330000}; // appends, rollbacks, the turn
  std::chrono::milliseconds read_timeout{30000};  // gw_state and the store's reads
  visibility_rules visibility;
  size_t max_prints = 100000;
  std::string default_user = "default"; // gateway.default_user: an admin's key namespace
};

// On any door request: "1" or "true" answers the session's pending tool calls with a
// stub result (turn_input::abandon_pending) and lets the sent transcript leave calls
// without their results, instead of refusing the request.
inline constexpr std::string_view abandon_pending_header = "X-Mneme-Abandon-Pending";
// On any door request: "off" (or "0", "false") offers the model none of mneme's
// built-in tools (gateway.builtin_tools) in this request's turn; "on" (the default)
// offers them.
inline constexpr std::string_view builtin_tools_header = "X-Mneme-Builtin-Tools";
// "1" and "true" (any case).
bool is_true_flag(std::string_view v);
// "0", "false" and "off" (any case).
bool is_off_flag(std::string_view v);

// Beyond this many continuations back, older sessions are left out of a conversation
// (their rows then match as a branch would, and are not listed).
inline constexpr int conversation_max_ancestors = 1000;

// The conversation rows of session `sid` under the stored key `key`: its rows after the
// conversation of the parent it continues (policies/history_match.hpp "Continuations";
// a parent of another key, ended otherwise, unreadable, or past
// conversation_max_ancestors is left out), read from `storage` in c's actor
// (plumbing/ask.hpp); then `then(conv)`, or `failed(err)` when a read of `sid` fails.
template <class C>
void read_key_conversation(const std::shared_ptr<C>& c, const storage_actor& storage,
                           std::chrono::milliseconds timeout, const std::string& key,
                           const std::string& sid, const std::string& parent_id,
                           std::function<void(conversation_rows&)> then,
                           std::function<void(const caf::error&)> failed, int depth = 0) {
  ask<std::vector<message>>(c, storage, timeout, st_range_atom_v, sid, int64_t{1},
                            std::numeric_limits<int64_t>::max())
    .then([=](caf::expected<std::vector<message>> rows) {
      if (!rows)
        return failed(rows.error());
      auto own = std::make_shared<std::vector<message>>(std::move(*rows));
      auto alone = [own, then] {
        auto conv = conversation_of(std::move(*own));
        then(conv);
      };
      if (parent_id.empty() || depth >= conversation_max_ancestors)
        return alone();
      ask<session_record>(c, storage, timeout, st_session_atom_v, parent_id)
        .then([=](caf::expected<session_record> parent) {
          if (!parent || parent->session_key != key || !is_continuation_end(parent->end_reason))
            return alone();
          read_key_conversation(c, storage, timeout, key, parent->id, parent->parent_id,
                                [own, then](conversation_rows& up) {
                                  auto conv = continued_conversation(std::move(up),
                                                                     std::move(*own));
                                  then(conv);
                                },
                                failed, depth + 1);
        });
    });
}

struct api_state; // plumbing/api_state.hpp
// The runtime's side of every door's conversations: its gateway and store, the API's
// timeouts, and what a client never sent (the daemon's system prompt when one is
// configured, mneme's built-in tool rounds).
conversation_config conversation_config_of(const api_state& s);

// An Idempotency-Key's in-flight mark in the gateway (gw_idem_atom), held by one door
// request from its check to its end event; released when the last copy goes.
class idempotency_hold {
 public:
  idempotency_hold(gateway_actor gw, std::string key, std::string idem)
    : gw_(std::move(gw)), key_(std::move(key)), idem_(std::move(idem)) {}
  idempotency_hold(const idempotency_hold&) = delete;
  idempotency_hold& operator=(const idempotency_hold&) = delete;
  ~idempotency_hold() {
    if (gw_)
      caf::anon_send(gw_, gw_idem_atom_v, key_, idem_);
  }

 private:
  gateway_actor gw_;
  std::string key_;
  std::string idem_;
};
using idempotency_hold_ptr = std::shared_ptr<idempotency_hold>;

struct conversation_request {
  std::string key;              // REQUIRES: not empty (a door without one is stateless);
                                // stored form (doors/door_request.hpp door_stored_key)
  std::string user;             // "" = the key's owner (gateway.default_user for a new key)
  std::vector<message> sent;    // the client's messages, in order
  turn_input turn;              // options, tools, stream; content or tool results come
                                // from `sent`
  std::string messages_field = "messages"; // the wire's name of `sent`, for its 400s
  // How the wire answers tool calls, for the refusal of a turn while calls are pending.
  std::string results_hint = "tool messages";
  std::string branch_label;     // the rollback's label: whose branch it was
  // The style when the wire states it (a Responses request continuing a response is
  // stateful, one without is the whole transcript); nullopt: style_of(sent).
  std::optional<history_style> style;
  // Store the new messages without a turn (the Responses door's compact endpoint): they
  // are appended as sent (a summary item among them is refused), and the conversation
  // ends with stored() instead of a turn or a replay.
  bool store_only = false;
  // The request's Idempotency-Key (plumbing/idempotency_header.hpp; "" = none).
  std::string idempotency_key;
  // The mark when the door checked the key before run() (door_conversations::check_key):
  // run() does not check it again.
  idempotency_hold_ptr idempotency_held;
};

// What a door hears of one conversation; every call in the request's actor.
class conversation_events {
 public:
  virtual ~conversation_events() = default;
  virtual caf::event_based_actor* actor() const = 0; // the request's actor
  // A continuation threw: answer 500 in the door's shape (plumbing/ask.hpp).
  virtual void on_exception(const std::exception& e) = 0;
  // The session under the key, before matching (not called for a new key).
  virtual void opened(const session_record&) {}
  // The client's branch is about to be rolled back (plan.rebased_rows visible rows).
  virtual void rebasing(const history_plan&) {}
  // Ends: the sent transcript is stored and answered; `stored` is that answer's row.
  virtual void replay(const message& stored) = 0;
  // Ends: the first answer of a request sent again under its Idempotency-Key; `answer`
  // is the stored row that answered it (in session answer.session_id). Nothing was
  // written. The door answers as replay() does, with Idempotent-Replayed: true.
  virtual void replay_by_key(const message& answer) { replay(answer); }
  // Ends: the turn's reply.
  virtual void answered(turn_reply& reply) = 0;
  // Ends: an error of mneme's (errc; a lease_elsewhere is the door's to forward).
  virtual void failed(const caf::error& err) = 0;
  // Ends a store_only conversation: the new messages are stored.
  virtual void stored() { failed(caf::make_error(errc::internal, "store_only unhandled")); }
};

class door_conversations {
 public:
  explicit door_conversations(conversation_config cfg);

  void run(const door_request_ptr& r, std::shared_ptr<conversation_events> events,
           conversation_request rq);

  // The Idempotency-Key check alone, for a door that writes before run() (the Responses
  // door rolls back the rows after an older previous_response_id): `fresh` gets the mark
  // to pass as rq.idempotency_held (nullptr when the request writes no row of its own);
  // otherwise the request ended through `events` (replay_by_key or failed).
  // REQUIRES: rq.key and rq.idempotency_key not empty; rq.sent as run() will get it.
  void check_key(const door_request_ptr& r, std::shared_ptr<conversation_events> events,
                 conversation_request rq, std::function<void(idempotency_hold_ptr)> fresh);

  struct counters {
    std::atomic<int64_t> stateful{0}, full_history{0}; // by history_style
    std::atomic<int64_t> rebased{0}, replayed{0};      // plans carried out
    std::atomic<int64_t> history_reads{0};             // conversations read row by row
  };
  const counters& counts() const;

  // The key held as a conversation holds it (see "One conversation per key" above), by
  // another request that changes the key's rows outside a conversation (the
  // Conversations API's item delete and add): false, and nothing held, while a
  // conversation or another hold has it. REQUIRES: release_key(key) once after a true;
  // it drops the key's print (rebuilt from the store by the next request). Copies of
  // this object share the holds and prints.
  bool hold_key(const std::string& key);
  void release_key(const std::string& key);

  // The prints and counters shared with the conversations' continuations.
  struct shared;

 private:
  std::shared_ptr<shared> s_;
};

} // namespace mneme::api
