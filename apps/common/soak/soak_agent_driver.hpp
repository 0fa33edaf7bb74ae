// The in-process half of the simulated users' model tool loops (soak_agent.hpp): plays one
// agent_loop through the gateway (gw_turn_atom), one call in flight, from the driver
// actor (soak_driver.hpp). Kept apart from the driver so the tool-loop play can change
// without touching the plain turns.
//
// Thread: runs inside the driver actor's handlers only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "actors/gateway/gateway_actor.hpp"
#include "apps/common/soak/soak_agent.hpp"
#include "caf/all.hpp"

namespace mneme::soak {

// Sends `in` for `loop` and follows the loop to its end (text, round cap, error); then
// calls done(left_pending) once, left_pending as agent_loop::on_error returned (false
// after a text answer).
void play_agent_loop(caf::event_based_actor* self, const gateway_actor& gateway,
                     std::chrono::milliseconds turn_timeout, std::shared_ptr<agent_loop> loop,
                     turn_input in, std::function<void(bool left_pending)> done);

} // namespace mneme::soak
