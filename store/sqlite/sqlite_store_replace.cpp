// The row replacement commit of the single writer (SPEC §1, §6): archive a set of
// live rows of one session and insert their replacement rows at the archived
// rows' places, optionally with the trigger state, in one IMMEDIATE transaction.
// Used by proactive pruning, tool output eviction and micro-compaction (see
// messages/storage_types.hpp replacement_commit for the contract). Only
// message_state is updated for the archived rows: their text and their
// full-text index entries are never rewritten, so recall keeps finding them.
// Thread: the owner of the sqlite_store (the storage actor).
#include "store/sqlite/sqlite_store.hpp"

#include <map>

#include <sqlite3.h>

#include "store/replacement_checks.hpp"
#include "store/sqlite/sqlite_error.hpp"

namespace mneme {

namespace {

// Position in the live order of each live row of the session, by id.
struct live_place {
  size_t index;      // rank in live order
  int64_t position;  // the stored position (= id when never moved)
};

caf::expected<std::map<int64_t, live_place>> live_places(db_connection& db,
                                                          const std::string& session_id) {
  auto stmt = db.prepare("SELECT id, coalesce(position, id) AS pos FROM message_state"
                         " WHERE session_id = ?1 AND active = 1 ORDER BY pos, id");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_id);
  std::map<int64_t, live_place> out;
  for (size_t rank = 0;; ++rank) {
    auto rc = s->step();
    if (rc == SQLITE_DONE)
      return out;
    if (rc != SQLITE_ROW)
      return db.failure(rc, "load live rows");
    out.emplace(s->column_int(0), live_place{rank, s->column_int(1)});
  }
}

// Why `id` is not a live row of `session_id`: unknown row, another session's, or
// not live any more.
caf::error not_live(db_connection& db, int64_t id, const std::string& session_id) {
  auto stmt = db.prepare("SELECT session_id, active, compacted FROM message_state WHERE id = ?1");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, id);
  auto rc = s->step();
  if (rc == SQLITE_DONE)
    return not_found("replace: row " + std::to_string(id) + " does not exist");
  if (rc != SQLITE_ROW)
    return db.failure(rc, "look up row " + std::to_string(id));
  if (s->column_text(0) != session_id)
    return bad_request("replace: row " + std::to_string(id) + " belongs to another session,"
                       " not to '" + session_id + "'");
  return bad_request("replace: row " + std::to_string(id) + " of session '" + session_id
                     + "' is not live (" + (s->column_int(2) != 0 ? "archived" : "rolled back")
                     + ")");
}

} // namespace

caf::expected<std::vector<message>>
sqlite_store::commit_replacement(const replacement_commit& c) {
  if (auto err = check_replacement_shape(c))
    return err;
  using rows = std::vector<message>;
  return commit_on_open_session<rows>(c.session_id, [&]() -> caf::expected<rows> {
    auto live = live_places(*db_, c.session_id);
    if (!live)
      return std::move(live.error());
    for (auto id : c.archive_ids)
      if (live->count(id) == 0)
        return not_live(*db_, id, c.session_id);
    std::vector<message> inserted;
    inserted.reserve(c.rows.size());
    replacement_absorbers absorbers{c.archived_by};
    for (size_t i = 0; i < c.rows.size(); ++i) {
      const auto& place = live->at(c.positions[i]);
      auto row = replacement_row(c, i);
      auto id = insert_message(row, place.position);
      if (!id)
        return std::move(id.error());
      row.id = *id;
      absorbers.add(c.positions[i], place.index, *id);
      inserted.push_back(std::move(row));
    }
    auto absorber_of = [&](int64_t archived_id) {
      return absorbers.of(archived_id, live->at(archived_id).index);
    };
    if (auto err = archive_rows(c.archive_ids, absorber_of))
      return err;
    if (c.update_triggers)
      if (auto err = write_triggers(c.session_id, c.triggers))
        return err;
    return inserted;
  });
}

} // namespace mneme
