// The start of an agent turn (SPEC §8.1, issue 29; session_state.hpp): the decisions of
// policies/tool_loop.hpp turned into storage writes, in this order, nothing stored
// before every check passed:
//   1. check: tool_results against the pending calls (400 naming the id), a user
//      message against pending calls (409 tool_results_pending unless abandon_pending);
//   2. the key's tools when the request sent `tools` (st_tools_put, durable before the
//      model sees them);
//   3. the rows, one after the other: stub results of abandoned calls then the user
//      row, or the tool rows in the order of the results;
//   4. rows over compression.max_row_share of the window replaced by their markers
//      (evict_oversized_rows), then the model call through pre_call_check (T1, the
//      window guard), unless the loop reached gateway.max_tool_rounds: then the turn
//      ends with errc::tool_round_cap (the results stay stored, nothing is left pending).
//
// Decisions where the SPEC is silent:
//   - a channel message (gw_message_atom: the CLI, the soak, channel commands) keeps the
//     behaviour from before agent turns: calls left pending (a client that crashed
//     mid-tool) are answered by a stub in the request only, nothing is refused; the
//     409 tool_results_pending is for the turns route;
//   - the sampling fields and tool_choice apply to the request that carries them only;
//     a continuation sends its own (like a stateless chat-completions client); only
//     the tools are kept, per session key;
//   - a result sent with is_error: true is stored as a tool row whose content starts
//     with "[tool error] " (the chat-completions wire has no error flag for tool rows);
//   - a failed write in step 2 or 3 ends the turn with the storage error; rows already
//     written stay (each is durable on its own) and the pending state is read from the
//     live rows again by the next request.
#include "actors/session/session_state.hpp"

#include <algorithm>
#include <memory>

#include "policies/tool_loop.hpp"

namespace mneme::session_detail {

namespace {

// Appends rows[i..] in order, then `done`; the first failure ends the turn.
void append_rows(session_ptr self, std::shared_ptr<std::vector<message>> rows, size_t i,
                 std::function<void()> done) {
  if (i >= rows->size()) {
    done();
    return;
  }
  append_row(self, (*rows)[i],
             [self, rows, i, done](int64_t) { append_rows(self, rows, i + 1, done); },
             [self](caf::error err) { end_turn(self, std::move(err)); });
}

std::string pending_ids(const pending_tool_calls& pending) {
  std::string out;
  for (const auto& c : pending.calls)
    out += (out.empty() ? "'" : ", '") + c.id + "'";
  return out;
}

// Step 2 when the request set tools, then `next`.
void store_tools_then(session_ptr self, const turn_input& in, std::function<void()> next) {
  auto& st = self->state;
  if (!in.set_tools) {
    next();
    return;
  }
  then_forgetting(
    self,
    self->request(st.deps.storage, st.params.storage_timeout, st_tools_put_atom_v,
                  st.record.session_key, st.record.id, in.tools_json, st.now()),
    [self, tools = in.tools_json, next](caf::ok_atom) {
      auto& st = self->state;
      st.tools_json = tools;
      st.log().info("session={} event=tools_set bytes={}", st.record.id, tools.size());
      next();
    },
    [self](caf::error& err) { end_turn(self, std::move(err)); });
}

} // namespace

void end_at_round_cap(session_ptr self) {
  auto& st = self->state;
  st.log().warn("session={} event=tool_round_cap rounds={}", st.record.id,
                st.params.max_tool_rounds);
  end_turn(self, caf::make_error(errc::tool_round_cap,
                                 "session " + st.record.id + ": the tool loop reached "
                                   + std::to_string(st.params.max_tool_rounds)
                                   + " rounds (gateway.max_tool_rounds); the results are "
                                     "stored and the model was not called again"));
}

void begin_turn(session_ptr self, turn_input in) {
  auto& st = self->state;
  auto pending = find_pending_calls(st.live);
  auto rows = std::make_shared<std::vector<message>>();
  bool capped = false;
  if (in.is_continuation()) {
    auto check = check_tool_results(pending, in.tool_results);
    if (check.verdict != tool_results_verdict::ok) {
      end_turn(self, caf::make_error(errc::bad_request, describe_tool_results_refusal(check)));
      return;
    }
    *rows = tool_result_rows(pending, in.tool_results);
    if (!rows->empty()) // "" unless a door checked its key (turn_input::idempotency_checked)
      rows->back().idempotency_key = in.idempotency_key;
    auto rounds = tool_rounds_in_loop(st.live);
    capped = decide_next_round(rounds, std::max<int64_t>(1, st.params.max_tool_rounds))
             == round_verdict::cap_reached;
  } else if (!in.repair_pending) {
    switch (decide_user_turn(pending, in.abandon_pending)) {
      case user_turn_verdict::refuse_pending:
        end_turn(self, caf::make_error(
                         errc::tool_results_pending,
                         "session " + st.record.id + ": " + std::to_string(pending.calls.size())
                           + " tool call(s) wait for results (" + pending_ids(pending)
                           + ")" + std::string{pending_calls_way_out}));
        return;
      case user_turn_verdict::abandon_pending:
        st.log().info("session={} event=tool_calls_abandoned calls={}", st.record.id,
                      pending.calls.size());
        *rows = abandoned_result_rows(pending);
        break;
      case user_turn_verdict::proceed:
        break;
    }
  }
  if (!in.is_continuation()) {
    message user;
    user.role = msg_role::user;
    user.content = std::move(in.content);
    user.idempotency_key = in.idempotency_key;
    rows->push_back(std::move(user));
  }
  st.turn_opts = in.options;
  st.turn_stream = in.stream;
  store_tools_then(self, in, [self, rows, capped] {
    append_rows(self, rows, 0, [self, capped] {
      if (!capped) {
        // A row over compression.max_row_share of the window lives as a marker first.
        evict_oversized_rows(self, [self] { pre_call_check(self); });
        return;
      }
      end_at_round_cap(self);
    });
  });
}

} // namespace mneme::session_detail
