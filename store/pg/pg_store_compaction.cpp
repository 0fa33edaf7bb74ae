// The PostgreSQL store's compaction commits (store/pg/pg_store.hpp): in place, row
// replacement and child continuation, with the semantics of sqlite_store's
// (sqlite_store_compaction.cpp, sqlite_store_replace.cpp, sqlite_store_child.cpp).
// Each runs in one transaction on an open session; archived rows change only in
// message_state (the schema refuses any UPDATE of a message row).
#include "store/pg/pg_store.hpp"

#include <map>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "store/compaction_checks.hpp"
#include "store/pg/pg_rows.hpp"
#include "store/replacement_checks.hpp"
#include "store/store_errors.hpp"

namespace mneme {

namespace {

struct pg_live_place {
  int64_t id;
  int64_t position; // the stored position (= id when never moved)
};

// The session's live rows in live order.
std::vector<pg_live_place> live_places(pqxx::transaction_base& t, const std::string& session_id) {
  std::vector<pg_live_place> out;
  for (const auto& r : t.exec_prepared("live_ids", session_id))
    out.push_back(pg_live_place{r[0].as<int64_t>(), r[1].as<int64_t>()});
  return out;
}

// Why `id` is not a live row of `session_id`: unknown, another session's, not live.
caf::error pg_not_live(pqxx::transaction_base& t, int64_t id, const std::string& session_id) {
  auto r = t.exec_params("SELECT session_id, compacted FROM message_state WHERE id = $1", id);
  if (r.empty())
    return not_found("replace: row " + std::to_string(id) + " does not exist");
  if (r[0][0].as<std::string>() != session_id)
    return bad_request("replace: row " + std::to_string(id) + " belongs to another session,"
                       " not to '" + session_id + "'");
  return bad_request("replace: row " + std::to_string(id) + " of session '" + session_id
                     + "' is not live (" + (r[0][1].as<int64_t>() != 0 ? "archived" : "rolled back")
                     + ")");
}

// Archives `ids[i]` into `by[i]` in one statement (flag flips in message_state only).
void archive_rows(pqxx::transaction_base& t, const std::vector<int64_t>& ids,
                  const std::vector<int64_t>& by) {
  if (!ids.empty())
    t.exec_prepared("archive_rows", pg::bigint_array(ids), pg::bigint_array(by));
}

void archive_rows_into(pqxx::transaction_base& t, const std::vector<int64_t>& ids, int64_t by) {
  archive_rows(t, ids, std::vector<int64_t>(ids.size(), by));
}

constexpr const char* pg_child_end_reason = "continued_in_child";

} // namespace

caf::expected<message> pg_store::commit_compaction(const compaction_commit& c) {
  if (auto err = check_compaction_summary("compaction", c, params_))
    return err;
  return pg::guarded("compaction", [&]() -> caf::expected<message> {
    pqxx::work w{*conn_};
    if (auto err = require_open(w, c.session_id, false))
      return err;
    auto live = live_places(w, c.session_id);
    auto start = locate_archive_run("compaction", live, c.archive_ids, c.session_id);
    if (!start)
      return std::move(start.error());
    auto summary = summary_row(c, c.session_id);
    auto id = insert_message(w, summary, live[*start].position, false);
    if (!id)
      return std::move(id.error());
    summary.id = *id;
    // Flag flips only: message_state rows change, no message row is touched.
    archive_rows_into(w, c.archive_ids, summary.id);
    if (c.update_triggers)
      if (auto err = write_triggers(w, c.session_id, c.triggers))
        return err;
    w.commit();
    return summary;
  });
}

caf::expected<std::vector<message>> pg_store::commit_replacement(const replacement_commit& c) {
  if (auto err = check_replacement_shape(c))
    return err;
  return pg::guarded("replace", [&]() -> caf::expected<std::vector<message>> {
    pqxx::work w{*conn_};
    if (auto err = require_open(w, c.session_id, false))
      return err;
    struct place {
      size_t index;
      int64_t position;
    };
    std::map<int64_t, place> live;
    auto rows = live_places(w, c.session_id);
    for (size_t i = 0; i < rows.size(); ++i)
      live.emplace(rows[i].id, place{i, rows[i].position});
    for (auto id : c.archive_ids)
      if (live.count(id) == 0)
        return pg_not_live(w, id, c.session_id);
    std::vector<message> inserted;
    inserted.reserve(c.rows.size());
    replacement_absorbers absorbers{c.archived_by};
    for (size_t i = 0; i < c.rows.size(); ++i) {
      const auto& at = live.at(c.positions[i]);
      auto row = replacement_row(c, i);
      auto id = insert_message(w, row, at.position, false);
      if (!id)
        return std::move(id.error());
      row.id = *id;
      absorbers.add(c.positions[i], at.index, *id);
      inserted.push_back(std::move(row));
    }
    std::vector<int64_t> absorbed_by;
    absorbed_by.reserve(c.archive_ids.size());
    for (auto archived : c.archive_ids)
      absorbed_by.push_back(absorbers.of(archived, live.at(archived).index));
    archive_rows(w, c.archive_ids, absorbed_by);
    if (c.update_triggers)
      if (auto err = write_triggers(w, c.session_id, c.triggers))
        return err;
    w.commit();
    return inserted;
  });
}

caf::expected<std::vector<message>> pg_store::continue_in_child(const compaction_commit& c,
                                                                time_ms now) {
  if (now < 0)
    return bad_request("child session: now must be >= 0");
  if (auto err = check_compaction_summary("child session", c, params_))
    return err;
  return pg::guarded("child session", [&]() -> caf::expected<std::vector<message>> {
    pqxx::work w{*conn_};
    if (auto err = require_open(w, c.session_id, false))
      return err;
    auto parent = pg::decode_session(w.exec_prepared("session_load", c.session_id)[0]);
    auto live = pg::live_rows(w, c.session_id);
    if (!live)
      return std::move(live.error());
    auto start = locate_archive_run("child session", *live, c.archive_ids, c.session_id);
    if (!start)
      return std::move(start.error());
    auto end = *start + c.archive_ids.size();
    auto child_id = ids_.next(now);
    w.exec_prepared("session_insert", child_id, pg::bytes(parent.user_id),
                    pg::bytes(parent.session_key), parent.id, pg::bytes(parent.model), now);
    if (auto err = write_triggers(w, child_id, c.update_triggers ? c.triggers : parent.triggers))
      return err;
    auto copy_into_child = [&](message m) {
      m.id = 0;
      m.session_id = child_id;
      m.active = true;
      m.compacted = false;
      return insert_message(w, m, 0, false);
    };
    for (size_t i = 0; i < *start; ++i)
      if (auto id = copy_into_child((*live)[i]); !id)
        return std::move(id.error());
    auto summary_id = copy_into_child(summary_row(c, child_id));
    if (!summary_id)
      return std::move(summary_id.error());
    for (size_t i = end; i < live->size(); ++i)
      if (auto id = copy_into_child((*live)[i]); !id)
        return std::move(id.error());
    archive_rows_into(w, c.archive_ids, *summary_id);
    w.exec_prepared("session_end", c.session_id, now > 0 ? now : int64_t{1},
                    pg::bytes(pg_child_end_reason));
    open_sessions_.erase(c.session_id);
    auto child_live = pg::live_rows(w, child_id);
    if (child_live)
      w.commit();
    return child_live;
  });
}

} // namespace mneme
