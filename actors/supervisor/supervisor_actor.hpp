// The supervisor (SPEC §5.3; ARCHITECTURE): spawns (rehydrates) session actors for the
// gateway, monitors them, restarts a crashed one from the store (its transcript and
// trigger state come back from the storage actor), counts compaction exhaustion and
// turns a session's exhaustion report into the `compaction_exhausted` signal to the
// gateway, which then resets the session.
//
// A session that ends normally (evicted, stopped, unreachable) is forgotten; one that
// ends with any other reason is restarted under the same session id, at most
// max_restarts times per session id, and the gateway gets (gw_rebind_atom, session
// id, new handle). The supervisor holds no strong handle to a session: the gateway
// does.
//
// Thread: a CAF event-based actor; talk to it only by messages.
#pragma once

#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "caf/all.hpp"

#include "actors/session/session_actor.hpp"

namespace mneme {

using supervisor_actor = caf::typed_actor<
  // Spawns the actor of stored session `id` and monitors it.
  caf::replies_to<sv_spawn_atom, std::string>::with<session_actor>,
  // From a session: (session id, session key) ran out of compaction attempts.
  caf::reacts_to<sv_exhaust_atom, std::string, std::string>,
  // From a session that continued in a child (compression.in_place: false): (parent
  // id, child id, session key). A crash restarts the child from now on, and the
  // gateway gets (gw_child_atom, parent id, child id, key).
  caf::reacts_to<sv_child_atom, std::string, std::string, std::string>,
  // Whom to send gw_exhausted_atom, gw_rebind_atom and gw_child_atom to.
  caf::reacts_to<sv_gateway_atom, supervisor_gateway_actor>,
  caf::replies_to<sv_stats_atom>::with<supervisor_stats>>;

struct supervisor_params {
  session_params session;        // every session's parameters
  int max_restarts = 3;          // per session id
  std::shared_ptr<spdlog::logger> log; // null = no logging
};

// `deps.supervisor` is ignored: sessions report to the spawned supervisor.
supervisor_actor spawn_supervisor(caf::actor_system& sys, supervisor_params params,
                                  session_deps deps);

} // namespace mneme
