// The WAL checkpointer actor; see wal_checkpointer.hpp.
#include "actors/storage/wal_checkpointer.hpp"

#include <utility>

#include "caf/all.hpp"

#include "policies/client_text.hpp"

namespace mneme {

caf::expected<wal_checkpoint_result> wal_checkpoint_connection::checkpoint() {
  std::lock_guard<std::mutex> guard{mutex_};
  if (!db_)
    return caf::make_error(errc::shutting_down, "the WAL checkpointer's connection is closed");
  return db_->checkpoint();
}

void wal_checkpoint_connection::close() {
  std::lock_guard<std::mutex> guard{mutex_};
  db_.reset();
}

namespace {

struct checkpointer_state {
  static inline const char* name = "wal_checkpointer";
  std::shared_ptr<wal_checkpoint_connection> connection;
  std::shared_ptr<spdlog::logger> log;
};

wal_checkpointer_actor::behavior_type
checkpointer_impl(wal_checkpointer_actor::stateful_pointer<checkpointer_state> self,
                  std::shared_ptr<wal_checkpoint_connection> connection,
                  std::shared_ptr<spdlog::logger> log) {
  self->state.connection = std::move(connection);
  self->state.log = std::move(log);
  return {
    [self](st_wal_checkpoint_atom) -> caf::result<int64_t, int64_t> {
      auto r = self->state.connection->checkpoint();
      if (!r) {
        if (self->state.log)
          self->state.log->warn("session=- event=wal_checkpoint_failed error={}",
                                log_quoted(render_error(r.error())));
        return std::move(r.error());
      }
      return {r->log_pages, r->busy ? int64_t{-1} : r->checkpointed_pages};
    },
  };
}

} // namespace

caf::expected<wal_checkpointer> spawn_wal_checkpointer(caf::actor_system& sys,
                                                       store_maintenance& store,
                                                       std::shared_ptr<spdlog::logger> log) {
  auto db = store.open_log_checkpointer();
  if (!db)
    return std::move(db.error());
  auto connection = std::make_shared<wal_checkpoint_connection>(std::move(*db));
  auto actor = sys.spawn<caf::detached>(checkpointer_impl, connection, std::move(log));
  return wal_checkpointer{std::move(actor), std::move(connection)};
}

} // namespace mneme
