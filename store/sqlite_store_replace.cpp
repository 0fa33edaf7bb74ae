// The row replacement commit of the single writer (SPEC §1, §6): archive a set of
// live rows of one session and insert their replacement rows at the archived
// rows' places, optionally with the trigger state, in one IMMEDIATE transaction.
// Used by proactive pruning, tool output eviction and micro-compaction (see
// messages/storage_types.hpp replacement_commit for the contract). Only
// message_state is updated for the archived rows: their text and their
// full-text index entries are never rewritten, so recall keeps finding them.
// Thread: the owner of the sqlite_store (the storage actor).
#include "store/sqlite_store.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <sqlite3.h>

#include "store/sqlite_error.hpp"

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

// Checks that need no database: counts, duplicates, positions among the archive ids.
caf::error validate_shape(const replacement_commit& c) {
  if (c.session_id.empty())
    return bad_request("replace: session_id is empty");
  if (c.archive_ids.empty())
    return bad_request("replace: archive_ids is empty (nothing to replace)");
  if (c.rows.size() != c.positions.size())
    return bad_request("replace: " + std::to_string(c.rows.size()) + " rows but "
                       + std::to_string(c.positions.size()) + " positions");
  std::set<int64_t> archived;
  for (auto id : c.archive_ids) {
    if (id <= 0)
      return bad_request("replace: archive id " + std::to_string(id) + " is not a row id");
    if (!archived.insert(id).second)
      return bad_request("replace: row " + std::to_string(id) + " is archived twice");
  }
  std::set<int64_t> used;
  for (auto pos : c.positions) {
    if (archived.count(pos) == 0)
      return bad_request("replace: position row " + std::to_string(pos)
                         + " is not among the archived rows");
    if (!used.insert(pos).second)
      return bad_request("replace: position row " + std::to_string(pos) + " is used twice");
  }
  for (const auto& row : c.rows) {
    if (!row.session_id.empty() && row.session_id != c.session_id)
      return bad_request("replace: a replacement row names another session");
    if (row.content.empty())
      return bad_request("replace: a replacement row's content is empty");
  }
  return {};
}

} // namespace

caf::expected<std::vector<message>>
sqlite_store::commit_replacement(const replacement_commit& c) {
  if (auto err = validate_shape(c))
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
    // (live rank of the position row, inserted id), sorted: who absorbs a non-position row.
    std::vector<std::pair<size_t, int64_t>> absorbers;
    std::map<int64_t, int64_t> archived_by; // position row id -> inserted id
    for (size_t i = 0; i < c.rows.size(); ++i) {
      const auto& place = live->at(c.positions[i]);
      message row = c.rows[i];
      row.id = 0;
      row.session_id = c.session_id;
      row.active = true;
      row.compacted = false;
      row.is_summary = true;
      if (row.replaced_first_id <= 0 || row.replaced_last_id < row.replaced_first_id)
        row.replaced_first_id = row.replaced_last_id = c.positions[i];
      auto id = insert_message(row, place.position);
      if (!id)
        return std::move(id.error());
      row.id = *id;
      absorbers.emplace_back(place.index, *id);
      archived_by[c.positions[i]] = *id;
      inserted.push_back(std::move(row));
    }
    std::sort(absorbers.begin(), absorbers.end());
    auto absorber_of = [&](int64_t archived_id) -> int64_t {
      if (auto hit = archived_by.find(archived_id); hit != archived_by.end())
        return hit->second;
      if (absorbers.empty())
        return c.archived_by;
      auto rank = live->at(archived_id).index;
      auto after = std::upper_bound(absorbers.begin(), absorbers.end(),
                                    std::make_pair(rank, INT64_MAX));
      return after == absorbers.begin() ? absorbers.front().second : std::prev(after)->second;
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
