// The gateway's turn path (gateway_state.hpp): the hygiene check (T3/T4) before a
// turn, the turn itself, and the reset that follows an exhausted one.
#include "actors/gateway/gateway_state.hpp"

#include <utility>

#include "policies/client_text.hpp"
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

void run_turn(gateway_ptr self, const std::string& key, turn_input in, reply_promise rp) {
  auto& st = self->state;
  auto& e = st.keys[key];
  e.last_activity_ms = st.cfg.clock();
  auto old_id = e.session_id;
  auto turn_handle = e.handle;
  request_session<turn_reply>(
    self, key, st.cfg.turn_timeout,
    [self, key, old_id, rp](turn_reply& r) mutable {
      follow_child(self, key, old_id, r.session_id);
      record_reply(self, key, r);
      rp.deliver(std::move(r));
    },
    [self, key, old_id, turn_handle, stored = stored_estimate(in), rp](caf::error& err) mutable {
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
      // The session that ran out may be a child this turn continued in.
      with_current_id(self, key, turn_handle, old_id, [self, key, rp](std::string spent) {
        reset(self, key, spent, [self, key, rp]() mutable {
          turn_reply r;
          auto& e = self->state.keys[key];
          r.session_id = e.session_id;
          r.notice = std::string{reset_notice};
          r.live_messages = e.live_messages;
          r.live_tokens = e.live_tokens;
          rp.deliver(std::move(r));
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
      run_turn(self, key, std::move(text), std::move(rp));
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
                    e.hygiene_cooldown_until_ms, render_error(err));
      run_turn(self, key, std::move(text), std::move(rp));
    },
    ss_compact_atom_v, d.fired, std::string{}, fallback_only);
}

} // namespace mneme::gateway_detail
