// The WAL checkpointer actor; see wal_checkpointer.hpp.
#include "actors/storage/wal_checkpointer.hpp"

#include <utility>

#include "caf/all.hpp"

#include "store/db_connection.hpp"

namespace mneme {

namespace {

struct checkpointer_state {
  static inline const char* name = "wal_checkpointer";
  std::shared_ptr<db_connection> db; // the only owner once the actor runs
  std::shared_ptr<spdlog::logger> log;
};

wal_checkpointer_actor::behavior_type
checkpointer_impl(wal_checkpointer_actor::stateful_pointer<checkpointer_state> self,
                  std::shared_ptr<db_connection> db, std::shared_ptr<spdlog::logger> log) {
  self->state.db = std::move(db); // closed when the actor quits (the state goes)
  self->state.log = std::move(log);
  return {
    [self](st_wal_checkpoint_atom) -> caf::result<int64_t, int64_t> {
      auto r = self->state.db->checkpoint_passive();
      if (!r) {
        if (self->state.log)
          self->state.log->warn("session=- event=wal_checkpoint_failed error={}",
                                render_error(r.error()));
        return std::move(r.error());
      }
      return {r->log_pages, r->checkpointed_pages};
    },
  };
}

} // namespace

caf::expected<wal_checkpointer_actor> spawn_wal_checkpointer(caf::actor_system& sys,
                                                             const store_params& params,
                                                             std::shared_ptr<spdlog::logger> log) {
  auto db = db_connection::open(params, open_mode::checkpointer);
  if (!db)
    return std::move(db.error());
  return sys.spawn<caf::detached>(checkpointer_impl, std::shared_ptr<db_connection>{std::move(*db)},
                                  std::move(log));
}

} // namespace mneme
