// The lease actor (node mode, issue 26 item 4; docs/scale-out.md "Leases"): the one
// place a node takes, renews and gives up session-key leases, on a PostgreSQL
// connection of its own (store/pg/pg_leases.hpp), so renewals never queue behind the
// storage actor's writes. Detached (libpqxx blocks); only the gateway talks to it.
//
// It remembers the leases it granted (key -> token). ls_renew extends them all in
// one statement and answers the keys lost since the last renewal (another node took
// them over after they expired, e.g. while this node was paused); they are forgotten.
// The gateway renews every policies/lease_policy lease_renew_period_ms.
//
// Stopped cleanly (an exit message: the runtime stops it last, after the storage
// actor), it gives every lease it holds up, so the other nodes take those keys at once
// instead of after gateway.lease_seconds. A killed node's leases expire.
// Metrics (runtime_metrics, may be null): leases_held, leases_acquired,
// leases_taken_over, leases_lost.
// Thread: its own; talk to it only by messages.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "caf/fwd.hpp"
#include "caf/replies_to.hpp"
#include "caf/typed_actor.hpp"

#include "actors/runtime_metrics.hpp"
#include "messages/mneme_types.hpp"
#include "store/pg/pg_leases.hpp"

namespace mneme {

using lease_actor = caf::typed_actor<
  // (key) -> granted with a new token, or the live owner and its URL. A lease row
  // locked by another node's write in progress: errc::storage_locked after 2 s.
  caf::replies_to<ls_acquire_atom, std::string>::with<lease_outcome>,
  // Renews every lease held -> the keys lost since the last renewal.
  caf::replies_to<ls_renew_atom>::with<std::vector<std::string>>,
  // (key, token): gives the key up when it is still held under that token.
  caf::reacts_to<ls_release_atom, std::string, int64_t>>;

// Opens the lease connection on the calling thread (so an unreachable server or a bad
// identity fails here) and spawns the actor. Keep the handle.
caf::expected<lease_actor> spawn_lease_actor(caf::actor_system& sys, const store_params& params,
                                             lease_identity self,
                                             std::shared_ptr<spdlog::logger> log,
                                             std::shared_ptr<runtime_metrics> metrics);

} // namespace mneme
