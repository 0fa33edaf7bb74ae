// The gateway's appends (gw_append_atom, gw_idem_atom): a client row written into the
// key's session without a model call, and the same with an Idempotency-Key; and turns
// with an Idempotency-Key (gw_turn_atom) (policies/idempotency.hpp; docs/api.md
// "Idempotency-Key").
//
// An idempotent append, in one gateway (the one place of a node that sees every request
// of a key; in node mode only the key's lease holder writes, so a re-send that reached
// another node is forwarded to the same place):
//   1. a request with the same (key, idempotency key) running here: idempotency_in_flight;
//   2. else it is marked running, and the store is asked for the row stored under the
//      key within gateway.idempotency_window_seconds (st_idem_atom, after every append
//      the storage actor already holds);
//   3. nothing: the row is appended as usual with the key stored in it (one INSERT:
//      the key can never be stored without its row, nor the row without its key);
//      the same request: the stored row's id and session, replayed, nothing written;
//      a different one: idempotency_key_reused, nothing written;
//   4. the mark is dropped when the answer (or the error) is delivered.
// A turn goes the same way with its user row (the session stores the key with it,
// session_agent.cpp) and the answer rebuilt from the rows after it
// (policies/idempotency.hpp turn_answer_rows): the last one, an assistant row, gives
// the answer, its tool calls and finish_reason ("tool_calls" or "stop"); the session
// and live counts are the key's now; compactions, built-in calls and prompt_tokens are
// not kept, so a replay carries none. A user row with no answer after it (the process
// stopped between the two, or the model call failed) is idempotency_unanswered: nothing
// is run again for that key, a new key asks again.
// A door request (doors/door_conversation.cpp) decides for itself, with the same marks:
// gw_idem_atom (key, idempotency key, limit) marks it running and reads its rows; the
// door keeps the mark while it matches, writes and answers, and releases it with
// gw_idem_atom (key, idempotency key). Its turn then carries idempotency_checked, so
// the mark it holds is not taken for another request's.
#include <algorithm>

#include "actors/gateway/gateway_state.hpp"
#include "policies/idempotency.hpp"
#include "policies/tool_call_rules.hpp"

namespace mneme::gateway_detail {

namespace {

std::string running_mark(const std::string& key, const std::string& idem) {
  return key + '\0' + idem;
}

} // namespace

void append_for(gateway_ptr self, const std::string& key, const std::string& user, message row,
                std::function<void(int64_t)> ok, on_error fail) {
  if (key.empty())
    return fail(caf::make_error(errc::bad_request, "append: the session key is empty"));
  // Before a session is opened for the key: a refused row leaves nothing behind.
  if (auto c = check_tool_call_structure(
        row, std::max<int64_t>(1, self->state.cfg.gateway.max_tool_calls_per_message));
      !c.ok())
    return fail(caf::make_error(errc::bad_request, "append: " + describe_tool_call_refusal(c)));
  with_session(
    self, key, user,
    [self, key, row, ok, fail]() mutable {
      auto& st = self->state;
      auto& e = st.keys[key];
      row.session_id = e.session_id;
      e.last_activity_ms = st.cfg.clock();
      request_session<int64_t>(
        self, key, st.cfg.storage_timeout,
        [self, key, ok](int64_t id) mutable {
          ++self->state.keys[key].live_messages; // the hygiene check sees appends too
          ok(id);
        },
        [fail](caf::error& err) mutable { fail(std::move(err)); }, ss_append_atom_v,
        std::move(row));
    },
    fail);
}

void idempotent_rows_for(gateway_ptr self, const std::string& key, const std::string& idem,
                         int64_t limit, std::function<void(std::vector<message>&)> ok,
                         on_error fail) {
  auto& st = self->state;
  auto window_ms = st.cfg.gateway.idempotency_window_seconds * 1000;
  then_forgetting(self,
                  self->request(st.storage, st.cfg.storage_timeout, st_idem_atom_v, key, idem,
                                st.cfg.clock() - window_ms, limit),
                  [ok](std::vector<message>& rows) mutable { ok(rows); },
                  [fail](caf::error& err) mutable { fail(std::move(err)); });
}

bool mark_idempotent_running(gateway_ptr self, const std::string& key, const std::string& idem) {
  return self->state.idempotent_running.insert(running_mark(key, idem)).second;
}

void unmark_idempotent_running(gateway_ptr self, const std::string& key,
                               const std::string& idem) {
  self->state.idempotent_running.erase(running_mark(key, idem));
}

caf::error idempotent_refusal(idempotency_verdict v, const std::string& key,
                              const std::string& idem) {
  auto text = idempotency_refusal_text(v, key, idem);
  switch (v) {
    case idempotency_verdict::in_flight:
      return caf::make_error(errc::idempotency_in_flight, std::move(text));
    case idempotency_verdict::mismatch:
      return caf::make_error(errc::idempotency_key_reused, std::move(text));
    case idempotency_verdict::unanswered:
      return caf::make_error(errc::idempotency_unanswered, std::move(text));
    default: return {};
  }
}

caf::result<idempotent_append> idempotent_append_for(gateway_ptr self, const std::string& key,
                                                     const std::string& user, message row,
                                                     const std::string& idem) {
  if (idem.empty())
    return caf::make_error(errc::bad_request, "append: the idempotency key is empty");
  if (!mark_idempotent_running(self, key, idem))
    return idempotent_refusal(idempotency_verdict::in_flight, key, idem);
  auto rp = self->make_response_promise<idempotent_append>();
  auto done = [self, key, idem, rp](caf::expected<idempotent_append> x) mutable {
    unmark_idempotent_running(self, key, idem);
    if (x)
      rp.deliver(std::move(*x));
    else
      rp.deliver(std::move(x.error()));
  };
  idempotent_rows_for(
    self, key, idem, 1,
    [self, key, user, row, idem, done](std::vector<message>& stored) mutable {
      auto v = decide_idempotent(false, stored, row);
      if (v == idempotency_verdict::replay)
        return done(idempotent_append{stored.front().id, stored.front().session_id, true});
      if (v != idempotency_verdict::fresh)
        return done(idempotent_refusal(v, key, idem));
      row.idempotency_key = idem;
      append_for(
        self, key, user, std::move(row),
        [self, key, done](int64_t id) mutable {
          done(idempotent_append{id, self->state.keys[key].session_id, false});
        },
        [done](caf::error err) mutable { done(std::move(err)); });
    },
    [done](caf::error err) mutable { done(std::move(err)); });
  return rp;
}

namespace {

turn_reply replayed_turn(gateway_ptr self, const std::string& key, const message& user_row,
                         const std::vector<message>& answer_rows) {
  const auto& last = *turn_answer(answer_rows); // REQUIRES: turn_answered
  turn_reply r;
  r.session_id = user_row.session_id;
  r.answer = last.content;
  r.tool_calls = last.tool_calls;
  r.finish_reason = last.tool_calls.empty() ? "stop" : "tool_calls";
  auto e = self->state.keys.find(key);
  if (e != self->state.keys.end()) {
    r.live_messages = e->second.live_messages;
    r.live_tokens = e->second.live_tokens;
  }
  r.replayed = true;
  return r;
}

// Bounds the rows read for a turn's replay: the user row and what answered it (an agent
// loop of gateway.max_tool_rounds rounds, two rows or more each, is cut here and then
// counts as unanswered).
constexpr int64_t idempotent_turn_rows = 512;

} // namespace

caf::result<std::vector<message>> idempotent_claim_for(gateway_ptr self, const std::string& key,
                                                       const std::string& idem, int64_t limit) {
  if (key.empty() || idem.empty() || limit < 1)
    return caf::make_error(errc::bad_request,
                           "idempotent rows: need a session key, an idempotency key and a limit");
  if (!mark_idempotent_running(self, key, idem))
    return idempotent_refusal(idempotency_verdict::in_flight, key, idem);
  auto rp = self->make_response_promise<std::vector<message>>();
  idempotent_rows_for(
    self, key, idem, limit,
    [rp](std::vector<message>& rows) mutable { rp.deliver(std::move(rows)); }, // still marked
    [self, key, idem, rp](caf::error err) mutable {
      unmark_idempotent_running(self, key, idem);
      rp.deliver(std::move(err));
    });
  return rp;
}

caf::result<turn_reply> idempotent_turn_for(gateway_ptr self, const std::string& key,
                                            const std::string& user, turn_input in) {
  auto promise = self->make_response_promise<turn_reply>();
  reply_promise rp{promise, self->state.cfg.metrics};
  auto idem = in.idempotency_key;
  if (key.empty()) {
    rp.deliver(caf::make_error(errc::bad_request, "message: the session key is empty"));
    return promise;
  }
  if (!mark_idempotent_running(self, key, idem)) {
    rp.deliver(idempotent_refusal(idempotency_verdict::in_flight, key, idem));
    return promise;
  }
  rp.on_delivered([self, key, idem] { unmark_idempotent_running(self, key, idem); });
  idempotent_rows_for(
    self, key, idem, idempotent_turn_rows,
    [self, key, user, in = std::move(in), idem, rp](std::vector<message>& stored) mutable {
      message incoming;
      incoming.role = msg_role::user;
      incoming.content = in.content;
      auto v = decide_idempotent(false, stored, incoming);
      if (v == idempotency_verdict::fresh)
        return start_turn(self, key, user, std::move(in), rp);
      if (v != idempotency_verdict::replay)
        return rp.deliver(idempotent_refusal(v, key, idem));
      auto answer = turn_answer_rows(stored);
      if (!turn_answered(answer))
        return rp.deliver(idempotent_refusal(idempotency_verdict::unanswered, key, idem));
      rp.deliver(replayed_turn(self, key, stored.front(), answer));
    },
    [rp](caf::error err) mutable { rp.deliver(std::move(err)); });
  return promise;
}

} // namespace mneme::gateway_detail
