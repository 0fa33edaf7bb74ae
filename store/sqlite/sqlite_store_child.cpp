// The child-session continuation of the single writer (SPEC §3 `in_place: false`):
// one compaction that ends the session and continues it in a child session holding
// head + summary + tail, in one IMMEDIATE transaction (after a crash the file holds
// either the open parent as it was, or the ended parent and the complete child).
//
// What the transaction does, for a valid compaction_commit `c` of open session P:
//   1. creates child C: a new id, P's user, key and model, parent_id = P,
//      started_at = now, trigger state = c.triggers when c.update_triggers, else P's;
//   2. gives C its live context, in order: copies of P's live rows before the
//      archived slice (head), the summary (is_summary = 1, replaced_first/last_id =
//      the slice bounds, which are P's rows), copies of P's live rows after the slice
//      (tail, including rows appended while the summary was in flight). A copy keeps
//      role, text, tool fields, timestamp, token estimate and a copied summary's
//      provenance; it gets a new id, session C and the live flags;
//   3. archives the slice in P (active = 0, compacted = 1, archived_by = the
//      summary's id in C), exactly as an in-place compaction would; P's head and tail
//      rows are not touched, so P's live context at its end is head + tail;
//   4. ends P with reason "continued_in_child".
//
// Decision (how C "holds" head and tail): copies, the representation the exhaustion
// reset already uses (sqlite_store.hpp, reset). The alternatives break something a
// user relies on: moving P's rows into C (message_state.session_id) would make P's
// export and its recall windows lose its own head and tail; reference rows would
// need every reader of a live context to resolve them. The cost of copies: the text
// of head and tail is stored once more and a recall hit on it may name both P and C
// (recall ranks per session); the archived middle is only in P and the summary only
// in C, so each of them is found exactly once.
//
// Refusals (errc::bad_request / errc::not_found; the file is unchanged): what
// commit_compaction refuses (empty or non-contiguous archive ids, rows that are not
// live rows of P, a summary with a wrong role, empty text, another session's id or
// over max_content_bytes, an unknown or ended session) and a negative `now`.
// Thread: the owner of the sqlite_store (the storage actor).
#include "store/sqlite/sqlite_store.hpp"

#include <algorithm>

#include <sqlite3.h>

#include "store/compaction_checks.hpp"
#include "store/sqlite/sqlite_error.hpp"
#include "store/sqlite/store_queries.hpp"

namespace mneme {

namespace {

constexpr const char* child_end_reason = "continued_in_child";

caf::error validate_child_commit(const compaction_commit& c, time_ms now,
                                 const store_params& params) {
  if (now < 0)
    return bad_request("child session: now must be >= 0");
  return check_compaction_summary("child session", c, params);
}

} // namespace

caf::expected<std::vector<message>>
sqlite_store::continue_in_child(const compaction_commit& c, time_ms now) {
  if (auto err = validate_child_commit(c, now, params_))
    return err;
  using rows = std::vector<message>;
  return commit_on_open_session<rows>(c.session_id, [&]() -> caf::expected<rows> {
    auto parent = load_session(*db_, c.session_id);
    if (!parent)
      return std::move(parent.error());
    auto live = load_live_context(*db_, c.session_id);
    if (!live)
      return std::move(live.error());
    auto start = locate_archive_run("child session", *live, c.archive_ids, c.session_id);
    if (!start)
      return std::move(start.error());
    auto end = *start + c.archive_ids.size();

    session_record child;
    child.id = ids_.next(now);
    {
      auto stmt = db_->prepare("INSERT INTO sessions(id, user_id, session_key, parent_id, model,"
                               " started_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
      if (!stmt)
        return std::move(stmt.error());
      statement_scope s{**stmt};
      s->bind(1, child.id);
      s->bind(2, parent->user_id);
      s->bind(3, parent->session_key);
      s->bind(4, parent->id);
      s->bind(5, parent->model);
      s->bind(6, now);
      if (auto rc = s->step(); rc != SQLITE_DONE)
        return db_->failure(rc, "create the child session");
    }
    if (auto err = write_triggers(child.id, c.update_triggers ? c.triggers : parent->triggers))
      return err;

    auto copy_into_child = [&](message m) -> caf::expected<int64_t> {
      m.id = 0;
      m.session_id = child.id;
      m.active = true;
      m.compacted = false;
      return insert_message(m);
    };
    for (size_t i = 0; i < *start; ++i)
      if (auto id = copy_into_child((*live)[i]); !id)
        return std::move(id.error());
    auto summary_id = copy_into_child(summary_row(c, child.id));
    if (!summary_id)
      return std::move(summary_id.error());
    for (size_t i = end; i < live->size(); ++i)
      if (auto id = copy_into_child((*live)[i]); !id)
        return std::move(id.error());

    if (auto err = archive_rows(c.archive_ids, [&](int64_t) { return *summary_id; }))
      return err;
    if (auto err =
          write_session_end(c.session_id, now, child_end_reason, "end the parent session"))
      return err;
    return load_live_context(*db_, child.id);
  });
}

} // namespace mneme
