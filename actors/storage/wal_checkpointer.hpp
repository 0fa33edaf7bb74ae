// The WAL checkpointer: a detached actor with its own connection to the storage
// actor's file that copies the write-ahead log back into the database (PASSIVE
// checkpoints), so the writer's commits do not pay for it (policies/wal_checkpoint).
// Only the storage actor talks to it, one request at a time.
//
// Thread: its own (a checkpoint reads and writes the file and syncs it).
#pragma once

#include <memory>

#include <spdlog/logger.h>

#include "caf/fwd.hpp"
#include "caf/replies_to.hpp"
#include "caf/typed_actor.hpp"

#include "messages/mneme_types.hpp"
#include "store/store_params.hpp"

namespace mneme {

// (st_wal_checkpoint) -> (log pages, checkpointed pages) of one PASSIVE checkpoint.
using wal_checkpointer_actor = caf::typed_actor<
  caf::replies_to<st_wal_checkpoint_atom>::with<int64_t, int64_t>>;

// Opens the checkpointer connection on the calling thread and spawns the actor.
// Fails for a file another connection cannot open (":memory:") or without a
// known schema: the writer then keeps SQLite's automatic checkpoint.
caf::expected<wal_checkpointer_actor> spawn_wal_checkpointer(caf::actor_system& sys,
                                                             const store_params& params,
                                                             std::shared_ptr<spdlog::logger> log);

} // namespace mneme
