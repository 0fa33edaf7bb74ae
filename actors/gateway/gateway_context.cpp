// The gateway's part of the context service (issue 27 item 2; gateway_state.hpp): find or
// open the key's session and hand the request over; the session does the work
// (actors/session/session_context.cpp).
//
// Decisions where the issue is silent:
//   - the rows' tool_calls structure is checked before a session is opened for a new
//     key, as for an append (a refused row leaves nothing behind);
//   - the gateway's hygiene check (T3/T4) does not run before a context request: the
//     issue asks for the pre-call checks (T1, T10, the window guard), and the window
//     guard bounds the context whatever the counts say;
//   - an exhausted session is reset here before the error is answered (as a turn's is,
//     gateway_turns.cpp), so the agent's next request reaches the new session; the
//     request is not re-run (the agent sends its message again). The error carries the
//     turn reply (the compactions tried) naming the new session and the notice.
#include "actors/gateway/gateway_state.hpp"

#include <algorithm>
#include <type_traits>

#include "policies/exhaustion_notice.hpp"
#include "policies/tool_call_rules.hpp"

namespace mneme::gateway_detail {

namespace {

// The exhaustion error answered after the reset: its text and code, the turn reply it
// carries (the compactions tried) naming the new session, with the notice.
caf::error after_exhaustion(const std::string& new_id, const caf::error& err) {
  auto tried = turn_reply_of(err).value_or(turn_reply{});
  tried.session_id = new_id;
  tried.notice = exhaustion_notice(tried.compactions.size(), false, "");
  const auto& ctx = err.context();
  auto what = !ctx.empty() && ctx.match_element<std::string>(0) ? ctx.get_as<std::string>(0)
                                                                : render_error(err);
  return caf::make_error(errc::compaction_exhausted, what, std::move(tried));
}

} // namespace

caf::result<context_reply> context_request_for(gateway_ptr self, const std::string& key,
                                               const std::string& user, context_request rq) {
  auto& st = self->state;
  // Every answer goes through `answer`, which counts it (gateway_config::metrics).
  auto promise = self->make_response_promise<context_reply>();
  auto answer = [promise, metrics = st.cfg.metrics, op = rq.op](auto x) mutable {
    if (metrics)
      metrics->record_context(op, std::is_same_v<decltype(x), caf::error>);
    promise.deliver(std::move(x));
  };
  auto fail = [answer](caf::error err) mutable { answer(std::move(err)); };
  if (key.empty()) {
    fail(caf::make_error(errc::bad_request, "context: the session key is empty"));
    return promise;
  }
  auto max_calls = std::max<int64_t>(1, st.cfg.gateway.max_tool_calls_per_message);
  for (size_t i = 0; i < rq.rows.size(); ++i)
    if (auto c = check_tool_call_structure(rq.rows[i], max_calls); !c.ok()) {
      fail(caf::make_error(errc::bad_request, "field 'messages[" + std::to_string(i)
                                                + "]': " + describe_tool_call_refusal(c)));
      return promise;
    }
  bool opens = rq.op == context_op::context;
  auto run = [self, key, rq = std::move(rq), answer]() mutable {
    auto& st = self->state;
    auto& e = st.keys[key];
    e.last_activity_ms = st.cfg.clock();
    auto old_id = e.session_id;
    auto handle = e.handle;
    request_session<context_reply>(
      self, key, st.cfg.turn_timeout,
      [self, key, old_id, answer](context_reply& r) mutable {
        follow_child(self, key, old_id, r.session_id);
        auto& e = self->state.keys[key];
        e.live_messages = r.live_messages;
        e.live_tokens = r.live_tokens;
        answer(std::move(r));
      },
      [self, key, old_id, handle, answer](caf::error& err) mutable {
        if (err != errc::compaction_exhausted) {
          answer(std::move(err));
          return;
        }
        with_current_id(self, key, handle, old_id, [self, key, err, answer](std::string spent) {
          reset(self, key, spent, [self, key, err, answer]() mutable {
            answer(after_exhaustion(self->state.keys[key].session_id, err));
          });
        });
      },
      ss_context_atom_v, std::move(rq));
  };
  if (opens)
    with_session(self, key, user, std::move(run), fail);
  else
    with_existing(self, key, user, std::move(run), fail); // `user` "" = any owner
  return promise;
}

} // namespace mneme::gateway_detail
