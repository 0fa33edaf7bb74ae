// The gateway's turn path (gateway_state.hpp): the hygiene check (T3/T4) before a
// turn, the turn itself, and the reset that follows an exhausted one.
//
// An exhausted turn (SPEC §5.3, issue 25 item 6): the key is reset, then the message is
// re-run once in the new session (gateway.replay_after_reset: true) and its reply says
// so; without the replay, or when the re-run fails too, the answer is an error (its
// code, never a 200 with an empty answer) carrying a turn_reply with the notice that
// asks to send the message again (policies/exhaustion_notice.hpp). Either way the reply
// lists every compaction the turn tried, the hygiene check's first. A re-run that
// exhausts again is not re-run (the supervisor's signal may still reset the key).
#include "actors/gateway/gateway_state.hpp"

#include <memory>
#include <utility>

#include "policies/client_text.hpp"
#include "policies/exhaustion_notice.hpp"
#include "policies/hygiene_gate.hpp"
#include "policies/threshold.hpp"
#include "policies/token_estimate.hpp"
#include "policies/trigger_eval.hpp"

namespace mneme::gateway_detail {

namespace {

// The rows a turn stores before its model call and their estimate: the user message,
// or one tool row per result.
std::pair<int64_t, int64_t> stored_estimate(const turn_input& in) {
  if (!in.is_continuation())
    return {1, estimate_text_tokens(in.content) + message_overhead_tokens};
  int64_t tokens = 0;
  for (const auto& r : in.tool_results)
    tokens += estimate_text_tokens(r.content) + message_overhead_tokens;
  return {static_cast<int64_t>(in.tool_results.size()), tokens};
}

// Errors of an agent turn that stored nothing (session_agent.cpp).
bool refused_before_storing(const caf::error& err) {
  return err == errc::bad_request || err == errc::tool_results_pending
         || err == errc::overloaded;
}

void record_reply(gateway_ptr self, const std::string& key, const turn_reply& r) {
  auto& e = self->state.keys[key];
  e.live_messages = r.live_messages;
  e.live_tokens = r.live_tokens;
}

using reports = std::vector<compaction_report>;

reports joined(reports first, const reports& then) {
  first.insert(first.end(), then.begin(), then.end());
  return first;
}

// The error answer of an exhausted turn whose message was not answered: `err`'s code
// and text, and a turn_reply naming the new session, the notice asking to send the
// message again, and every compaction tried.
caf::error unanswered(gateway_ptr self, const std::string& key, const caf::error& err,
                      reports tried, const std::string& text) {
  auto& e = self->state.keys[key];
  turn_reply r;
  r.session_id = e.session_id;
  r.notice = exhaustion_notice(tried.size(), false, text);
  r.compactions = std::move(tried);
  r.live_messages = e.live_messages;
  r.live_tokens = e.live_tokens;
  auto code = err.category() == caf::atom("mneme") ? static_cast<errc>(err.code())
                                                   : errc::compaction_exhausted;
  const auto& ctx = err.context();
  auto what = !ctx.empty() && ctx.match_element<std::string>(0) ? ctx.get_as<std::string>(0)
                                                                : render_error(err);
  return caf::make_error(code, what, std::move(r));
}

// What the notice quotes of an unanswered turn: the user's message, or what a
// continuation carried (its calls live in the session that ran out).
std::string unanswered_text(const turn_input& in) {
  if (!in.is_continuation())
    return in.content;
  return "the results of " + std::to_string(in.tool_results.size()) + " tool call"
         + (in.tool_results.size() == 1 ? "" : "s");
}

// After the reset: the unanswered message is re-run once in the new session
// (gateway.replay_after_reset), or the answer is the error with the notice. A
// continuation is never re-run: the calls it answers are not in the new session.
void after_reset(gateway_ptr self, const std::string& key, const caf::error& err,
                 reports tried, std::shared_ptr<const turn_input> in, reply_promise rp) {
  auto& st = self->state;
  auto text = unanswered_text(*in);
  if (!st.cfg.gateway.replay_after_reset || in->is_continuation()) {
    rp.deliver(unanswered(self, key, err, std::move(tried), text));
    return;
  }
  auto user = st.keys[key].user_id;
  st.log().info("key={} session={} event=replay_after_reset compactions_tried={}",
                log_quoted(key), st.keys[key].session_id, tried.size());
  auto replay = [self, key, tried, in, text, rp]() mutable {
    self->state.keys[key].replaying_in = self->state.keys[key].session_id;
    request_session<turn_reply>(
      self, key, self->state.cfg.turn_timeout,
      [self, key, tried, text, rp](turn_reply& r) mutable {
        self->state.keys[key].replaying_in.clear();
        record_reply(self, key, r);
        r.compactions = joined(tried, r.compactions);
        r.notice = exhaustion_notice(tried.size(), true, text);
        rp.deliver(std::move(r));
      },
      [self, key, tried, text, rp](caf::error& again) mutable {
        // replaying_in stays: the supervisor's signal of this exhaustion may come later.
        auto all = tried;
        if (auto r = turn_reply_of(again))
          all = joined(std::move(all), r->compactions);
        rp.deliver(unanswered(self, key, again, std::move(all), text));
      },
      ss_turn_atom_v, *in);
  };
  with_session(self, key, user, replay, [self, key, err, tried, text, rp](caf::error) mutable {
    rp.deliver(unanswered(self, key, err, std::move(tried), text));
  });
}

// `before`: the compactions the hygiene check ran for this turn (they lead its reply).
void run_turn(gateway_ptr self, const std::string& key, turn_input in, reply_promise rp,
              reports before = {}) {
  auto& st = self->state;
  auto& e = st.keys[key];
  e.last_activity_ms = st.cfg.clock();
  auto old_id = e.session_id;
  auto turn_handle = e.handle;
  // The input again for the re-run after a reset (after_reset).
  auto kept = std::make_shared<const turn_input>(in);
  request_session<turn_reply>(
    self, key, st.cfg.turn_timeout,
    [self, key, old_id, before, rp](turn_reply& r) mutable {
      follow_child(self, key, old_id, r.session_id);
      record_reply(self, key, r);
      r.compactions = joined(before, r.compactions);
      rp.deliver(std::move(r));
    },
    [self, key, old_id, turn_handle, stored = stored_estimate(in), kept, before,
     rp](caf::error& err) mutable {
      auto& e = self->state.keys[key];
      if (err != errc::compaction_exhausted) {
        // The user's message is stored even when the model failed: count it, so the
        // hygiene check sees the session grow during an outage (SPEC §5.4). A refused
        // agent turn stored nothing.
        if (!refused_before_storing(err)) {
          e.live_messages += stored.first;
          e.live_tokens += stored.second;
        }
        rp.deliver(std::move(err));
        return;
      }
      auto tried = before;
      if (auto r = turn_reply_of(err))
        tried = joined(std::move(tried), r->compactions);
      // The session that ran out may be a child this turn continued in.
      with_current_id(self, key, turn_handle, old_id,
                      [self, key, err, tried, kept, rp](std::string spent) mutable {
                        reset(self, key, spent, [self, key, err, tried, kept, rp]() mutable {
                          after_reset(self, key, err, tried, kept, rp);
                        });
                      });
    },
    ss_turn_atom_v, std::move(in));
}

} // namespace

void hygiene_then_turn(gateway_ptr self, const std::string& key, turn_input text,
                       reply_promise rp) {
  auto& st = self->state;
  auto& e = st.keys[key];
  // The session's own numbers (it re-checks with the same ones): the incoming message
  // is not counted yet.
  trigger_inputs in;
  in.phase = eval_phase::hygiene_check;
  in.message_count = e.live_messages;
  in.estimated_tokens = e.live_tokens;
  trigger_limits limits;
  limits.hygiene_token_limit = hygiene_token_limit(st.cfg.model.context_length);
  limits.threshold_tokens = 1; // unused by the hygiene phase
  limits.idle_floor_tokens = threshold_floor_tokens;
  limits.context_window = st.cfg.model.context_length;
  limits.long_context_cap_tokens = long_context_window_cap_tokens;
  auto now = st.cfg.clock();
  auto d = evaluate_triggers(in, limits, st.cfg.compression, trigger_state{}, now);
  if (!d.compact) {
    run_turn(self, key, std::move(text), std::move(rp));
    return;
  }
  auto action = gate_hygiene(d.fired, e.hygiene_cooldown_until_ms, now, st.cfg.compression);
  if (action == hygiene_action::skip) {
    st.log().info("key={} session={} event=hygiene_cooling trigger={} until_ms={}",
                  log_quoted(key), e.session_id, to_string(d.fired), e.hygiene_cooldown_until_ms);
    run_turn(self, key, std::move(text), std::move(rp));
    return;
  }
  bool fallback_only = action == hygiene_action::compact_fallback_only;
  request_session<compaction_report>(
    self, key, st.cfg.turn_timeout,
    [self, key, text, rp](compaction_report& r) mutable {
      auto& st = self->state;
      auto& e = st.keys[key];
      e.live_messages = r.messages_after;
      e.live_tokens = r.tokens_after;
      auto result = hygiene_result_of(r.committed, r.used_fallback, r.summary_failed);
      e.hygiene_cooldown_until_ms = hygiene_cooldown_after(
        result, e.hygiene_cooldown_until_ms, st.cfg.clock(), st.cfg.compression);
      if (result == hygiene_result::failed)
        st.log().warn("key={} session={} event=hygiene_summary_failed trigger={} "
                      "cooldown_until_ms={}", log_quoted(key), e.session_id, to_string(r.by),
                      e.hygiene_cooldown_until_ms);
      // A report of a rule that no longer matched ran nothing: not listed.
      bool ran = r.committed || r.nothing_to_compact || r.summary_failed || r.grew;
      run_turn(self, key, std::move(text), std::move(rp), ran ? reports{r} : reports{});
    },
    [self, key, text, rp](caf::error& err) mutable {
      auto& st = self->state;
      auto& e = st.keys[key];
      auto result = err == errc::compaction_locked || err == errc::compaction_in_flight
                      ? hygiene_result::refused
                      : hygiene_result::failed;
      e.hygiene_cooldown_until_ms = hygiene_cooldown_after(
        result, e.hygiene_cooldown_until_ms, st.cfg.clock(), st.cfg.compression);
      st.log().info("key={} session={} event=hygiene_skipped result={} cooldown_until_ms={} "
                    "error={}", log_quoted(key), e.session_id, to_string(result),
                    e.hygiene_cooldown_until_ms, log_quoted(render_error(err)));
      run_turn(self, key, std::move(text), std::move(rp));
    },
    ss_compact_atom_v, d.fired, std::string{}, fallback_only);
}

} // namespace mneme::gateway_detail
