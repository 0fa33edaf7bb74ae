// The soak driver: one event-based actor that plays every simulated user. Each user
// sends a message through the gateway (gw_message_atom: one turn against the model, or
// for a tool result gw_append_atom),
// waits for the reply, thinks for a while (the scenario's think_ms) and sends the next;
// all users at once, each with its turns in order. Every message and reply goes into
// the shared ledger. When the ledger's `stopping` flag is set no new message leaves;
// the turns in flight finish (ledger.in_flight counts them).
//
// A prose turn offers the users' tools with a share mix.tools_offered_share and then plays
// the model's tool loop to its end (soak_agent_driver.hpp, gw_turn_atom).
// A tool turn is two appends without a model call (gw_append_atom): the assistant's
// tool call and the tagged tool result; the user's next message is the turn after them.
//
// Thread: a CAF actor; the ledger is its only shared state. Stop it with send_exit
// once ledger.in_flight is 0 (or the drain gave up).
#pragma once

#include <chrono>
#include <memory>

#include "actors/gateway/gateway_actor.hpp"
#include "apps/common/soak/soak_ledger.hpp"
#include "apps/common/soak/soak_scenario.hpp"
#include "caf/all.hpp"

namespace mneme::soak {

// Seconds elapsed since `t0` (the drivers' progress and think-time clock).
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct driver_params {
  gateway_actor gateway;
  std::shared_ptr<soak_ledger> ledger;
  int64_t users = 1;
  uint64_t seed = 1;
  int_range think_ms;
  message_mix mix;
  std::chrono::milliseconds turn_timeout{330000};
  std::chrono::steady_clock::time_point t0;  // the run's time origin
};

// The session key and the user id of simulated user `user`: one key per user, and each
// user its own tenant, so a recall search sees only that user's sessions.
std::string user_key(int64_t user);
std::string user_id(int64_t user);

// "llm_unavailable" for "mneme::llm_unavailable: ...", else CAF's own name: the name a
// failed call is counted under.
std::string error_name(const caf::error& err);

// Spawns the driver; the first message of every user leaves within one think time.
caf::actor spawn_driver(caf::actor_system& sys, driver_params params);

} // namespace mneme::soak
