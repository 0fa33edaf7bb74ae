// The gateway; see gateway_actor.hpp.
//
// Decisions where the SPEC is silent:
//   - the hygiene check uses the numbers the session reported with its last answer
//     (after a failed turn: plus the stored user message); the gateway holds no trigger state, so
//     the session re-checks the locks (T3 in a cooldown runs fallback-only there);
//   - a hygiene compaction that fails or is refused does not block the turn;
//   - after a failed hygiene compaction (its summary call failed, or an error other
//     than a refusal) the key's hygiene cooldown runs for
//     compression.hygiene_failure_cooldown_seconds (gateway clock): T3 then compacts
//     fallback-only (the death-spiral guarantee stays), T4 is skipped
//     (policies/hygiene_gate.hpp); a hygiene compaction with an LLM summary clears it;
//   - the first session under a key starts with gateway.system_prompt as its system row;
//   - an idle session is evicted only when it has no turn, compaction or append in
//     flight (the session itself decides, answering ss_evict_atom);
//   - the key -> session mapping is the newest open session stored under the key:
//     the gateway's map is keyed by the key alone, so a process started on an
//     existing database continues exactly the sessions the previous one hosted (the
//     key's stored user is kept); a turn or append by any other user is refused
//     (bad_request "belongs to another user", the owner is not named); an empty user
//     is the key's owner (gateway.default_user when it opens a new session);
//   - gw_local_atom finds the message's index in the live rows the session holds and
//     then asks for T13 around it: a compaction between the two requests (another
//     caller) can shift the index; the session then compacts around the row now there.
#include "actors/gateway/gateway_actor.hpp"

#include <algorithm>
#include <cassert>
#include <unordered_map>
#include <vector>

#include <spdlog/sinks/null_sink.h>

#include "actors/gateway/skills_loader.hpp"
#include "policies/hygiene_gate.hpp"
#include "policies/threshold.hpp"
#include "policies/token_estimate.hpp"
#include "policies/trigger_eval.hpp"
#include "policies/client_text.hpp"

namespace mneme {

namespace {

struct key_entry {
  std::string session_id;        // empty until the session is known
  std::string user_id;
  session_actor handle;          // null while evicted
  bool opening = false;          // spawn / rehydrate / reset in progress
  // Run in order once opened. A vector, not a deque: an empty libstdc++ deque
  // allocates ~600 bytes, paid by every key ever seen (evicted ones included).
  std::vector<std::function<void()>> waiting;
  int64_t live_messages = 0;     // as last reported by the session
  int64_t live_tokens = 0;
  time_ms last_activity_ms = 0;
  int in_flight = 0;             // requests to the session not answered yet
  // Until then no hygiene LLM summary is asked for this key (policies/hygiene_gate.hpp);
  // 0 = none. In memory only: a new process starts without it.
  time_ms hygiene_cooldown_until_ms = 0;
};

struct gateway_state {
  static inline const char* name = "gateway";
  gateway_config cfg;
  storage_actor storage;
  supervisor_actor supervisor;
  std::unordered_map<std::string, key_entry> keys;
  uint64_t evict_generation = 0;

  spdlog::logger& log() {
    static auto null_log = std::make_shared<spdlog::logger>(
      "gateway", std::make_shared<spdlog::sinks::null_sink_mt>());
    return cfg.log ? *cfg.log : *null_log;
  }
};

using gateway_ptr = gateway_actor::stateful_pointer<gateway_state>;
using on_error = std::function<void(caf::error)>;

// The reply of one inbound message: records the gateway's turn metrics once, when it
// is delivered (value or error). Copies share the start time.
class turn_promise {
 public:
  turn_promise(caf::typed_response_promise<turn_reply> rp, std::shared_ptr<runtime_metrics> m)
    : rp_(std::move(rp)), metrics_(std::move(m)), start_(std::chrono::steady_clock::now()) {}

  void deliver(turn_reply r) {
    record(false);
    rp_.deliver(std::move(r));
  }
  void deliver(caf::error err) {
    record(true);
    rp_.deliver(std::move(err));
  }

 private:
  void record(bool failed) {
    if (!metrics_)
      return;
    metrics_->turns.fetch_add(1, std::memory_order_relaxed);
    if (failed)
      metrics_->turn_errors.fetch_add(1, std::memory_order_relaxed);
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - start_);
    metrics_->turn_latency.observe_us(us.count());
  }

  caf::typed_response_promise<turn_reply> rp_;
  std::shared_ptr<runtime_metrics> metrics_;
  std::chrono::steady_clock::time_point start_;
};

void opened(gateway_ptr self, const std::string& key) {
  auto& e = self->state.keys[key];
  e.opening = false;
  auto waiting = std::move(e.waiting);
  e.waiting.clear();
  for (auto& next : waiting)
    next();
}

void failed_to_open(gateway_ptr self, const std::string& key, caf::error err, on_error fail) {
  auto& e = self->state.keys[key];
  self->state.log().error("key={} session={} event=open_failed error={}", log_quoted(key),
                          e.session_id, render_error(err));
  e.opening = false;
  auto waiting = std::move(e.waiting);
  e.waiting.clear();
  fail(std::move(err));
  for (auto& next : waiting) // they retry the open
    next();
}

// Spawns the actor of the key's stored session and reads its numbers.
void attach(gateway_ptr self, const std::string& key, on_error fail) {
  auto& st = self->state;
  auto id = st.keys[key].session_id;
  self->request(st.supervisor, st.cfg.storage_timeout, sv_spawn_atom_v, id)
    .then(
      [self, key, fail](caf::actor& a) {
        auto& st = self->state;
        auto handle = caf::actor_cast<session_actor>(a);
        st.keys[key].handle = handle;
        self->request(handle, st.cfg.storage_timeout, ss_state_atom_v)
          .then(
            [self, key](session_snapshot& s) {
              auto& e = self->state.keys[key];
              e.live_messages = s.live_messages;
              e.live_tokens = s.live_tokens;
              opened(self, key);
            },
            [self, key, fail](caf::error& err) {
              self->state.keys[key].handle = nullptr;
              failed_to_open(self, key, std::move(err), fail);
            });
      },
      [self, key, fail](caf::error& err) { failed_to_open(self, key, std::move(err), fail); });
}

// A new session under `key`, with the system prompt as its first row.
void create(gateway_ptr self, const std::string& key, on_error fail) {
  auto& st = self->state;
  session_record rec;
  rec.user_id = st.keys[key].user_id;
  rec.session_key = key;
  rec.model = st.cfg.model.name;
  self->request(st.storage, st.cfg.storage_timeout, st_new_session_atom_v, rec, st.cfg.clock())
    .then(
      [self, key, fail](session_record& created) {
        auto& st = self->state;
        st.keys[key].session_id = created.id;
        auto prompt = system_prompt_with_skills(st.cfg.gateway.system_prompt,
                                                st.cfg.gateway.skills_dir);
        if (prompt.empty()) {
          attach(self, key, fail);
          return;
        }
        message sys;
        sys.session_id = created.id;
        sys.role = msg_role::system;
        sys.content = std::move(prompt);
        sys.timestamp_ms = st.cfg.clock();
        sys.token_estimate = estimate_message_tokens(sys);
        self->request(st.storage, st.cfg.storage_timeout, st_append_atom_v, sys)
          .then([self, key, fail](int64_t) { attach(self, key, fail); },
                [self, key, fail](caf::error& err) {
                  failed_to_open(self, key, std::move(err), fail);
                });
      },
      [self, key, fail](caf::error& err) { failed_to_open(self, key, std::move(err), fail); });
}

// The newest open session stored under `key` (any user).
session_filter open_session_of(const std::string& key) {
  session_filter filter;
  filter.session_key = key;
  filter.open_only = true;
  filter.limit = 1;
  return filter;
}

// Runs `fn` once the key's session actor is up: spawned, rehydrated or found open in
// the store.
void with_session(gateway_ptr self, const std::string& key, const std::string& user,
                  std::function<void()> fn, on_error fail) {
  auto& st = self->state;
  auto& e = st.keys[key];
  const std::string requester = user.empty() ? st.cfg.gateway.default_user : user;
  if (e.user_id.empty())
    e.user_id = requester;
  // Tenant scope: a key's session is written only by its own user; an empty user
  // means the key's owner (a new key: gateway.default_user), as on the facts route.
  // The refusal does not name the owner.
  fn = [self, key, user, requester, fn = std::move(fn), fail] {
    if (!user.empty() && self->state.keys[key].user_id != requester) {
      fail(caf::make_error(errc::bad_request, "the session under key '" + key
                                                + "' belongs to another user"));
      return;
    }
    fn();
  };
  if (e.opening) {
    e.waiting.push_back([self, key, user, fn, fail] { with_session(self, key, user, fn, fail); });
    return;
  }
  if (e.handle) {
    fn();
    return;
  }
  e.opening = true;
  e.waiting.push_back(std::move(fn));
  if (!e.session_id.empty()) {
    attach(self, key, fail);
    return;
  }
  self->request(st.storage, st.cfg.storage_timeout, st_list_atom_v, open_session_of(key))
    .then(
      [self, key, fail](std::vector<session_record>& found) {
        if (found.empty()) {
          create(self, key, fail);
          return;
        }
        auto& e = self->state.keys[key];
        e.session_id = found.front().id;
        e.user_id = found.front().user_id;
        attach(self, key, fail);
      },
      [self, key, fail](caf::error& err) { failed_to_open(self, key, std::move(err), fail); });
}

// Like with_session, for operations on a session that must exist: known to this
// process or stored open under the key; errc::not_found otherwise (nothing is created).
void with_existing(gateway_ptr self, const std::string& key, std::function<void()> fn,
                   on_error fail) {
  auto& st = self->state;
  if (auto i = st.keys.find(key);
      i != st.keys.end() && (!i->second.session_id.empty() || i->second.opening)) {
    with_session(self, key, i->second.user_id, std::move(fn), std::move(fail));
    return;
  }
  self->request(st.storage, st.cfg.storage_timeout, st_list_atom_v, open_session_of(key))
    .then(
      [self, key, fn, fail](std::vector<session_record>& found) {
        auto& st = self->state;
        auto i = st.keys.find(key);
        bool known = i != st.keys.end() && (!i->second.session_id.empty() || i->second.opening);
        if (!known && found.empty()) {
          fail(caf::make_error(errc::not_found, "no session under key '" + key + "'"));
          return;
        }
        auto& e = st.keys[key];
        if (!known) { // the newest open session, as with_session would find it
          e.session_id = found.front().id;
          e.user_id = found.front().user_id;
        }
        with_session(self, key, e.user_id, fn, fail);
      },
      [fail](caf::error& err) { fail(std::move(err)); });
}

// The reset after exhaustion (SPEC §5.3); `then` runs once the key has its new session.
void reset(gateway_ptr self, const std::string& key, const std::string& old_id,
           std::function<void()> then) {
  auto& st = self->state;
  auto& e = st.keys[key];
  if (e.session_id != old_id) { // already reset
    then();
    return;
  }
  if (e.opening) {
    e.waiting.push_back([self, key, old_id, then] { reset(self, key, old_id, then); });
    return;
  }
  e.opening = true;
  e.waiting.push_back(then);
  st.log().warn("key={} session={} event=reset reason=compaction_exhausted", log_quoted(key),
                old_id);
  self->request(st.storage, st.cfg.storage_timeout, st_reset_atom_v, old_id,
                static_cast<int32_t>(st.cfg.compression.protect_first_n), st.cfg.clock(),
                std::string{"compaction_exhausted"})
    .then(
      [self, key](session_record& fresh) {
        if (auto& m = self->state.cfg.metrics)
          m->exhaustion_resets.fetch_add(1, std::memory_order_relaxed);
        auto& e = self->state.keys[key];
        if (e.handle)
          self->send_exit(e.handle, caf::exit_reason::user_shutdown);
        e.handle = nullptr;
        e.session_id = fresh.id;
        attach(self, key, [](caf::error) {});
      },
      [self, key](caf::error& err) {
        failed_to_open(self, key, std::move(err), [](caf::error) {});
      });
}

// The key's session continued in a child: route the key there (no-op when the key
// already moved on, e.g. a second notice of the same switch or a reset).
void follow_child(gateway_ptr self, const std::string& key, const std::string& parent_id,
                  const std::string& child_id) {
  auto i = self->state.keys.find(key);
  if (i == self->state.keys.end() || i->second.session_id != parent_id || parent_id == child_id)
    return;
  i->second.session_id = child_id;
  self->state.log().info("key={} session={} event=continued_in_child parent={}",
                         log_quoted(key), child_id, parent_id);
}

// Calls `fn` with the id of the session `handle` holds now: with in_place: false a
// compaction may have switched it to a child whose notice (through the supervisor)
// has not arrived yet, so the actor is asked, and the key follows it. `known` is the
// answer when the actor cannot say (in place, gone, no handle). `handle` must be the
// actor that did the work, not the key's current one (a reset may have replaced it).
void with_current_id(gateway_ptr self, const std::string& key, session_actor handle,
                     std::string known, std::function<void(std::string)> fn) {
  auto& st = self->state;
  if (st.cfg.compression.in_place || !handle) {
    fn(std::move(known));
    return;
  }
  self->request(handle, st.cfg.storage_timeout, ss_state_atom_v)
    .then(
      [self, key, known, fn](session_snapshot& s) {
        follow_child(self, key, known, s.record.id);
        fn(s.record.id);
      },
      [known, fn](caf::error&) { fn(known); });
}

void record_reply(gateway_ptr self, const std::string& key, const turn_reply& r) {
  auto& e = self->state.keys[key];
  e.live_messages = r.live_messages;
  e.live_tokens = r.live_tokens;
}

std::string trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos)
    return {};
  auto end = s.find_last_not_of(" \t\r\n");
  return std::string{s.substr(b, end - b + 1)};
}

// The argument of channel command `name` in `text`, or nullopt when `text` is not it.
std::optional<std::string> command_arg(std::string_view text, std::string_view name) {
  if (text.substr(0, name.size()) != name)
    return std::nullopt;
  auto rest = text.substr(name.size());
  if (!rest.empty() && rest.front() != ' ' && rest.front() != '\t' && rest.front() != '\n')
    return std::nullopt;
  return trim(rest);
}

using reply_promise = turn_promise;

void run_turn(gateway_ptr self, const std::string& key, std::string text, reply_promise rp) {
  auto& st = self->state;
  auto& e = st.keys[key];
  ++e.in_flight;
  e.last_activity_ms = st.cfg.clock();
  auto old_id = e.session_id;
  auto turn_handle = e.handle;
  self->request(e.handle, st.cfg.turn_timeout, ss_turn_atom_v, text)
    .then(
      [self, key, old_id, rp](turn_reply& r) mutable {
        auto& e = self->state.keys[key];
        --e.in_flight;
        follow_child(self, key, old_id, r.session_id);
        record_reply(self, key, r);
        rp.deliver(std::move(r));
      },
      [self, key, old_id, turn_handle, text, rp](caf::error& err) mutable {
        auto& e = self->state.keys[key];
        --e.in_flight;
        if (err != errc::compaction_exhausted) {
          // The user's message is stored even when the model failed: count it, so the
          // hygiene check sees the session grow during an outage (SPEC §5.4).
          ++e.live_messages;
          e.live_tokens += estimate_text_tokens(text) + message_overhead_tokens;
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
      });
}

// T3/T4 before the turn: count and local estimate only.
void hygiene_then_turn(gateway_ptr self, const std::string& key, std::string text,
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
  ++e.in_flight;
  self->request(e.handle, st.cfg.turn_timeout, ss_compact_atom_v, d.fired, std::string{},
                fallback_only)
    .then(
      [self, key, text, rp](compaction_report& r) mutable {
        auto& st = self->state;
        auto& e = st.keys[key];
        --e.in_flight;
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
        --e.in_flight;
        auto result = err == errc::compaction_locked || err == errc::compaction_in_flight
                        ? hygiene_result::refused
                        : hygiene_result::failed;
        e.hygiene_cooldown_until_ms = hygiene_cooldown_after(
          result, e.hygiene_cooldown_until_ms, st.cfg.clock(), st.cfg.compression);
        st.log().info("key={} session={} event=hygiene_skipped result={} cooldown_until_ms={} "
                      "error={}", log_quoted(key), e.session_id, to_string(result),
                      e.hygiene_cooldown_until_ms, render_error(err));
        run_turn(self, key, std::move(text), std::move(rp));
      });
}

void channel_compress(gateway_ptr self, const std::string& key, std::string focus,
                      reply_promise rp) {
  auto& st = self->state;
  auto& e = st.keys[key];
  ++e.in_flight;
  auto handle = e.handle;
  self->request(e.handle, st.cfg.turn_timeout, ss_compact_atom_v,
                trigger::t14_channel_command, std::move(focus))
    .then(
      [self, key, handle, rp](compaction_report& r) mutable {
        auto& e = self->state.keys[key];
        --e.in_flight;
        e.live_messages = r.messages_after;
        e.live_tokens = r.tokens_after;
        with_current_id(self, key, handle, e.session_id,
                        [self, key, r, rp](std::string compacted) mutable {
          auto& e = self->state.keys[key];
          turn_reply out;
          out.session_id = std::move(compacted);
          out.notice = r.committed ? "Compacted: " + std::to_string(r.tokens_before) + " -> "
                                       + std::to_string(r.tokens_after) + " tokens, "
                                       + std::to_string(r.archived_rows) + " messages archived"
                                   : std::string{"Nothing to compact."};
          out.compactions.push_back(r);
          out.live_messages = e.live_messages;
          out.live_tokens = e.live_tokens;
          rp.deliver(std::move(out));
        });
      },
      [self, key, rp](caf::error& err) mutable {
        --self->state.keys[key].in_flight;
        rp.deliver(std::move(err));
      });
}

// Restores checkpoint `name` of the key's session (REQUIRES: the session is open) and
// restarts its actor from the store; `done` gets the restored live rows.
void rollback(gateway_ptr self, const std::string& key, std::string name,
              std::function<void(std::vector<message>)> done, on_error fail) {
  auto& st = self->state;
  auto id = st.keys[key].session_id;
  assert(!id.empty());
  self->request(st.storage, st.cfg.storage_timeout, st_rollback_atom_v, id, std::move(name))
    .then(
      [self, key, done](std::vector<message>& live) {
        auto& e = self->state.keys[key];
        // The actor's transcript is stale: restart it from the store.
        if (e.handle)
          self->send_exit(e.handle, caf::exit_reason::user_shutdown);
        e.handle = nullptr;
        e.live_messages = static_cast<int64_t>(live.size());
        done(std::move(live));
      },
      [fail](caf::error& err) { fail(std::move(err)); });
}

void channel_rollback(gateway_ptr self, const std::string& key, std::string name,
                      reply_promise rp) {
  rollback(
    self, key, name,
    [self, key, name, rp](std::vector<message> live) mutable {
      turn_reply out;
      out.session_id = self->state.keys[key].session_id;
      out.notice = "Rolled back to checkpoint '" + name + "'.";
      out.live_messages = static_cast<int64_t>(live.size());
      rp.deliver(std::move(out));
    },
    [rp](caf::error err) mutable { rp.deliver(std::move(err)); });
}

void sweep(gateway_ptr self) {
  auto& st = self->state;
  auto idle_ms = st.cfg.gateway.idle_evict_seconds * 1000;
  auto now = st.cfg.clock();
  for (auto& [key, e] : st.keys) {
    if (!e.handle || e.opening || e.in_flight > 0 || now - e.last_activity_ms < idle_ms)
      continue;
    auto handle = e.handle;
    self->request(handle, st.cfg.storage_timeout, ss_evict_atom_v)
      .then(
        [self, key = key, handle](bool evicted) {
          auto& e = self->state.keys[key];
          if (evicted && e.handle == handle)
            e.handle = nullptr;
        },
        [](caf::error&) {});
  }
}

// `/search QUERY`: recall over the user's own sessions (SPEC §4), answered as a notice
// listing one line per session found; the session's transcript is not touched.
void channel_search(gateway_ptr self, const std::string& key, const std::string& user,
                    const std::string& query, reply_promise rp) {
  auto& st = self->state;
  if (!st.cfg.recall) {
    rp.deliver(caf::make_error(errc::not_found,
                               "/search: recall is unavailable (in-memory database)"));
    return;
  }
  if (query.empty()) {
    rp.deliver(caf::make_error(errc::bad_request,
                               "/search: give a query, e.g. /search deploy plan"));
    return;
  }
  turn_reply reply;
  recall_request req;
  req.user_id = user;
  if (auto i = st.keys.find(key); i != st.keys.end()) {
    reply.session_id = i->second.session_id;
    if (req.user_id.empty())
      req.user_id = i->second.user_id; // the user of the key's session
  }
  if (req.user_id.empty())
    req.user_id = st.cfg.gateway.default_user;
  req.query = query;
  auto started = std::chrono::steady_clock::now();
  auto observe = [metrics = st.cfg.metrics, started] {
    if (metrics)
      metrics->search_latency.observe_us(std::chrono::duration_cast<std::chrono::microseconds>(
                                           std::chrono::steady_clock::now() - started)
                                           .count());
  };
  self->request(st.cfg.recall, st.cfg.search_timeout, rc_search_atom_v, std::move(req))
    .then(
      [rp, reply, query, observe](const recall_result& res) mutable {
        observe();
        reply.notice = "Found " + std::to_string(res.hits.size())
                       + (res.hits.size() == 1 ? " session" : " sessions") + " for \""
                       + query + "\"";
        for (const auto& h : res.hits)
          reply.notice += "\n- session " + h.hit.session_id + " (" + std::string{to_string(h.kind)}
                          + ", " + h.route + "): " + h.snippet;
        rp.deliver(std::move(reply));
      },
      [rp, observe](caf::error& err) mutable {
        observe();
        rp.deliver(std::move(err));
      });
}

// An error handler for a request's .then that forwards to `fail`.
inline auto fail_with(on_error fail) {
  return [fail](caf::error& err) { fail(std::move(err)); };
}

// Asks the session of an existing key (see with_existing) and forwards its answer.
template <class T, class... Ts>
caf::result<T> ask_session(gateway_ptr self, const std::string& key,
                           std::chrono::milliseconds timeout, Ts... xs) {
  auto rp = self->make_response_promise<T>();
  with_existing(
    self, key,
    [self, key, timeout, rp, xs...]() mutable {
      auto& st = self->state;
      auto& e = st.keys[key];
      ++e.in_flight;
      e.last_activity_ms = st.cfg.clock();
      self->request(e.handle, timeout, xs...)
        .then(
          [self, key, rp](T& answer) mutable {
            --self->state.keys[key].in_flight;
            rp.deliver(std::move(answer));
          },
          [self, key, rp](caf::error& err) mutable {
            --self->state.keys[key].in_flight;
            rp.deliver(std::move(err));
          });
    },
    [rp](caf::error err) mutable { rp.deliver(std::move(err)); });
  return rp;
}

void arm_eviction(gateway_ptr self) {
  auto& st = self->state;
  auto secs = st.cfg.gateway.idle_evict_seconds;
  if (secs <= 0)
    return;
  auto period = std::chrono::seconds(std::max<int64_t>(1, secs / 4));
  self->delayed_send(self, period, gw_evict_atom_v, ++st.evict_generation);
}

} // namespace

gateway_actor spawn_gateway(caf::actor_system& sys, gateway_config cfg, storage_actor storage,
                            supervisor_actor supervisor) {
  preload_skills(cfg.gateway.skills_dir, cfg.log); // file reads: here, not on a scheduler thread
  auto gw = sys.spawn([cfg = std::move(cfg), storage, supervisor](
                        gateway_ptr self) mutable -> gateway_actor::behavior_type {
    auto& st = self->state;
    st.cfg = std::move(cfg);
    st.storage = storage;
    st.supervisor = supervisor;
    arm_eviction(self);
    return {
      [self](gw_message_atom, std::string& key, std::string& user,
             std::string& text) -> caf::result<turn_reply> {
        auto promise = self->make_response_promise<turn_reply>();
        reply_promise rp{promise, self->state.cfg.metrics};
        if (key.empty()) {
          rp.deliver(caf::make_error(errc::bad_request, "message: the session key is empty"));
          return promise;
        }
        if (auto q = command_arg(text, "/search")) {
          channel_search(self, key, user, *q, rp);
          return promise;
        }
        auto fail = [rp](caf::error err) mutable { rp.deliver(std::move(err)); };
        with_session(
          self, key, user,
          [self, key, text, rp]() mutable {
            if (auto focus = command_arg(text, "/compress"))
              channel_compress(self, key, *focus, rp);
            else if (auto name = command_arg(text, "/rollback"); name && !name->empty())
              channel_rollback(self, key, *name, rp);
            else
              hygiene_then_turn(self, key, text, rp);
          },
          fail);
        return promise;
      },
      [self](gw_command_atom, std::string& key, trigger by,
             std::string& focus) -> caf::result<compaction_report> {
        return ask_session<compaction_report>(self, key, self->state.cfg.turn_timeout,
                                              ss_compact_atom_v, by, focus);
      },
      [self](gw_state_atom, std::string& key) -> caf::result<session_snapshot> {
        return ask_session<session_snapshot>(self, key, self->state.cfg.storage_timeout,
                                             ss_state_atom_v);
      },
      [self](gw_append_atom, std::string& key, std::string& user,
             message& row) -> caf::result<int64_t> {
        if (key.empty())
          return caf::make_error(errc::bad_request, "append: the session key is empty");
        auto rp = self->make_response_promise<int64_t>();
        with_session(
          self, key, user,
          [self, key, row, rp]() mutable {
            auto& st = self->state;
            auto& e = st.keys[key];
            row.session_id = e.session_id;
            ++e.in_flight;
            e.last_activity_ms = st.cfg.clock();
            self->request(e.handle, st.cfg.storage_timeout, ss_append_atom_v, std::move(row))
              .then(
                [self, key, rp](int64_t id) mutable {
                  auto& e = self->state.keys[key];
                  --e.in_flight;
                  ++e.live_messages; // the hygiene check sees appended rows too
                  rp.deliver(id);
                },
                [self, key, rp](caf::error& err) mutable {
                  --self->state.keys[key].in_flight;
                  rp.deliver(std::move(err));
                });
          },
          [rp](caf::error err) mutable { rp.deliver(std::move(err)); });
        return rp;
      },
      [self](gw_live_atom, std::string& key) -> caf::result<std::vector<message>> {
        return ask_session<std::vector<message>>(self, key, self->state.cfg.storage_timeout,
                                                 ss_live_atom_v);
      },
      [self](gw_local_atom, std::string& key, int64_t message_id,
             int64_t radius) -> caf::result<compaction_report> {
        if (radius < 0)
          return caf::make_error(errc::bad_request, "local compaction: radius "
                                                      + std::to_string(radius) + " is negative");
        auto rp = self->make_response_promise<compaction_report>();
        auto fail = [rp](caf::error err) mutable { rp.deliver(std::move(err)); };
        with_existing(
          self, key,
          [self, key, message_id, radius, rp, fail]() mutable {
            auto& st = self->state;
            self->request(st.keys[key].handle, st.cfg.storage_timeout, ss_live_atom_v)
              .then(
                [self, key, message_id, radius, rp, fail](std::vector<message>& live) mutable {
                  auto it = std::find_if(live.begin(), live.end(), [&](const message& m) {
                    return m.id == message_id;
                  });
                  if (it == live.end()) {
                    fail(caf::make_error(errc::not_found,
                                         "message " + std::to_string(message_id)
                                           + " is not in the live context of key '" + key
                                           + "'"));
                    return;
                  }
                  auto index = static_cast<int64_t>(it - live.begin());
                  auto& st = self->state;
                  auto& e = st.keys[key];
                  if (!e.handle) { // evicted or rolled back meanwhile
                    fail(caf::make_error(errc::overloaded,
                                         "local compaction: the session restarted, retry"));
                    return;
                  }
                  ++e.in_flight;
                  self->request(e.handle, st.cfg.turn_timeout, ss_local_atom_v, index, radius)
                    .then(
                      [self, key, rp](compaction_report& r) mutable {
                        auto& e = self->state.keys[key];
                        --e.in_flight;
                        e.live_messages = r.messages_after;
                        e.live_tokens = r.tokens_after;
                        rp.deliver(std::move(r));
                      },
                      [self, key, rp](caf::error& err) mutable {
                        --self->state.keys[key].in_flight;
                        rp.deliver(std::move(err));
                      });
                },
                fail_with(fail));
          },
          fail);
        return rp;
      },
      [self](gw_checkpoint_atom, std::string& key,
             std::string& name) -> caf::result<checkpoint_record> {
        auto rp = self->make_response_promise<checkpoint_record>();
        auto fail = [rp](caf::error err) mutable { rp.deliver(std::move(err)); };
        with_existing(
          self, key,
          [self, key, name, rp, fail]() mutable {
            auto& st = self->state;
            self->request(st.storage, st.cfg.storage_timeout, st_checkpoint_atom_v,
                          st.keys[key].session_id, name, st.cfg.clock())
              .then([rp](checkpoint_record& c) mutable { rp.deliver(std::move(c)); },
                    fail_with(fail));
          },
          fail);
        return rp;
      },
      [self](gw_rollback_atom, std::string& key,
             std::string& name) -> caf::result<std::vector<message>> {
        auto rp = self->make_response_promise<std::vector<message>>();
        auto fail = [rp](caf::error err) mutable { rp.deliver(std::move(err)); };
        with_existing(
          self, key,
          [self, key, name, rp, fail]() mutable {
            rollback(
              self, key, name,
              [rp](std::vector<message> live) mutable { rp.deliver(std::move(live)); }, fail);
          },
          fail);
        return rp;
      },
      [self](gw_exhausted_atom, std::string& session_id, std::string& key) {
        auto& st = self->state;
        auto i = st.keys.find(key);
        if (i == st.keys.end() || i->second.session_id != session_id)
          return;
        reset(self, key, session_id, [] {});
      },
      [self](gw_child_atom, std::string& parent_id, std::string& child_id, std::string& key) {
        follow_child(self, key, parent_id, child_id);
      },
      [self](gw_rebind_atom, std::string& session_id, caf::actor& a) {
        for (auto& [key, e] : self->state.keys)
          if (e.session_id == session_id)
            e.handle = caf::actor_cast<session_actor>(a);
      },
      [self](gw_evict_atom, uint64_t generation) {
        if (generation != 0 && generation != self->state.evict_generation)
          return;
        sweep(self);
        if (generation != 0)
          arm_eviction(self);
      },
    };
  });
  caf::anon_send(supervisor, sv_gateway_atom_v, caf::actor_cast<caf::actor>(gw));
  return gw;
}

} // namespace mneme
