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

#include "actors/gateway/gateway_state.hpp"
#include "actors/gateway/skills_loader.hpp"
#include "policies/client_text.hpp"
#include "policies/tool_call_rules.hpp"

namespace mneme {

namespace gateway_detail {

namespace {

// An error handler for a request's .then that forwards to `fail`.
inline auto fail_with(on_error fail) {
  return [fail](caf::error& err) { fail(std::move(err)); };
}

// Asks the session of an existing key (see with_existing; `owner` "" = any user's) and
// forwards its answer.
template <class T, class... Ts>
caf::result<T> ask_session(gateway_ptr self, const std::string& key, const std::string& owner,
                           std::chrono::milliseconds timeout, Ts... xs) {
  auto rp = self->make_response_promise<T>();
  with_existing(
    self, key, owner,
    [self, key, timeout, rp, xs...]() mutable {
      auto& st = self->state;
      st.keys[key].last_activity_ms = st.cfg.clock();
      request_session<T>(
        self, key, timeout, [rp](T& answer) mutable { rp.deliver(std::move(answer)); },
        [rp](caf::error& err) mutable { rp.deliver(std::move(err)); }, xs...);
    },
    [rp](caf::error err) mutable { rp.deliver(std::move(err)); });
  return rp;
}

// One inbound turn: a channel command (a user message that sends no tools), or a turn
// after the hygiene check.
caf::result<turn_reply> inbound_turn(gateway_ptr self, const std::string& key,
                                     const std::string& user, turn_input in) {
  if (in.idempotency_checked) // a door's: decided under its gw_idem_atom mark
    in.idempotency_checked = !in.idempotency_key.empty();
  else if (!in.idempotency_key.empty() && !in.is_continuation())
    return idempotent_turn_for(self, key, user, std::move(in));
  else
    in.idempotency_key.clear();
  auto promise = self->make_response_promise<turn_reply>();
  start_turn(self, key, user, std::move(in), reply_promise{promise, self->state.cfg.metrics});
  return promise;
}

} // namespace

void start_turn(gateway_ptr self, const std::string& key, const std::string& user,
                turn_input in, reply_promise rp) {
  if (key.empty()) {
    rp.deliver(caf::make_error(errc::bad_request, "message: the session key is empty"));
    return;
  }
  bool commands = !in.is_continuation() && !in.set_tools;
  if (commands) {
    if (auto q = command_arg(in.content, "/search")) {
      channel_search(self, key, user, *q, rp);
      return;
    }
  }
  auto fail = [rp](caf::error err) mutable { rp.deliver(std::move(err)); };
  with_session(
    self, key, user,
    [self, key, in = std::move(in), commands, rp]() mutable {
      if (commands) {
        if (auto focus = command_arg(in.content, "/compress")) {
          channel_compress(self, key, *focus, rp);
          return;
        }
        if (auto name = command_arg(in.content, "/rollback"); name && !name->empty()) {
          channel_rollback(self, key, *name, rp);
          return;
        }
      }
      hygiene_then_turn(self, key, std::move(in), rp);
    },
    fail);
}

} // namespace gateway_detail

gateway_actor spawn_gateway(caf::actor_system& sys, gateway_config cfg,
                            gateway_storage_actor storage, gateway_supervisor_actor supervisor) {
  preload_skills(cfg.gateway.skills_dir, cfg.log); // file reads: here, not on a scheduler thread
  using namespace gateway_detail;
  auto gw = sys.spawn([cfg = std::move(cfg), storage, supervisor](
                        gateway_ptr self) mutable -> gateway_actor::behavior_type {
    auto& st = self->state;
    st.cfg = std::move(cfg);
    st.storage = storage;
    st.supervisor = supervisor;
    arm_eviction(self);
    arm_lease_renewal(self);
    // The operations of the behavior below that take an `owner` ("" = any user's).
    auto local_compaction = [self](const std::string& key, int64_t message_id, int64_t radius,
                                   const std::string& owner) -> caf::result<compaction_report> {
        if (radius < 0)
          return caf::make_error(errc::bad_request, "local compaction: radius "
                                                      + std::to_string(radius) + " is negative");
        auto rp = self->make_response_promise<compaction_report>();
        auto fail = [rp](caf::error err) mutable { rp.deliver(std::move(err)); };
        with_existing(
          self, key, owner,
          [self, key, message_id, radius, rp, fail]() mutable {
            auto& st = self->state;
            then_forgetting(self,
                self->request(st.keys[key].handle, st.cfg.storage_timeout, ss_live_atom_v),
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
                  if (!st.keys[key].handle) { // evicted or rolled back meanwhile
                    fail(caf::make_error(errc::overloaded,
                                         "local compaction: the session restarted, retry"));
                    return;
                  }
                  request_session<compaction_report>(
                    self, key, st.cfg.turn_timeout,
                    [self, key, rp](compaction_report& r) mutable {
                      auto& e = self->state.keys[key];
                      e.live_messages = r.messages_after;
                      e.live_tokens = r.tokens_after;
                      rp.deliver(std::move(r));
                    },
                    [rp](caf::error& err) mutable { rp.deliver(std::move(err)); },
                    ss_local_atom_v, index, radius);
                },
                fail_with(fail));
          },
          fail);
        return rp;
    };
    auto checkpoint = [self](const std::string& key, const std::string& name,
                             const std::string& owner) -> caf::result<checkpoint_record> {
        auto rp = self->make_response_promise<checkpoint_record>();
        auto fail = [rp](caf::error err) mutable { rp.deliver(std::move(err)); };
        with_existing(
          self, key, owner,
          [self, key, name, rp, fail]() mutable {
            auto& st = self->state;
            then_forgetting(
              self,
              self->request(st.storage, st.cfg.storage_timeout, st_checkpoint_atom_v,
                            st.keys[key].session_id, name, st.cfg.clock()),
              [rp](checkpoint_record& c) mutable { rp.deliver(std::move(c)); }, fail_with(fail));
          },
          fail);
        return rp;
    };
    auto rollback_to_checkpoint = [self](const std::string& key, const std::string& name,
                                         const std::string& owner)
      -> caf::result<std::vector<message>> {
        auto rp = self->make_response_promise<std::vector<message>>();
        auto fail = [rp](caf::error err) mutable { rp.deliver(std::move(err)); };
        with_existing(
          self, key, owner,
          [self, key, name, rp, fail]() mutable {
            rollback(
              self, key, name,
              [rp](std::vector<message> live) mutable { rp.deliver(std::move(live)); }, fail);
          },
          fail);
        return rp;
    };
    auto rollback_branch = [self](const std::string& key, int64_t last_kept_id,
                                  const std::string& label, const std::string& owner)
      -> caf::result<std::vector<message>> {
        auto rp = self->make_response_promise<std::vector<message>>();
        auto fail = [rp](caf::error err) mutable { rp.deliver(std::move(err)); };
        with_existing(
          self, key, owner,
          [self, key, last_kept_id, label, rp, fail]() mutable {
            rollback_after_row(
              self, key, last_kept_id, label,
              [rp](std::vector<message> live) mutable { rp.deliver(std::move(live)); }, fail);
          },
          fail);
        return rp;
    };
    return {
      [self](gw_message_atom, std::string& key, std::string& user,
             std::string& text) -> caf::result<turn_reply> {
        return inbound_turn(self, key, user, turn_input::text(std::move(text)));
      },
      [self](gw_turn_atom, std::string& key, std::string& user,
             turn_input& in) -> caf::result<turn_reply> {
        return inbound_turn(self, key, user, std::move(in));
      },
      [self](gw_context_atom, std::string& key, std::string& user,
             context_request& rq) -> caf::result<context_reply> {
        return context_request_for(self, key, user, std::move(rq));
      },
      [self](gw_command_atom, std::string& key, trigger by,
             std::string& focus) -> caf::result<compaction_report> {
        return ask_session<compaction_report>(self, key, std::string{},
                                              self->state.cfg.turn_timeout, ss_compact_atom_v,
                                              by, focus);
      },
      [self](gw_command_atom, std::string& key, trigger by, std::string& focus,
             std::string& owner) -> caf::result<compaction_report> {
        return ask_session<compaction_report>(self, key, owner, self->state.cfg.turn_timeout,
                                              ss_compact_atom_v, by, focus);
      },
      [self](gw_state_atom, std::string& key) -> caf::result<session_snapshot> {
        return ask_session<session_snapshot>(self, key, std::string{},
                                             self->state.cfg.storage_timeout, ss_state_atom_v);
      },
      [self](gw_state_atom, std::string& key,
             std::string& owner) -> caf::result<session_snapshot> {
        return ask_session<session_snapshot>(self, key, owner, self->state.cfg.storage_timeout,
                                             ss_state_atom_v);
      },
      [self](gw_append_atom, std::string& key, std::string& user,
             message& row) -> caf::result<int64_t> {
        auto rp = self->make_response_promise<int64_t>();
        row.idempotency_key.clear(); // stored only through gw_idem_atom
        append_for(
          self, key, user, std::move(row), [rp](int64_t id) mutable { rp.deliver(id); },
          [rp](caf::error err) mutable { rp.deliver(std::move(err)); });
        return rp;
      },
      [self](gw_idem_atom, std::string& key, std::string& user, message& row,
             std::string& idem) -> caf::result<idempotent_append> {
        return idempotent_append_for(self, key, user, std::move(row), idem);
      },
      [self](gw_idem_atom, std::string& key, std::string& idem,
             int64_t limit) -> caf::result<std::vector<message>> {
        return idempotent_claim_for(self, key, idem, limit);
      },
      [self](gw_idem_atom, std::string& key, std::string& idem) {
        unmark_idempotent_running(self, key, idem);
      },
      [self](gw_live_atom, std::string& key) -> caf::result<std::vector<message>> {
        return ask_session<std::vector<message>>(self, key, std::string{},
                                                 self->state.cfg.storage_timeout, ss_live_atom_v);
      },
      [self](gw_live_atom, std::string& key,
             std::string& owner) -> caf::result<std::vector<message>> {
        return ask_session<std::vector<message>>(self, key, owner,
                                                 self->state.cfg.storage_timeout, ss_live_atom_v);
      },
      [local_compaction](gw_local_atom, std::string& key, int64_t message_id,
                         int64_t radius) -> caf::result<compaction_report> {
        return local_compaction(key, message_id, radius, std::string{});
      },
      [local_compaction](gw_local_atom, std::string& key, int64_t message_id, int64_t radius,
                         std::string& owner) -> caf::result<compaction_report> {
        return local_compaction(key, message_id, radius, owner);
      },
      [checkpoint](gw_checkpoint_atom, std::string& key,
                   std::string& name) -> caf::result<checkpoint_record> {
        return checkpoint(key, name, std::string{});
      },
      [checkpoint](gw_checkpoint_atom, std::string& key, std::string& name,
                   std::string& owner) -> caf::result<checkpoint_record> {
        return checkpoint(key, name, owner);
      },
      [rollback_to_checkpoint](gw_rollback_atom, std::string& key,
                               std::string& name) -> caf::result<std::vector<message>> {
        return rollback_to_checkpoint(key, name, std::string{});
      },
      [rollback_to_checkpoint](gw_rollback_atom, std::string& key, std::string& name,
                               std::string& owner) -> caf::result<std::vector<message>> {
        return rollback_to_checkpoint(key, name, owner);
      },
      [rollback_branch](gw_rollback_atom, std::string& key, int64_t last_kept_id,
                        std::string& label) -> caf::result<std::vector<message>> {
        return rollback_branch(key, last_kept_id, label, std::string{});
      },
      [rollback_branch](gw_rollback_atom, std::string& key, int64_t last_kept_id,
                        std::string& label, std::string& owner)
        -> caf::result<std::vector<message>> {
        return rollback_branch(key, last_kept_id, label, owner);
      },
      [self](gw_exhausted_atom, std::string& session_id, std::string& key) {
        auto& st = self->state;
        auto i = st.keys.find(key);
        if (i == st.keys.end() || i->second.session_id != session_id)
          return;
        if (i->second.replaying_in == session_id) { // the re-run after a reset ran out
          st.log().warn("key={} session={} event=replay_exhausted reset=skipped",
                        log_quoted(key), session_id);
          return;
        }
        reset(self, key, session_id, [] {});
      },
      [self](gw_child_atom, std::string& parent_id, std::string& child_id, std::string& key) {
        follow_child(self, key, parent_id, child_id);
      },
      [self](gw_rebind_atom, std::string& session_id, session_actor& a) {
        for (auto& [key, e] : self->state.keys)
          if (e.session_id == session_id)
            e.handle = a;
      },
      [self](gw_evict_atom, uint64_t generation) {
        if (generation != 0 && generation != self->state.evict_generation)
          return;
        sweep(self);
        if (generation != 0)
          arm_eviction(self);
      },
      [self](gw_evict_atom) -> caf::result<int64_t> {
        auto rp = self->make_response_promise<int64_t>();
        sweep(self, [rp](int64_t evicted) mutable { rp.deliver(evicted); });
        return rp;
      },
      [self](gw_lease_atom, uint64_t generation) { renew_leases(self, generation); },
    };
  });
  caf::anon_send(supervisor, sv_gateway_atom_v, supervisor_gateway_actor{gw});
  return gw;
}

} // namespace mneme
