// The session actor's start, turns, trigger checks and timers; see session_actor.hpp.
// The compaction pipeline itself is in session_compaction.cpp.
//
// Decisions where the SPEC is silent:
//   - T1 and T10 compare the local estimate of the request about to be sent (the
//     API's last usage described the previous, smaller request); T10's message-count
//     rule ("compressible window") is off: T3 bounds the count;
//   - the context "fits" (SPEC §5.3 exhaustion) when its estimate is below the
//     threshold;
//   - after an error trigger (T6-T9) compacted, the model call is retried; each retry
//     spends a turn attempt, so a model that keeps refusing ends in exhaustion;
//   - before that exhaustion, tool outputs over tool_output_eviction_chars are
//     evicted even when the model has not read them yet (it cannot: the request
//     carrying them is refused) and the call is retried once more. Without this one
//     huge output in the protected head makes every turn exhaust and every reset copy
//     it again (a reset loop: 48 resets of one key in a flaky soak run);
//   - any other model failure ends the turn with that error; the user's message stays
//     stored;
//   - the window guard (SPEC §5.6, policies/window_guard.hpp) runs inside call_model,
//     so it covers every model call (first call, retries after T6-T9); its
//     compactions are reported as T1 with window_guard: true, skip the lock check and
//     spend no turn attempt (a grown or weak one still strikes), and at most
//     max_window_guard_passes run per call. The tools sent with a request cost the
//     token estimate of their JSON; the output reserve is the request's max_tokens
//     when the turn set one, else model.max_tokens.
#include "actors/session/session_actor.hpp"

#include <algorithm>
#include <cassert>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "actors/session/session_skills.hpp"
#include "actors/session/session_state.hpp"
#include "messages/llm_errc.hpp"
#include "policies/client_text.hpp"
#include "policies/request_pairing.hpp"
#include "policies/system_merge.hpp"
#include "policies/tool_call_rules.hpp"
#include "policies/token_estimate.hpp"
#include "policies/tool_pairing.hpp"
#include "policies/split.hpp"
#include "policies/tool_loop.hpp"
#include "policies/window_guard.hpp"

namespace mneme {

time_ms system_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

namespace session_detail {

namespace {

std::shared_ptr<spdlog::logger> null_logger() {
  static auto log = std::make_shared<spdlog::logger>(
    "session", std::make_shared<spdlog::sinks::null_sink_mt>());
  return log;
}

// The failure kind of a chat call's error (messages/llm_errc.hpp); a caller-side
// timeout counts as the total timeout, any other code as a network failure.
llm_error_kind kind_of(const caf::error& err) {
  if (err.category() != caf::atom("mneme"))
    return llm_error_kind::total_timeout;
  return llm_kind_of(static_cast<errc>(err.code())).value_or(llm_error_kind::network);
}

void touch(session_ptr self) {
  auto& st = self->state;
  st.last_activity_ms = st.now();
  auto after = st.params.compression.idle_compact_after_seconds;
  if (after > 0)
    self->delayed_send(self, std::chrono::seconds(after), ss_idle_atom_v,
                       ++st.idle_generation);
}

// Drops one in-flight answer of `call_id` (its append was answered).
void forget_answer_in_flight(session_state& st, const std::string& call_id) {
  auto& v = st.answers_in_flight;
  if (auto it = std::find(v.begin(), v.end(), call_id); it != v.end())
    v.erase(it);
}

} // namespace

void append_row(session_ptr self, message m, std::function<void(int64_t)> ok,
                std::function<void(caf::error)> fail) {
  auto& st = self->state;
  if (st.switching_to_child) { // the row belongs to the session the switch ends in
    st.after_switch.emplace_back([self, m = std::move(m), ok, fail]() mutable {
      append_row(self, std::move(m), std::move(ok), std::move(fail));
    });
    return;
  }
  // SPEC §3: a tool row must answer a call of a live assistant row (a backend
  // refuses an orphan with 400). The call's own append must have been answered.
  if (auto verdict = check_tool_row(st.live, m); verdict != tool_row_verdict::ok) {
    fail(caf::make_error(errc::bad_request, "append to session " + st.record.id + ": "
                                              + describe_tool_row_refusal(verdict, m)));
    return;
  }
  // Issue 30: a call is answered once, counting answers the store has not acked yet.
  if (auto c = check_answered_once(st.live, st.answers_in_flight, m); !c.ok()) {
    fail(caf::make_error(errc::bad_request, "append to session " + st.record.id + ": "
                                              + describe_tool_call_refusal(c)));
    return;
  }
  m.session_id = st.record.id;
  m.id = 0;
  m.active = true;
  m.compacted = false;
  if (m.timestamp_ms == 0)
    m.timestamp_ms = st.now();
  m.token_estimate = estimate_message_tokens(m);
  ++st.appends_in_flight;
  bool answer = m.role == msg_role::tool;
  if (answer)
    st.answers_in_flight.push_back(m.tool_call_id);
  then_forgetting(self,
      self->request(st.deps.storage, st.params.storage_timeout, st_append_atom_v, m),
      [self, m, ok, answer](int64_t id) mutable {
        auto& st = self->state;
        --st.appends_in_flight;
        if (answer)
          forget_answer_in_flight(st, m.tool_call_id);
        m.id = id;
        if (m.session_id == st.record.id) { // else the child's context holds its copy
          st.live_tokens += m.token_estimate;
          st.live.push_back(std::move(m));
        }
        touch(self);
        ok(id);
      },
      [self, fail, answer, call_id = m.tool_call_id](caf::error& err) {
        --self->state.appends_in_flight;
        if (answer)
          forget_answer_in_flight(self->state, call_id);
        fail(std::move(err));
      });
}

namespace {
void start_next_turn(session_ptr self);
} // namespace

void end_turn(session_ptr self, caf::error err) {
  auto& st = self->state;
  assert(st.turn_running);
  if (st.context) {
    finish_context(self, std::move(err));
    st.context = nullptr;
  } else if (err) {
    st.turn_promise.deliver(std::move(err));
  } else {
    st.reply.session_id = st.record.id; // a child when the turn continued in one
    st.reply.live_messages = static_cast<int64_t>(st.live.size());
    st.reply.live_tokens = st.live_tokens;
    st.turn_promise.deliver(std::move(st.reply));
  }
  st.reply = turn_reply{};
  st.turn_opts = turn_options{};
  st.turn_stream = nullptr;
  st.turn_running = false;
  start_next_turn(self);
}

namespace {

void report_exhausted(session_ptr self) {
  auto& st = self->state;
  st.log().warn("session={} event=compaction_exhausted attempts={} tokens={} threshold={}",
                st.record.id, st.attempts.used(), st.live_tokens, st.threshold);
  log_refusal(self, st.attempt.by, "exhausted",
              std::to_string(st.attempts.used()) + " attempts spent, context still "
                + std::to_string(st.live_tokens) + " tokens");
  if (st.deps.supervisor)
    caf::anon_send(st.deps.supervisor, sv_exhaust_atom_v, st.record.id, st.record.session_key);
  // The turn's reply so far rides along (the compactions it tried, issue 25 item 6).
  auto tried = st.reply;
  tried.session_id = st.record.id;
  tried.live_messages = static_cast<int64_t>(st.live.size());
  tried.live_tokens = st.live_tokens;
  end_turn(self, caf::make_error(errc::compaction_exhausted,
                                 "session " + st.record.id + ": "
                                   + std::to_string(st.attempts.used())
                                   + " compaction attempts spent, context still "
                                   + std::to_string(st.live_tokens) + " tokens",
                                 std::move(tried)));
}

void record_attempt(session_state& st, const compaction_report& r, const caf::error& err) {
  if (!err && r.effective)
    st.attempts.record_productive();
  else
    st.attempts.record_unproductive();
  st.reply.compactions.push_back(r);
}

trigger_inputs inputs_of(const session_state& st, eval_phase phase) {
  trigger_inputs in;
  in.phase = phase;
  in.estimated_tokens = st.live_tokens;
  in.message_count = static_cast<int64_t>(st.live.size());
  return in;
}

void call_model(session_ptr self);

} // namespace

void pre_call_check(session_ptr self) {
  auto& st = self->state;
  if (st.compacting) {
    st.after_compaction.emplace_back([self] { pre_call_check(self); });
    return;
  }
  auto in = inputs_of(st, st.preflight_passes == 0 ? eval_phase::pre_call
                                                   : eval_phase::preflight);
  in.preflight_passes_done = st.preflight_passes;
  auto d = evaluate_triggers(in, limits_of(st), st.params.compression, st.record.triggers,
                             st.now());
  gate_automatic(st, d);
  if (d.compact && st.attempts.begin()) {
    ++st.preflight_passes;
    start_compaction(self, d.fired, d.lock, {}, std::nullopt,
                     [self](compaction_report r, caf::error err) {
                       record_attempt(self->state, r, err);
                       pre_call_check(self);
                     });
    return;
  }
  if (!d.compact && prune_if_due(self, [self] { pre_call_check(self); }))
    return; // the main compaction may not run: prune without an LLM first
  bool fits = st.live_tokens < st.threshold;
  if (st.attempts.exhausted(fits)) {
    report_exhausted(self);
    return;
  }
  call_model(self);
}

void post_call_check(session_ptr self) {
  auto& st = self->state;
  if (st.compacting) {
    st.after_compaction.emplace_back([self] { post_call_check(self); });
    return;
  }
  if (st.server_compacted_this_turn) { // the server compacted: mneme does not, now
    persist_triggers(self);
    after_answer(self); // built-in calls, else the turn ends
    return;
  }
  auto in = inputs_of(st, eval_phase::post_call);
  in.api_prompt_tokens = st.record.triggers.last_prompt_tokens;
  auto d = evaluate_triggers(in, limits_of(st), st.params.compression, st.record.triggers,
                             st.now());
  gate_automatic(st, d);
  if (d.compact && st.attempts.begin()) {
    start_compaction(self, d.fired, d.lock, {}, std::nullopt,
                     [self](compaction_report r, caf::error err) {
                       record_attempt(self->state, r, err);
                       after_answer(self); // built-in calls, else the turn ends
                     });
    return;
  }
  persist_triggers(self); // the new usage figure
  after_answer(self); // built-in calls, else the turn ends
}

void on_model_error(session_ptr self, caf::error err) {
  auto& st = self->state;
  auto kind = kind_of(err);
  if (st.turn_stream && st.turn_stream->relayed()) {
    // The client saw part of this answer: a compaction and a retry would show it a
    // second, different answer after the first. The turn ends with the error; the
    // partial answer is not stored.
    st.log().warn("session={} event=stream_failed kind={}", st.record.id, to_string(kind));
    end_turn(self, std::move(err));
    return;
  }
  auto in = inputs_of(st, eval_phase::post_call);
  in.last_error = kind;
  auto d = evaluate_triggers(in, limits_of(st), st.params.compression, st.record.triggers,
                             st.now());
  st.log().warn("session={} event=model_call_failed kind={} fired={}", st.record.id,
                to_string(kind), to_string(d.fired));
  if (d.capped_context_window && *d.capped_context_window != st.window)
    set_window(st, *d.capped_context_window);
  if (!d.compact) {
    end_turn(self, std::move(err));
    return;
  }
  if (st.compacting) { // an outside compaction is running: retry once it is done
    st.after_compaction.emplace_back([self] { call_model(self); });
    return;
  }
  if (!st.attempts.begin()) {
    // Compaction cannot shrink what the head and tail hold: evict the large tool
    // outputs the refused request carried and retry, once (the next plan is empty).
    auto evicted = evict_refused_outputs(self, [self](bool committed) {
      if (committed)
        call_model(self);
      else
        report_exhausted(self);
    });
    if (!evicted)
      report_exhausted(self);
    return;
  }
  start_compaction(self, d.fired, d.lock, {}, std::nullopt,
                   [self](compaction_report r, caf::error cerr) {
                     record_attempt(self->state, r, cerr);
                     call_model(self);
                   });
}

namespace {

void on_answer(session_ptr self, chat_answer answer) {
  auto& st = self->state;
  st.reply.answer = answer.content;
  st.reply.tool_calls = answer.tool_calls;
  st.reply.finish_reason = finish_reason_of(!answer.tool_calls.empty(), answer.finish_reason);
  st.reply.stop_sequence = st.reply.finish_reason == "stop" ? answer.stop_sequence : "";
  st.reply.prompt_tokens = answer.prompt_tokens;
  st.record.triggers.last_prompt_tokens = answer.prompt_tokens;
  note_chat_answer(st, answer);
  message m;
  m.role = msg_role::assistant;
  m.content = std::move(answer.content);
  m.tool_calls = std::move(answer.tool_calls);
  append_row(self, std::move(m),
             [self](int64_t) { run_answer_paths(self, [self] { post_call_check(self); }); },
             [self](caf::error err) { end_turn(self, std::move(err)); });
}

void send_model_call(session_ptr self) {
  auto& st = self->state;
  chat_request req;
  req.model = st.turn_opts.model.empty() ? st.params.model.name : st.turn_opts.model;
  pairing_repair repaired;
  req.messages = merge_leading_system_rows(repair_tool_pairing(st.live, &repaired));
  if (repaired.changed())
    st.log().info("session={} event=request_tool_pairing_repaired dropped_results={}"
                  " stubbed_calls={}", st.record.id, repaired.dropped_results,
                  repaired.stubbed_calls);
  req.purpose = llm_purpose::chat;
  req.tools_json = tools_to_send(st);
  req.extra_json = st.turn_opts.extra_json;
  req.sink = st.turn_stream;
  req.stream = req.sink != nullptr;
  if (st.turn_opts.has_max_tokens)
    req.max_tokens = st.turn_opts.max_tokens;
  if (st.turn_opts.has_temperature)
    req.temperature = st.turn_opts.temperature;
  decorate_chat_request(st, req);
  then_forgetting(
    self, self->request(st.deps.chat, st.params.chat_timeout, llm_call_atom_v, std::move(req)),
    [self](chat_answer& a) { on_answer(self, std::move(a)); },
    [self](caf::error& err) { on_model_error(self, std::move(err)); });
}

// The live context a compaction with `params` would leave at most: head + the largest
// summary it can commit + tail (the live tokens when there is nothing to compact).
int64_t tokens_after_plan(const session_state& st, const compression_params& params) {
  auto plan = plan_compaction(st.live, params, st.window);
  if (plan.nothing_to_compact())
    return st.live_tokens;
  return plan.head_tokens + plan.tail_tokens
         + summary_bound_tokens(summary_budget_of(st, plan.middle_tokens));
}

window_guard_inputs guard_inputs_of(const session_state& st, int passes) {
  window_guard_inputs in;
  in.context_window = st.window;
  in.output_reserve = guard_output_reserve(
    st.window, st.turn_opts.has_max_tokens ? st.turn_opts.max_tokens : st.params.model.max_tokens);
  in.tools_tokens = estimate_text_tokens(tools_for_estimate(st));
  in.live_tokens = st.live_tokens;
  in.passes_done = passes;
  in.summarizer_allowed = !in_cooldown(st.record.triggers, st.now());
  if (in.live_tokens + in.output_reserve > in.context_window) { // plan only when needed
    in.planned_tokens = tokens_after_plan(st, st.params.compression);
    in.minimal_tokens = tokens_after_plan(st, minimal_tail_params(st.params.compression));
  }
  return in;
}

// The window guard before every model call (SPEC §5.6): send what fits, compact first
// what can fit (whatever the locks and attempts say), fail what cannot.
void call_model_guarded(session_ptr self, int passes) {
  auto& st = self->state;
  if (st.compacting) {
    st.after_compaction.emplace_back([self, passes] { call_model_guarded(self, passes); });
    return;
  }
  auto in = guard_inputs_of(st, passes);
  auto d = decide_window_guard(in);
  auto* metrics = st.params.metrics.get();
  switch (d.action) {
    case window_guard_action::send:
      if (st.context) { // the agent calls its model itself: the job answers the messages
        end_turn(self, caf::error{});
        return;
      }
      send_model_call(self);
      return;
    case window_guard_action::bad_input:
      end_turn(self, caf::make_error(errc::internal, "session " + st.record.id
                                                       + ": window guard input is invalid"));
      return;
    case window_guard_action::unfittable:
      if (metrics)
        metrics->record_window_guard(window_guard_label::unfittable);
      st.log().warn("session={} event=window_guard outcome=unfittable needed={} window={} "
                    "minimal={} passes={}", st.record.id, d.needed_tokens, in.context_window,
                    d.minimal_needed_tokens, passes);
      log_refusal(self, trigger::t1_pre_call, "refused_by_guard", describe_unfittable(in, d));
      end_turn(self, caf::make_error(errc::context_unfittable,
                                     "session " + st.record.id + ": "
                                       + describe_unfittable(in, d)));
      return;
    case window_guard_action::compact_summarizer:
    case window_guard_action::compact_fallback:
      break;
  }
  st.log().info("session={} event=window_guard action={} needed={} window={} minimal_tail={} "
                "passes={}", st.record.id, to_string(d.action), d.needed_tokens,
                in.context_window, d.minimal_tail, passes);
  lock_decision lock;
  lock.fallback_only = d.action == window_guard_action::compact_fallback;
  st.guard_requested = true;
  st.guard_minimal_tail = d.minimal_tail;
  start_compaction(self, trigger::t1_pre_call, lock, {}, std::nullopt,
                   [self, passes](compaction_report r, caf::error err) {
                     auto& st = self->state;
                     if (st.params.metrics)
                       st.params.metrics->record_window_guard(
                         r.used_fallback ? window_guard_label::compacted_fallback
                                         : window_guard_label::compacted_summarizer);
                     if (err)
                       st.log().warn("session={} event=window_guard_compaction_failed "
                                     "error={}", st.record.id, log_quoted(render_error(err)));
                     st.reply.compactions.push_back(r);
                     call_model_guarded(self, passes + 1);
                   });
}

void call_model(session_ptr self) {
  call_model_guarded(self, 0);
}

void start_next_turn(session_ptr self) {
  auto& st = self->state;
  if (st.turn_running || st.pending_turns.empty())
    return;
  auto job = std::move(st.pending_turns.front());
  st.pending_turns.pop_front();
  st.turn_running = true;
  st.turn_promise = std::move(job.promise);
  st.reply = turn_reply{};
  st.reply.session_id = st.record.id;
  // A model_error continues the attempt budget of the context request whose messages
  // the model refused, as a retry inside a turn does (session_context.cpp).
  if (!job.context || job.context->rq.op != context_op::model_error)
    st.attempts.new_turn();
  st.preflight_passes = 0;
  if (job.context) {
    st.context = std::move(job.context);
    begin_context(self);
    return;
  }
  begin_turn(self, std::move(job.input));
}

// Queues a turn behind the running one (errc::overloaded when the queue is full).
caf::result<turn_reply> enqueue_turn(session_ptr self, turn_input in) {
  if (auto err = queue_full(self->state))
    return err;
  auto promise = self->make_response_promise<turn_reply>();
  queue_job(self, pending_turn{std::move(in), promise, nullptr});
  return promise;
}

void on_idle_tick(session_ptr self, uint64_t generation) {
  auto& st = self->state;
  if (generation != st.idle_generation || st.turn_running || st.compacting)
    return;
  auto in = inputs_of(st, eval_phase::idle_tick);
  in.api_prompt_tokens = st.record.triggers.last_prompt_tokens;
  in.idle_seconds = std::max<int64_t>(0, (st.now() - st.last_activity_ms) / 1000);
  auto d = evaluate_triggers(in, limits_of(st), st.params.compression, st.record.triggers,
                             st.now());
  gate_automatic(st, d);
  if (!d.compact)
    return;
  start_compaction(self, d.fired, d.lock, {}, std::nullopt,
                   [](compaction_report, caf::error) {});
}

// The decision for a compaction requested from outside (gateway, engine, CLI, ACP).
trigger_decision outside_decision(const session_state& st, trigger by) {
  trigger_inputs in;
  switch (by) {
    case trigger::t3_hygiene_message_cap:
    case trigger::t4_hygiene_tokens:
      in = inputs_of(st, eval_phase::hygiene_check); // count and local estimate only
      break;
    case trigger::t11_engine_request:
      in = inputs_of(st, eval_phase::engine_request);
      break;
    default:
      in = inputs_of(st, eval_phase::manual_command);
      in.manual = by;
      break;
  }
  auto d = evaluate_triggers(in, limits_of(st), st.params.compression, st.record.triggers,
                             st.now());
  gate_automatic(st, d);
  return d;
}

bool accepted_from_outside(trigger by) {
  switch (by) {
    case trigger::t3_hygiene_message_cap:
    case trigger::t4_hygiene_tokens:
    case trigger::t11_engine_request:
    case trigger::t12_manual_session:
    case trigger::t13_manual_local:
    case trigger::t14_channel_command:
    case trigger::t15_acp_command:
      return true;
    default:
      return false;
  }
}

// `fallback_only`: the caller asks for the local fallback summary, no summarizer call
// (the gateway's T3 during its hygiene cooldown).
caf::result<compaction_report> compact_on_request(session_ptr self, trigger by,
                                                  std::string focus, local_window local,
                                                  bool fallback_only = false) {
  auto& st = self->state;
  if (st.compacting)
    return caf::make_error(errc::compaction_in_flight,
                           "session " + st.record.id + ": a compaction is running");
  if (fallback_only && st.params.compression.abort_on_summary_failure)
    return caf::make_error(errc::compaction_locked,
                           "session " + st.record.id + ": a fallback-only compaction was asked"
                           " but abort_on_summary_failure forbids the fallback summary");
  auto d = outside_decision(st, by);
  if (fallback_only)
    d.lock.fallback_only = true;
  if (d.error != trigger_input_error::none)
    return caf::make_error(errc::internal, "trigger input: " + std::string{to_string(d.error)});
  if (!d.compact) {
    if (d.skip == trigger_skip::locked || d.skip == trigger_skip::master_switch_off)
      return caf::make_error(errc::compaction_locked,
                             "session " + st.record.id + ": " + std::string{to_string(d.skip)}
                               + " (" + std::string{to_string(d.lock.verdict)} + ")");
    compaction_report r; // the rule does not match (any more): nothing to do
    r.by = by;
    r.tokens_before = r.tokens_after = st.live_tokens;
    r.messages_after = static_cast<int64_t>(st.live.size());
    return r;
  }
  auto promise = self->make_response_promise<compaction_report>();
  start_compaction(self, d.fired, d.lock, std::move(focus), local,
                   [promise](compaction_report r, caf::error err) mutable {
                     if (err)
                       promise.deliver(std::move(err));
                     else
                       promise.deliver(std::move(r));
                   });
  return promise;
}

int64_t sum_estimates(std::vector<message>& rows) {
  int64_t total = 0;
  for (auto& m : rows) {
    if (m.token_estimate <= 0)
      m.token_estimate = estimate_message_tokens(m);
    total += m.token_estimate;
  }
  return total;
}

void load_session(session_ptr self, const std::string& session_id) {
  auto& st = self->state;
  auto fail = [self](caf::error& err) {
    self->state.log().error("session={} event=load_failed error={}", self->state.record.id,
                            log_quoted(render_error(err)));
    self->quit(std::move(err));
  };
  st.record.id = session_id;
  self->request(st.deps.storage, st.params.storage_timeout, st_session_atom_v, session_id)
    .await(
      [self, session_id, fail](session_record& rec) {
        auto& st = self->state;
        st.record = std::move(rec);
        bool repaired = repair(st.record.triggers) != 0;
        self->request(st.deps.storage, st.params.storage_timeout, st_live_atom_v, session_id)
          .await(
            [self, repaired, fail](std::vector<message>& live) {
              auto& st = self->state;
              st.live_tokens = sum_estimates(live);
              st.live = std::move(live);
              self->request(st.deps.storage, st.params.storage_timeout, st_tools_get_atom_v,
                            st.record.session_key)
                .await(
                  [self, repaired](std::string& tools) {
                    auto& st = self->state;
                    st.tools_json = std::move(tools);
                    st.ready = true;
                    if (repaired)
                      persist_triggers(self);
                    touch(self);
                    st.log().debug("session={} event=loaded live={} tokens={} tools_bytes={}",
                                   st.record.id, st.live.size(), st.live_tokens,
                                   st.tools_json.size());
                  },
                  fail);
            },
            fail);
      },
      fail);
}

} // namespace

spdlog::logger& session_state::log() const {
  return params.log ? *params.log : *null_logger();
}

caf::error queue_full(const session_state& st) {
  if (st.pending_turns.size() < st.params.max_pending_turns)
    return {};
  return caf::make_error(errc::overloaded, "session " + st.record.id + ": "
                                             + std::to_string(st.pending_turns.size())
                                             + " turns waiting");
}

void queue_job(session_ptr self, pending_turn job) {
  self->state.pending_turns.push_back(std::move(job));
  start_next_turn(self);
}

trigger_limits limits_of(const session_state& st) {
  trigger_limits l;
  l.threshold_tokens = st.turn_opts.compact_threshold > 0 ? st.turn_opts.compact_threshold
                                                          : automatic_threshold(st);
  l.hygiene_token_limit = hygiene_token_limit(st.window);
  l.idle_floor_tokens = threshold_floor_tokens;
  l.context_window = st.window;
  l.long_context_cap_tokens = long_context_window_cap_tokens;
  l.compressible_window = 0;
  return l;
}

void set_window(session_state& st, int64_t window) {
  st.window = window;
  const auto& model = st.threshold_model.empty() ? st.params.model.name : st.threshold_model;
  st.threshold = compute_threshold(st.params.compression, model, window,
                                   st.params.model.max_tokens)
                   .threshold;
  decide_external(st);
}

void persist_triggers(session_ptr self) {
  auto& st = self->state;
  then_forgetting(
    self,
    self->request(st.deps.storage, st.params.storage_timeout, st_put_triggers_atom_v,
                  st.record.id, st.record.triggers),
    [](caf::ok_atom) {},
    [self](caf::error& err) {
      self->state.log().warn("session={} event=persist_triggers_failed error={}",
                             self->state.record.id, log_quoted(render_error(err)));
    });
}

} // namespace session_detail

session_actor spawn_session(caf::actor_system& sys, session_params params, session_deps deps,
                            std::string session_id) {
  using namespace session_detail;
  return sys.spawn([params = std::move(params), deps = std::move(deps),
                    session_id = std::move(session_id)](session_ptr self) mutable
                   -> session_actor::behavior_type {
    auto& st = self->state;
    st.params = std::move(params);
    st.deps = std::move(deps);
    st.attempts = turn_attempts{st.params.compression.max_attempts};
    st.record.id = session_id; // for log lines before the record is loaded
    set_window(st, st.params.model.context_length);
    load_session(self, session_id);
    return {
      [self](ss_turn_atom, std::string& text) -> caf::result<turn_reply> {
        return enqueue_turn(self, turn_input::text(std::move(text)));
      },
      [self](ss_turn_atom, turn_input& in) -> caf::result<turn_reply> {
        return enqueue_turn(self, std::move(in));
      },
      [self](ss_context_atom, context_request& rq) -> caf::result<context_reply> {
        return enqueue_context(self, std::move(rq));
      },
      [self](ss_append_atom, message& m) -> caf::result<int64_t> {
        if (auto c = check_tool_call_structure(
              m, std::max<int64_t>(1, self->state.params.max_tool_calls_per_message));
            !c.ok())
          return caf::make_error(errc::bad_request, "append to session " + self->state.record.id
                                                      + ": " + describe_tool_call_refusal(c));
        auto promise = self->make_response_promise<int64_t>();
        append_row(self, std::move(m), [promise](int64_t id) mutable { promise.deliver(id); },
                   [promise](caf::error err) mutable { promise.deliver(std::move(err)); });
        return promise;
      },
      [self](ss_compact_atom, trigger by, std::string& focus) -> caf::result<compaction_report> {
        if (!accepted_from_outside(by) || by == trigger::t13_manual_local)
          return caf::make_error(errc::bad_request,
                                 "trigger " + std::string{to_string(by)}
                                   + " cannot be requested from outside the session");
        return compact_on_request(self, by, std::move(focus), std::nullopt);
      },
      [self](ss_compact_atom, trigger by, std::string& focus,
             bool fallback_only) -> caf::result<compaction_report> {
        if (!accepted_from_outside(by) || by == trigger::t13_manual_local)
          return caf::make_error(errc::bad_request,
                                 "trigger " + std::string{to_string(by)}
                                   + " cannot be requested from outside the session");
        return compact_on_request(self, by, std::move(focus), std::nullopt, fallback_only);
      },
      [self](ss_local_atom, int64_t center, int64_t radius) -> caf::result<compaction_report> {
        if (center < 0 || radius < 0)
          return caf::make_error(errc::bad_request, "local compaction: center and radius"
                                                    " must not be negative");
        return compact_on_request(self, trigger::t13_manual_local, {},
                                  std::make_pair(static_cast<size_t>(center),
                                                 static_cast<size_t>(radius)));
      },
      [self](ss_state_atom) -> session_snapshot {
        auto& st = self->state;
        session_snapshot s;
        s.record = st.record;
        s.live_messages = static_cast<int64_t>(st.live.size());
        s.live_tokens = st.live_tokens;
        s.threshold_tokens = st.threshold;
        s.context_window = st.window;
        s.compaction_in_flight = st.compacting;
        s.pending_turns = static_cast<int64_t>(st.pending_turns.size());
        s.compactions_by_trigger = st.compactions_by_trigger;
        s.attempts_used = st.attempts.used();
        s.max_attempts = st.attempts.max_attempts();
        return s;
      },
      [self](ss_live_atom) -> std::vector<message> { return self->state.live; },
      [self](ss_skill_atom, std::string& name, bool load) -> caf::result<int64_t> {
        return on_skill(self, name, load);
      },
      [self](ss_idle_atom, uint64_t generation) { on_idle_tick(self, generation); },
      [self](ss_evict_atom) -> bool {
        auto& st = self->state;
        bool idle = !st.turn_running && !st.compacting && st.pending_turns.empty()
                    && st.appends_in_flight == 0
                    && !idle_compaction_pending(st.params.compression,
                                                st.now() - st.last_activity_ms,
                                                st.live_tokens, threshold_floor_tokens);
        if (idle)
          self->quit(caf::exit_reason::normal);
        return idle;
      },
    };
  });
}

} // namespace mneme
