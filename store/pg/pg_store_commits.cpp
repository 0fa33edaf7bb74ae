// The session commits of the PostgreSQL store (store/session_commits.hpp) and the
// primitives they run on (store/session_writer.hpp), on the store's connection. Each
// runs in one transaction; archived and rolled-back rows change only in message_state
// (the schema refuses any UPDATE of a message row). A write in node mode is fenced by
// require_open and insert_message (store/pg/pg_store.hpp).
// Thread: the owner of the pg_store (the storage actor).
#include "store/pg/pg_store.hpp"

#include <optional>

#include <pqxx/pqxx>

#include "store/compaction_log.hpp"
#include "store/pg/pg_compaction_log.hpp"
#include "store/pg/pg_error.hpp"
#include "store/pg/pg_rows.hpp"
#include "store/session_commits.hpp"
#include "store/session_writer.hpp"
#include "store/store_errors.hpp"

namespace mneme {

// PostgreSQL's primitives: a failed statement throws (libpqxx), which the skeleton
// turns into the errc of pg_error.hpp after rolling back.
class pg_session_writer final : public session_writer {
public:
  explicit pg_session_writer(pg_store& store) : store_(store) {}

  caf::error begin(access a) override {
    access_ = a;
    if (a == access::read)
      t_ = std::make_unique<pqxx::read_transaction>(*store_.conn_);
    else
      t_ = std::make_unique<pqxx::work>(*store_.conn_);
    return {};
  }

  caf::error commit() override {
    if (access_ == access::write)
      t_->commit();
    t_.reset();
    return {};
  }

  void roll_back() noexcept override {
    try {
      t_.reset(); // an uncommitted transaction aborts when it goes
    } catch (...) { // NOLINT: a failed abort leaves nothing committed
    }
  }

  caf::error failure(const std::exception& e, const char* what) override {
    return pg_failure(e, what);
  }

  caf::error require_open(const std::string& session_id) override {
    return store_.require_open(*t_, session_id, false,
                               access_ == access::read ? pg_store::access::read
                                                       : pg_store::access::write);
  }

  caf::expected<session_record> load_session(const std::string& session_id) override {
    return pg::decode_session(t_->exec_prepared("session_load", session_id)[0]);
  }

  caf::expected<std::vector<live_place>> live_places(const std::string& session_id) override {
    std::vector<live_place> out;
    for (const auto& r : t_->exec_prepared("live_ids", session_id))
      out.push_back(live_place{r[0].as<int64_t>(), r[1].as<int64_t>()});
    return out;
  }

  caf::expected<std::vector<message>> live_rows(const std::string& session_id) override {
    return pg::live_rows(*t_, session_id);
  }

  caf::expected<std::optional<row_place>> find_row(int64_t id) override {
    auto r = t_->exec_params("SELECT session_id, active, compacted FROM message_state"
                             " WHERE id = $1",
                             id);
    if (r.empty())
      return std::optional<row_place>{};
    return std::optional<row_place>{row_place{r[0][0].as<std::string>(),
                                              r[0][1].as<int64_t>() != 0,
                                              r[0][2].as<int64_t>() != 0}};
  }

  caf::expected<int64_t> insert_message(const message& m, int64_t position) override {
    return store_.insert_message(*t_, m, position, false);
  }

  caf::error archive_rows(const std::vector<int64_t>& ids,
                          const std::vector<int64_t>& by) override {
    // One statement whatever the number of rows.
    if (!ids.empty())
      t_->exec_prepared("archive_rows", pg::bigint_array(ids), pg::bigint_array(by));
    return {};
  }

  caf::error write_triggers(const std::string& session_id, const trigger_state& t) override {
    return store_.write_triggers(*t_, session_id, t);
  }

  std::string next_session_id(time_ms now) override {
    return store_.ids_.next(now);
  }

  caf::expected<bool> insert_session(const session_record& rec, const char*) override {
    return pg::insert_session(*t_, rec);
  }

  caf::error end_session(const std::string& session_id, time_ms now, const std::string& reason,
                         const char*) override {
    t_->exec_prepared("session_end", session_id, now > 0 ? now : int64_t{1}, pg::bytes(reason));
    store_.open_sessions_.erase(session_id);
    return {};
  }

  caf::expected<int64_t> last_row_id(const std::string& session_id) override {
    return t_->exec_params1("SELECT coalesce(max(id), 0) FROM message_state"
                            " WHERE session_id = $1",
                            session_id)[0]
      .as<int64_t>();
  }

  caf::expected<int64_t> insert_compaction_log(const compaction_log_entry& e) override {
    return pg::insert_compaction_log(*t_, e);
  }

  caf::error put_checkpoint(const checkpoint_record& cp) override {
    t_->exec_params("INSERT INTO checkpoints(session_id, name, last_message_id, created_at_ms)"
                    " VALUES ($1, $2, $3, $4) ON CONFLICT (session_id, name) DO UPDATE SET"
                    " last_message_id = EXCLUDED.last_message_id,"
                    " created_at_ms = EXCLUDED.created_at_ms, retired_by = ''::bytea",
                    cp.session_id, pg::bytes(cp.name), cp.last_message_id, cp.created_at_ms);
    return {};
  }

  caf::expected<std::optional<checkpoint_mark>>
  find_checkpoint(const std::string& session_id, const std::string& name) override {
    auto rows = t_->exec_params("SELECT last_message_id, retired_by FROM checkpoints"
                                " WHERE session_id = $1 AND name = $2",
                                session_id, pg::bytes(name));
    if (rows.empty())
      return std::optional<checkpoint_mark>{};
    return std::optional<checkpoint_mark>{
      checkpoint_mark{rows[0][0].as<int64_t>(), pg::text_of(rows[0][1])}};
  }

  caf::error roll_back_after(const std::string& session_id, int64_t mark,
                             const std::string& label) override {
    t_->exec_params("UPDATE message_state SET active = 1, compacted = 0, archived_by = 0"
                    " WHERE session_id = $1 AND compacted = 1 AND archived_by > $2"
                    " AND id <= $2",
                    session_id, mark);
    t_->exec_params("UPDATE message_state SET active = 0, compacted = 0"
                    " WHERE session_id = $1 AND id > $2 AND (active = 1 OR compacted = 1)",
                    session_id, mark);
    t_->exec_params("UPDATE checkpoints SET retired_by = $3 WHERE session_id = $1"
                    " AND last_message_id > $2 AND retired_by = ''::bytea",
                    session_id, mark, pg::bytes(label));
    return {};
  }

private:
  pg_store& store_;
  access access_ = access::write;
  std::unique_ptr<pqxx::dbtransaction> t_;
};

caf::expected<session_record> pg_store::end_session(const std::string& session_id, time_ms now,
                                                    const std::string& reason) {
  pg_session_writer w{*this};
  return session_commits::end(w, session_id, now, reason);
}

caf::expected<int64_t> pg_store::log_compaction_attempt(const compaction_log_entry& e) {
  if (auto err = check_compaction_log(e, false))
    return err;
  return pg::guarded("write compaction log", [&]() -> caf::expected<int64_t> {
    pqxx::work w{*conn_};
    if (auto err = pg::require_session(w, e.session_id))
      return err;
    if (auto err = fence_session(w, e.session_id))
      return err;
    auto id = pg::insert_compaction_log(w, e);
    w.commit();
    return id;
  });
}

caf::expected<std::vector<compaction_log_entry>>
pg_store::compaction_log(const std::string& session_id, int64_t limit) {
  if (limit < 1 || limit > compaction_log_max_rows)
    return bad_request("compaction log: limit must be 1.."
                       + std::to_string(compaction_log_max_rows));
  return pg::guarded("read compaction log",
                     [&]() -> caf::expected<std::vector<compaction_log_entry>> {
    pqxx::read_transaction r{*conn_};
    if (auto err = pg::require_session(r, session_id))
      return err;
    return pg::compaction_log_of(r, session_id, limit);
  });
}

caf::expected<message> pg_store::commit_compaction(const compaction_commit& c) {
  pg_session_writer w{*this};
  return session_commits::compaction(w, c, params_);
}

caf::expected<std::vector<message>> pg_store::commit_replacement(const replacement_commit& c) {
  pg_session_writer w{*this};
  return session_commits::replacement(w, c);
}

caf::expected<std::vector<message>> pg_store::continue_in_child(const compaction_commit& c,
                                                                time_ms now) {
  pg_session_writer w{*this};
  return session_commits::child_continuation(w, c, now, params_);
}

caf::expected<session_record> pg_store::reset_session(const std::string& session_id,
                                                      int head_count, time_ms now,
                                                      const std::string& reason,
                                                      int64_t max_row_tokens) {
  pg_session_writer w{*this};
  return session_commits::reset(w, session_id, head_count, now, reason, max_row_tokens);
}

caf::expected<checkpoint_record> pg_store::create_checkpoint(const std::string& session_id,
                                                             const std::string& name,
                                                             time_ms now) {
  pg_session_writer w{*this};
  return session_commits::checkpoint(w, session_id, name, now);
}

caf::expected<std::vector<message>>
pg_store::rollback_to_checkpoint(const std::string& session_id, const std::string& name) {
  pg_session_writer w{*this};
  return session_commits::rollback_to_checkpoint(w, session_id, name);
}

caf::expected<std::vector<message>> pg_store::rollback_after_row(const std::string& session_id,
                                                                 int64_t mark,
                                                                 const std::string& label) {
  pg_session_writer w{*this};
  return session_commits::rollback_after_row(w, session_id, mark, label);
}

} // namespace mneme
