// The WAL checkpointer: a detached actor with its own connection to the storage
// actor's file that copies the write-ahead log back into the database (PASSIVE
// checkpoints), so the writer's commits do not pay for it (policies/wal_checkpoint).
// Only the storage actor talks to it, one request at a time.
//
// Closing: the connection is shared with the storage actor, which closes it
// (waiting for a running checkpoint) before its own writer connection closes. So
// the writer's connection is the file's last one, as without a checkpointer: its
// close removes the -wal and -shm files before the storage actor is gone.
//
// Thread: the actor's own (a checkpoint reads, writes and syncs the file); close()
// from the storage actor's thread.
#pragma once

#include <memory>
#include <mutex>

#include <spdlog/logger.h>

#include "caf/fwd.hpp"
#include "caf/replies_to.hpp"
#include "caf/typed_actor.hpp"

#include "messages/mneme_types.hpp"
#include "store/store_maintenance.hpp"

namespace mneme {

// (st_wal_checkpoint) -> (log pages, checkpointed pages) of one PASSIVE checkpoint;
// checkpointed pages -1: another checkpoint was running, this one did nothing.
using wal_checkpointer_actor = caf::typed_actor<
  caf::replies_to<st_wal_checkpoint_atom>::with<int64_t, int64_t>>;

// The checkpointer's connection, usable until close().
class wal_checkpoint_connection {
public:
  explicit wal_checkpoint_connection(std::unique_ptr<log_checkpointer> db) : db_(std::move(db)) {}
  // One PASSIVE checkpoint; errc::shutting_down after close().
  caf::expected<wal_checkpoint_result> checkpoint();
  // Closes the connection once no checkpoint runs. Idempotent.
  void close();

private:
  std::mutex mutex_;
  std::unique_ptr<log_checkpointer> db_; // null once closed
};

struct wal_checkpointer {
  wal_checkpointer_actor actor;
  std::shared_ptr<wal_checkpoint_connection> connection; // the storage actor closes it
};

// Opens the store's checkpointer connection (store_maintenance::open_log_checkpointer)
// on the calling thread and spawns the actor. Fails for a file another connection
// cannot open (":memory:") or without a known schema: the writer then keeps SQLite's
// automatic checkpoint.
caf::expected<wal_checkpointer> spawn_wal_checkpointer(caf::actor_system& sys,
                                                       store_maintenance& store,
                                                       std::shared_ptr<spdlog::logger> log);

} // namespace mneme
