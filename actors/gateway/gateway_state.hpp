// The gateway's state and the steps its handlers are made of, shared by its units:
// gateway_keys.cpp (the key table: open, attach, create, reset, child switches,
// eviction), gateway_turns.cpp (turns and the hygiene check before them),
// gateway_commands.cpp (channel commands: /compress, /rollback, /search),
// gateway_context.cpp (the context service's requests) and
// gateway_actor.cpp (the behaviour). Internal to actors/gateway: nothing else includes
// it. Touched only by the gateway actor, inside its handlers.
//
// Invariants (between handlers):
//   1. keys[k].in_flight == the requests to k's session actor not answered yet; every
//      such request goes through request_session, which keeps the count.
//   2. opening implies handle is null or about to be replaced, and `waiting` runs in
//      order once the open ends (success or failure).
//   3. keys holds the resident keys and those with work in progress; an evicted key's
//      entry is dropped when nothing in it is beyond what the store answers
//      (gateway_keys.cpp, forgettable), so a million evicted sessions cost no entry.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <spdlog/logger.h>
#include <spdlog/sinks/null_sink.h>

#include "actors/gateway/gateway_actor.hpp"
#include "actors/request_timeouts.hpp"

namespace mneme::gateway_detail {

struct key_entry {
  std::string session_id;        // empty until the session is known
  std::string user_id;
  session_actor handle;          // null while evicted
  bool opening = false;          // spawn / rehydrate / reset in progress
  // Run in order once opened. A vector, not a deque: an empty libstdc++ deque
  // allocates ~600 bytes, paid by every key in the table.
  std::vector<std::function<void()>> waiting;
  int64_t live_messages = 0;     // as last reported by the session
  int64_t live_tokens = 0;
  time_ms last_activity_ms = 0;
  int in_flight = 0;             // requests to the session not answered yet
  // Until then no hygiene LLM summary is asked for this key (policies/hygiene_gate.hpp);
  // 0 = none. In memory only: a new process starts without it.
  time_ms hygiene_cooldown_until_ms = 0;
  // The session re-running a message after a reset (gateway_turns.cpp): the
  // supervisor's exhaustion signal for it does not reset the key again (re-run once,
  // no reset loop); cleared when the re-run answered. A later turn's own exhaustion
  // still resets (gateway_turns.cpp calls reset itself). Empty = none.
  std::string replaying_in;
  // Node mode: the fencing token of the key's lease this node holds; 0 = none (the
  // key is opened only after acquiring it, gateway_leases.cpp).
  int64_t lease_token = 0;
  // Node mode: the session actor of a lost lease, still answering requests sent
  // before the loss (its writes are refused: the key is no longer fenced for this
  // node). Stopped once in_flight is 0; until then the key is not opened again.
  session_actor retiring;
};

struct gateway_state {
  static inline const char* name = "gateway";
  gateway_config cfg;
  gateway_storage_actor storage;
  gateway_supervisor_actor supervisor;
  std::unordered_map<std::string, key_entry> keys;
  uint64_t evict_generation = 0;
  uint64_t lease_generation = 0;
  // (key, Idempotency-Key) of the idempotent requests running (gateway_appends.cpp).
  std::unordered_set<std::string> idempotent_running;

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
    delivered();
    rp_.deliver(std::move(r));
  }
  void deliver(caf::error err) {
    record(true);
    delivered();
    rp_.deliver(std::move(err));
  }
  // Runs `f` when the reply is delivered (copies made after this call run it too).
  void on_delivered(std::function<void()> f) { on_delivered_ = std::move(f); }

 private:
  void delivered() {
    if (on_delivered_)
      on_delivered_();
  }
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
  std::function<void()> on_delivered_;
  std::chrono::steady_clock::time_point start_;
};

using reply_promise = turn_promise;

// gateway_leases.cpp (node mode; every function a no-op without cfg.leases)
// Takes the key's lease (REQUIRES: opening), then open_stored; a key served by another
// node fails the open with errc::lease_elsewhere carrying that node's URL.
void acquire_then_open(gateway_ptr self, const std::string& key, on_error fail);
// The key's lease is gone: its writes are no longer fenced for this node (refused),
// its session actor stops once the requests it holds are answered (retiring), and the
// next request acquires again and rehydrates from the store.
void lose_lease(gateway_ptr self, const std::string& key);
// Stops the key's retiring session actor when nothing is in flight, then runs the
// requests that waited for it.
void retire_when_idle(gateway_ptr self, const std::string& key);
// Gives the key's lease up (an evicted session): another node may take it at once.
void release_lease(gateway_ptr self, const std::string& key);
// Renews every lease held; the keys lost are dropped (lose_lease). Then re-arms.
void renew_leases(gateway_ptr self, uint64_t generation);
void arm_lease_renewal(gateway_ptr self);

// Sends `xs...` to the key's session actor (REQUIRES: it is up) as a request counted
// in the key's in_flight until it is answered; `on_value(T&)` or `on_fail(caf::error&)`
// runs after the count is dropped.
template <class T, class OnValue, class OnFail, class... Ts>
void request_session(gateway_ptr self, const std::string& key,
                     std::chrono::milliseconds timeout, OnValue on_value, OnFail on_fail,
                     Ts&&... xs) {
  auto& e = self->state.keys[key];
  ++e.in_flight;
  then_forgetting(self, self->request(e.handle, timeout, std::forward<Ts>(xs)...),
      [self, key, on_value](T& answer) mutable {
        --self->state.keys[key].in_flight;
        on_value(answer);
        retire_when_idle(self, key);
      },
      [self, key, on_fail](caf::error& err) mutable {
        --self->state.keys[key].in_flight;
        if (err == errc::lease_lost) // a write was fenced off: the key is not ours
          lose_lease(self, key);
        on_fail(err);
        retire_when_idle(self, key);
      });
}

// gateway_keys.cpp
// The refusal of a request whose user is not the owner of the key's session
// (errc::foreign_session; the owner is not named).
caf::error foreign_session_error(const std::string& key);
// Runs `fn` once the key's session actor is up: spawned, rehydrated, created or found
// open in the store. A user other than the key's owner is refused (foreign_session), as
// is a new session under a key that is the id of another user's stored session.
void with_session(gateway_ptr self, const std::string& key, const std::string& user,
                  std::function<void()> fn, on_error fail);
// The open itself (REQUIRES: opening, the lease held in node mode): the key's known
// session attached, else the newest open one stored under the key, else a new one.
void open_stored(gateway_ptr self, const std::string& key, on_error fail);
void failed_to_open(gateway_ptr self, const std::string& key, caf::error err, on_error fail);
// Like with_session, for a session that must exist: known to this process or stored
// open under the key; errc::not_found otherwise (nothing is created). `owner` not empty:
// the session must be that user's (errc::foreign_session otherwise), checked on the
// session `fn` then works on.
void with_existing(gateway_ptr self, const std::string& key, const std::string& owner,
                   std::function<void()> fn, on_error fail);
// The reset after exhaustion (SPEC §5.3); `then` runs once the key has its new session.
void reset(gateway_ptr self, const std::string& key, const std::string& old_id,
           std::function<void()> then);
// Routes the key to `child_id` when it still names `parent_id`.
void follow_child(gateway_ptr self, const std::string& key, const std::string& parent_id,
                  const std::string& child_id);
// Calls `fn` with the id of the session `handle` holds now (see gateway_keys.cpp).
void with_current_id(gateway_ptr self, const std::string& key, session_actor handle,
                     std::string known, std::function<void(std::string)> fn);
// Asks every idle session (no turn in flight, idle for gateway.idle_evict_seconds) to
// leave memory; `done` (may be empty) gets how many did, once every one has answered.
void sweep(gateway_ptr self, std::function<void(int64_t)> done = {});
// Schedules the next sweep (a quarter of the idle time, at least 1 s); none when
// eviction is off.
void arm_eviction(gateway_ptr self);

// gateway_appends.cpp
// Appends `row` to the key's session (opened or created for `user`): its id.
void append_for(gateway_ptr self, const std::string& key, const std::string& user, message row,
                std::function<void(int64_t)> ok, on_error fail);
// A turn with an Idempotency-Key (gw_turn_atom; see the file's comment).
caf::result<turn_reply> idempotent_turn_for(gateway_ptr self, const std::string& key,
                                            const std::string& user, turn_input in);
// The same with an Idempotency-Key (gw_idem_atom; see the file's comment).
caf::result<idempotent_append> idempotent_append_for(gateway_ptr self, const std::string& key,
                                                     const std::string& user, message row,
                                                     const std::string& idem);
// A door's key checked: marked running, then its stored rows (gw_idem_atom with a limit).
caf::result<std::vector<message>> idempotent_claim_for(gateway_ptr self, const std::string& key,
                                                       const std::string& idem, int64_t limit);
// Drops the in-flight mark of (key, idempotency key).
void unmark_idempotent_running(gateway_ptr self, const std::string& key,
                               const std::string& idem);

// gateway_actor.cpp
// An inbound turn (gw_message_atom, gw_turn_atom): channel commands, else the key's
// session opened for `user`, then hygiene_then_turn; answered through `rp`.
void start_turn(gateway_ptr self, const std::string& key, const std::string& user,
                turn_input in, reply_promise rp);

// gateway_turns.cpp
// T3/T4 before the turn (count and local estimate only), then the turn.
void hygiene_then_turn(gateway_ptr self, const std::string& key, turn_input text,
                       reply_promise rp);

// gateway_context.cpp
// A context service request for the key's session (gw_context_atom).
caf::result<context_reply> context_request_for(gateway_ptr self, const std::string& key,
                                               const std::string& user, context_request rq);

// gateway_commands.cpp
// The argument of channel command `name` in `text`, or nullopt when `text` is not it.
std::optional<std::string> command_arg(std::string_view text, std::string_view name);
void channel_compress(gateway_ptr self, const std::string& key, std::string focus,
                      reply_promise rp);
// Restores checkpoint `name` of the key's session (REQUIRES: the session is open) and
// restarts its actor from the store; `done` gets the restored live rows.
void rollback(gateway_ptr self, const std::string& key, std::string name,
              std::function<void(std::vector<message>)> done, on_error fail);
// The same to a row of the key's session: every row after `last_kept_id` is rolled
// back (sqlite_store::rollback_after_row; `label` retires later checkpoints).
void rollback_after_row(gateway_ptr self, const std::string& key, int64_t last_kept_id,
                        std::string label, std::function<void(std::vector<message>)> done,
                        on_error fail);
void channel_rollback(gateway_ptr self, const std::string& key, std::string name,
                      reply_promise rp);
void channel_search(gateway_ptr self, const std::string& key, const std::string& user,
                    const std::string& query, reply_promise rp);

} // namespace mneme::gateway_detail
