// The PostgreSQL store's reset, checkpoints and rollback (store/pg/pg_store.hpp), with
// the semantics of sqlite_store's (store/sqlite/sqlite_store.hpp, sqlite_store_compaction.cpp):
// each runs in one transaction; a rollback flips message_state flags only.
#include "store/pg/pg_store.hpp"

#include <pqxx/pqxx>

#include "policies/reset_plan.hpp"
#include "store/pg/pg_rows.hpp"
#include "store/session_checks.hpp"
#include "store/store_errors.hpp"

namespace mneme {

caf::expected<session_record> pg_store::reset_session(const std::string& session_id,
                                                      int head_count, time_ms now,
                                                      const std::string& reason,
                                                      int64_t max_row_tokens) {
  if (auto err = check_reset_request(head_count, now, max_row_tokens))
    return err;
  return pg::guarded("reset", [&]() -> caf::expected<session_record> {
    pqxx::work w{*conn_};
    if (auto err = require_open(w, session_id, false))
      return err;
    auto old = pg::decode_session(w.exec_prepared("session_load", session_id)[0]);
    auto live = pg::live_rows(w, session_id);
    if (!live)
      return std::move(live.error());
    session_record child;
    child.id = ids_.next(now);
    child.user_id = old.user_id;
    child.session_key = old.session_key;
    child.parent_id = old.id;
    child.model = old.model;
    child.started_at_ms = now;
    w.exec_prepared("session_insert", child.id, pg::bytes(child.user_id),
                    pg::bytes(child.session_key), child.parent_id, pg::bytes(child.model),
                    child.started_at_ms);
    // The head and the latest summary, without any row that cannot fit.
    for (auto i : plan_reset_copy(*live, head_count, max_row_tokens)) {
      auto m = (*live)[i];
      m.id = 0;
      m.session_id = child.id;
      m.active = true;
      m.compacted = false;
      if (auto id = insert_message(w, m, 0, false); !id)
        return std::move(id.error());
    }
    w.exec_prepared("session_end", session_id, now > 0 ? now : int64_t{1}, pg::bytes(reason));
    open_sessions_.erase(session_id);
    w.commit();
    return child;
  });
}

caf::expected<checkpoint_record> pg_store::create_checkpoint(const std::string& session_id,
                                                             const std::string& name,
                                                             time_ms now) {
  if (name.empty() || name.size() > 128)
    return bad_request("checkpoint: name must be 1..128 bytes");
  return pg::guarded("create checkpoint", [&]() -> caf::expected<checkpoint_record> {
    pqxx::work w{*conn_};
    if (auto err = require_open(w, session_id, false))
      return err;
    checkpoint_record cp{session_id, name, 0, now};
    cp.last_message_id = w.exec_params1("SELECT coalesce(max(id), 0) FROM message_state"
                                        " WHERE session_id = $1",
                                        session_id)[0]
                           .as<int64_t>();
    // Creating a name again makes it usable again (retired_by = '').
    w.exec_params("INSERT INTO checkpoints(session_id, name, last_message_id, created_at_ms)"
                  " VALUES ($1, $2, $3, $4) ON CONFLICT (session_id, name) DO UPDATE SET"
                  " last_message_id = EXCLUDED.last_message_id,"
                  " created_at_ms = EXCLUDED.created_at_ms, retired_by = ''::bytea",
                  session_id, pg::bytes(name), cp.last_message_id, cp.created_at_ms);
    w.commit();
    return cp;
  });
}

caf::expected<std::vector<message>>
pg_store::rollback_to_checkpoint(const std::string& session_id, const std::string& name) {
  auto mark = pg::guarded("load checkpoint", [&]() -> caf::expected<int64_t> {
    pqxx::read_transaction r{*conn_};
    if (auto err = require_open(r, session_id, false, access::read))
      return err;
    auto rows = r.exec_params("SELECT last_message_id, retired_by FROM checkpoints"
                              " WHERE session_id = $1 AND name = $2",
                              session_id, pg::bytes(name));
    if (rows.empty())
      return not_found("no checkpoint '" + name + "' in session '" + session_id + "'");
    if (auto by = pg::text_of(rows[0][1]); !by.empty())
      return bad_request("checkpoint '" + name + "' was undone by the rollback to '" + by
                         + "': its rows are rolled back; create it again to use the name");
    return rows[0][0].as<int64_t>();
  });
  if (!mark)
    return std::move(mark.error());
  // The single writer runs one operation at a time: nothing changed since the read.
  return rollback_after_row(session_id, *mark, name);
}

caf::expected<std::vector<message>> pg_store::rollback_after_row(const std::string& session_id,
                                                                 int64_t mark,
                                                                 const std::string& label) {
  if (mark < 0)
    return bad_request("rollback: a negative row id");
  return pg::guarded("roll back", [&]() -> caf::expected<std::vector<message>> {
    pqxx::work w{*conn_};
    if (auto err = require_open(w, session_id, false))
      return err;
    // First revive what later summaries archived, then roll back everything
    // appended after the mark (those summaries included).
    w.exec_params("UPDATE message_state SET active = 1, compacted = 0, archived_by = 0"
                  " WHERE session_id = $1 AND compacted = 1 AND archived_by > $2 AND id <= $2",
                  session_id, mark);
    w.exec_params("UPDATE message_state SET active = 0, compacted = 0"
                  " WHERE session_id = $1 AND id > $2 AND (active = 1 OR compacted = 1)",
                  session_id, mark);
    // Checkpoints made after the mark pointed into the rows just undone.
    w.exec_params("UPDATE checkpoints SET retired_by = $3 WHERE session_id = $1"
                  " AND last_message_id > $2 AND retired_by = ''::bytea",
                  session_id, mark, pg::bytes(label));
    auto live = pg::live_rows(w, session_id);
    if (live)
      w.commit();
    return live;
  });
}

} // namespace mneme
