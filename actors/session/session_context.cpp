// The context service inside a session (issue 27 item 2; messages/context_service.hpp):
// an agent that calls its model itself borrows the session's own turn path, minus the
// model call. Each request is a job of the turn queue (one at a time, behind turns), so
// it reuses every check of a turn unchanged:
//   context      check the whole batch (policies/context_rows.hpp; nothing stored on a
//                refusal) -> append the rows in order -> oversized rows -> pre_call_check
//                (T1, T10, pruning, exhaustion) -> the window guard -> where a turn would
//                send its request, the job answers the repaired messages instead;
//   usage        check the answer -> last_prompt_tokens = prompt_tokens -> append the
//                answer -> the answer paths (eviction, pruning, micro-compaction) ->
//                post_call_check (T2) -> the trigger state written -> the reply;
//   model_error  classify_http_answer(status, body) -> on_model_error, as for a failed
//                call of the session's own: T6-T9 compact (T7 also caps the window) and
//                "call again" (the window guard, then the job answers the messages);
//                any other kind ends the job with the advice of policies/
//                context_retry.hpp instead of an error.
// The attempt budget (SPEC §5.3) of a model call spans its context request and the
// model_error requests that follow it (a new context or usage request starts a new one),
// so an agent that keeps retrying a refused request ends in compaction exhaustion (409,
// the key is reset) exactly as the session's own turn would.
// Decisions where the issue is silent:
//   - pending tool calls do not refuse a user message (as for a channel message): the
//     answered messages are repaired like every request the session sends (stub results,
//     policies/request_pairing.hpp), nothing invented is stored;
//   - `tools` count in the window guard's estimate and are not stored (the key's tools of
//     /turns stay as they are); the built-in tools are never offered to such an agent,
//     and an answer's calls are all the agent's (none is run by mneme);
//   - `model` sets the name the session's threshold follows (in memory, until another
//     name is sent);
//   - usage's reply waits until the trigger state (last_prompt_tokens, locks) is stored.
// Touched only by the owning session actor, inside its handlers.
#include <algorithm>
#include <memory>

#include "actors/session/session_state.hpp"
#include "messages/llm_errc.hpp"
#include "policies/context_retry.hpp"
#include "policies/context_rows.hpp"
#include "policies/error_classifier.hpp"
#include "policies/request_pairing.hpp"
#include "policies/system_merge.hpp"
#include "policies/token_estimate.hpp"

namespace mneme::session_detail {

namespace {

int64_t max_calls_of(const session_state& st) {
  return std::max<int64_t>(1, st.params.max_tool_calls_per_message);
}

// Appends rows[i..] in order (their ids into the reply), then `done`; the first
// failure ends the job.
void append_context_rows(session_ptr self, size_t i, std::function<void()> done) {
  auto& rows = self->state.context->rq.rows;
  if (i >= rows.size()) {
    done();
    return;
  }
  append_row(self, rows[i],
             [self, i, done](int64_t id) {
               self->state.context->reply.appended_ids.push_back(id);
               append_context_rows(self, i + 1, done);
             },
             [self](caf::error err) { end_turn(self, std::move(err)); });
}

void begin_rows(session_ptr self) {
  auto& st = self->state;
  auto& rq = st.context->rq;
  auto c = check_context_rows(st.live, st.answers_in_flight, rq.rows, max_calls_of(st));
  if (!c.ok()) {
    end_turn(self, caf::make_error(errc::bad_request,
                                   "field 'messages[" + std::to_string(c.index)
                                     + "]': " + describe_context_rows_refusal(c)));
    return;
  }
  if (!rq.model.empty() && rq.model != st.threshold_model) {
    st.threshold_model = rq.model;
    set_window(st, st.window);
  }
  if (rq.max_tokens > 0) { // the output reserve of the window guard
    st.turn_opts.has_max_tokens = true;
    st.turn_opts.max_tokens = rq.max_tokens;
  }
  append_context_rows(self, 0, [self] {
    evict_oversized_rows(self, [self] { pre_call_check(self); });
  });
}

void begin_usage(session_ptr self) {
  auto& st = self->state;
  auto& rq = st.context->rq;
  if (rq.has_answer) {
    auto c = check_context_rows(st.live, st.answers_in_flight, {rq.answer}, max_calls_of(st));
    if (!c.ok()) {
      end_turn(self, caf::make_error(errc::bad_request,
                                     "field 'answer': " + describe_context_rows_refusal(c)));
      return;
    }
  }
  st.record.triggers.last_prompt_tokens = rq.prompt_tokens;
  st.reply.prompt_tokens = rq.prompt_tokens;
  if (!rq.has_answer) {
    post_call_check(self);
    return;
  }
  rq.answer.role = msg_role::assistant;
  st.reply.tool_calls = rq.answer.tool_calls;
  append_row(self, rq.answer,
             [self](int64_t id) {
               self->state.context->reply.answer_id = id;
               run_answer_paths(self, [self] { post_call_check(self); });
             },
             [self](caf::error err) { end_turn(self, std::move(err)); });
}

void begin_model_error(session_ptr self) {
  auto& st = self->state;
  auto& job = *st.context;
  auto kind = classify_http_answer(static_cast<int>(job.rq.status), job.rq.body);
  job.reply.error_kind = kind;
  job.reply.fired = error_trigger(kind);
  on_model_error(self, caf::make_error(to_errc(kind), "the model answered HTTP "
                                                        + std::to_string(job.rq.status)));
}

// True when `err` is the job's own model error coming back unhandled (no compaction).
bool is_own_model_error(const context_job& job, const caf::error& err) {
  if (job.rq.op != context_op::model_error || err.category() != caf::atom("mneme"))
    return false;
  auto kind = llm_kind_of(static_cast<errc>(err.code()));
  return kind && *kind == job.reply.error_kind;
}

int64_t request_estimate(const std::vector<message>& rows, const std::string& tools) {
  int64_t total = estimate_text_tokens(tools);
  for (const auto& m : rows)
    total += m.token_estimate > 0 ? m.token_estimate : estimate_message_tokens(m);
  return total;
}

} // namespace

caf::result<context_reply> enqueue_context(session_ptr self, context_request rq) {
  if (auto err = queue_full(self->state))
    return err;
  auto job = std::make_shared<context_job>();
  job->rq = std::move(rq);
  job->promise = self->make_response_promise<context_reply>();
  auto promise = job->promise;
  pending_turn p;
  p.context = std::move(job);
  queue_job(self, std::move(p));
  return promise;
}

void begin_context(session_ptr self) {
  auto& st = self->state;
  st.log().debug("session={} event=context_request op={} rows={}", st.record.id,
                 to_string(st.context->rq.op), st.context->rq.rows.size());
  switch (st.context->rq.op) {
    case context_op::context: begin_rows(self); return;
    case context_op::usage: begin_usage(self); return;
    case context_op::model_error: begin_model_error(self); return;
    case context_op::count_: break; // not an operation
  }
  finish_context(self, caf::make_error(errc::bad_request, "context: no such operation"));
}

void finish_context(session_ptr self, caf::error err) {
  auto& st = self->state;
  auto& job = *st.context;
  bool unhandled_model_error = err && is_own_model_error(job, err);
  if (err && !unhandled_model_error) {
    job.promise.deliver(std::move(err));
    return;
  }
  auto& r = job.reply;
  r.session_id = st.record.id; // a child when a compaction continued in one
  r.compactions = std::move(st.reply.compactions);
  r.live_messages = static_cast<int64_t>(st.live.size());
  r.live_tokens = st.live_tokens;
  r.threshold_tokens = automatic_threshold(st);
  r.context_window = st.window;
  r.has_messages = job.rq.op == context_op::context;
  if (job.rq.op == context_op::model_error) {
    auto advice = advise_after_model_error(r.error_kind, !unhandled_model_error);
    r.retry = advice.retry;
    r.retry_after_backoff = advice.retry_after_backoff;
    r.has_messages = advice.retry;
    st.log().info("session={} event=context_model_error kind={} fired={} retry={} "
                  "compactions={}", st.record.id, to_string(r.error_kind), to_string(r.fired),
                  r.retry, r.compactions.size());
  }
  if (r.has_messages) {
    r.messages = merge_leading_system_rows(repair_tool_pairing(st.live));
    r.estimated_tokens = request_estimate(r.messages, job.rq.tools_json);
  } else {
    r.estimated_tokens = st.live_tokens;
  }
  job.promise.deliver(std::move(r));
}

bool end_context_after_answer(session_ptr self) {
  auto& st = self->state;
  if (!st.context)
    return false;
  then_forgetting(self,
      self->request(st.deps.storage, st.params.storage_timeout, st_put_triggers_atom_v,
                    st.record.id, st.record.triggers),
      [self](caf::ok_atom) { end_turn(self, caf::error{}); },
      [self](caf::error& err) { end_turn(self, std::move(err)); });
  return true;
}

const std::string& tools_for_estimate(const session_state& st) {
  return st.context ? st.context->rq.tools_json : tools_to_send(st);
}

} // namespace mneme::session_detail
