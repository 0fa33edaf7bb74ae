// The session commits of every backend; see session_commits.hpp.
#include "store/session_commits.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "policies/reset_plan.hpp"
#include "store/compaction_checks.hpp"
#include "store/compaction_log.hpp"
#include "store/replacement_checks.hpp"
#include "store/session_checks.hpp"
#include "store/store_errors.hpp"

namespace mneme::session_commits {

namespace {

using access = session_writer::access;

constexpr const char* child_end_reason = "continued_in_child";

// Why `id` is not a live row of `session_id`: no such row, another session's, not live.
caf::error not_live(session_writer& w, int64_t id, const std::string& session_id) {
  auto row = w.find_row(id);
  if (!row)
    return std::move(row.error());
  auto named = "replace: row " + std::to_string(id);
  if (!*row)
    return not_found(named + " does not exist");
  if ((*row)->session_id != session_id)
    return bad_request(named + " belongs to another session, not to '" + session_id + "'");
  return bad_request(named + " of session '" + session_id + "' is not live ("
                     + ((*row)->compacted ? "archived" : "rolled back") + ")");
}

// Inserts the sessions row of a session the operation `what` creates.
caf::error create(session_writer& w, const session_record& rec, const char* what) {
  auto created = w.insert_session(rec, what);
  if (!created)
    return std::move(created.error());
  if (!*created)
    return bad_request(std::string{what} + ": id '" + rec.id + "' already exists");
  return {};
}

// A new session continuing `from` under its key, created at `now`.
session_record successor_of(session_writer& w, const session_record& from, time_ms now) {
  session_record next;
  next.id = w.next_session_id(now);
  next.user_id = from.user_id;
  next.session_key = from.session_key;
  next.parent_id = from.id;
  next.model = from.model;
  next.started_at_ms = now;
  return next;
}

// Inserts a copy of `m` as a live row of session `session_id`; its new id.
caf::expected<int64_t> copy_into(session_writer& w, message m, const std::string& session_id) {
  m.id = 0;
  m.session_id = session_id;
  m.active = true;
  m.compacted = false;
  return w.insert_message(m, 0);
}

// Adds c.log, when the commit carries one, as the committed row of a compaction whose
// summary is row `summary_id` of session `session_id`.
caf::error log_commit(session_writer& w, const compaction_commit& c,
                      const std::string& session_id, int64_t summary_id) {
  if (!c.has_log)
    return {};
  auto [lo, hi] = std::minmax_element(c.archive_ids.begin(), c.archive_ids.end());
  auto entry = committed_log_entry(c.log, *lo, *hi,
                                   static_cast<int64_t>(c.archive_ids.size()), summary_id);
  entry.session_id = session_id;
  auto id = w.insert_compaction_log(entry);
  return id ? caf::error{} : std::move(id.error());
}

// The log a commit carries is checked with the commit's other refusals.
caf::error check_commit_log(const compaction_commit& c) {
  if (!c.has_log)
    return {};
  auto entry = c.log;
  entry.session_id = c.session_id;
  return check_compaction_log(entry, true);
}

} // namespace

caf::expected<message> compaction(session_writer& w, const compaction_commit& c,
                                  const store_params& params) {
  if (auto err = check_compaction_summary("compaction", c, params))
    return err;
  if (auto err = check_commit_log(c))
    return err;
  return run_on_open_session(w, access::write, "compaction", c.session_id,
                             [&]() -> caf::expected<message> {
    auto live = w.live_places(c.session_id);
    if (!live)
      return std::move(live.error());
    auto start = locate_archive_run("compaction", *live, c.archive_ids, c.session_id);
    if (!start)
      return std::move(start.error());
    auto summary = summary_row(c, c.session_id);
    auto id = w.insert_message(summary, (*live)[*start].position);
    if (!id)
      return std::move(id.error());
    summary.id = *id;
    if (auto err = w.archive_rows(c.archive_ids,
                                  std::vector<int64_t>(c.archive_ids.size(), summary.id)))
      return err;
    if (c.update_triggers)
      if (auto err = w.write_triggers(c.session_id, c.triggers))
        return err;
    if (auto err = log_commit(w, c, c.session_id, summary.id))
      return err;
    return summary;
  });
}

caf::expected<std::vector<message>> replacement(session_writer& w, const replacement_commit& c) {
  if (auto err = check_replacement_shape(c))
    return err;
  using rows = std::vector<message>;
  return run_on_open_session(w, access::write, "replace", c.session_id,
                             [&]() -> caf::expected<rows> {
    auto places = w.live_places(c.session_id);
    if (!places)
      return std::move(places.error());
    struct place {
      size_t rank;       // in live order
      int64_t position;  // the stored position
    };
    std::map<int64_t, place> live;
    for (size_t i = 0; i < places->size(); ++i)
      live.emplace((*places)[i].id, place{i, (*places)[i].position});
    for (auto id : c.archive_ids)
      if (live.count(id) == 0)
        return not_live(w, id, c.session_id);
    rows inserted;
    inserted.reserve(c.rows.size());
    replacement_absorbers absorbers{c.archived_by};
    for (size_t i = 0; i < c.rows.size(); ++i) {
      const auto& at = live.at(c.positions[i]);
      auto row = replacement_row(c, i);
      auto id = w.insert_message(row, at.position);
      if (!id)
        return std::move(id.error());
      row.id = *id;
      absorbers.add(c.positions[i], at.rank, *id);
      inserted.push_back(std::move(row));
    }
    std::vector<int64_t> absorbed_by;
    absorbed_by.reserve(c.archive_ids.size());
    for (auto archived : c.archive_ids)
      absorbed_by.push_back(absorbers.of(archived, live.at(archived).rank));
    if (auto err = w.archive_rows(c.archive_ids, absorbed_by))
      return err;
    if (c.update_triggers)
      if (auto err = w.write_triggers(c.session_id, c.triggers))
        return err;
    return inserted;
  });
}

caf::expected<std::vector<message>> child_continuation(session_writer& w,
                                                       const compaction_commit& c, time_ms now,
                                                       const store_params& params) {
  if (now < 0)
    return bad_request("child session: now must be >= 0");
  if (auto err = check_compaction_summary("child session", c, params))
    return err;
  if (auto err = check_commit_log(c))
    return err;
  using rows = std::vector<message>;
  return run_on_open_session(w, access::write, "child session", c.session_id,
                             [&]() -> caf::expected<rows> {
    auto parent = w.load_session(c.session_id);
    if (!parent)
      return std::move(parent.error());
    auto live = w.live_rows(c.session_id);
    if (!live)
      return std::move(live.error());
    auto start = locate_archive_run("child session", *live, c.archive_ids, c.session_id);
    if (!start)
      return std::move(start.error());
    auto end = *start + c.archive_ids.size();
    auto child = successor_of(w, *parent, now);
    if (auto err = create(w, child, "create the child session"))
      return err;
    if (auto err = w.write_triggers(child.id, c.update_triggers ? c.triggers : parent->triggers))
      return err;
    // Head, summary, tail.
    for (size_t i = 0; i < *start; ++i)
      if (auto id = copy_into(w, (*live)[i], child.id); !id)
        return std::move(id.error());
    auto summary_id = copy_into(w, summary_row(c, child.id), child.id);
    if (!summary_id)
      return std::move(summary_id.error());
    for (size_t i = end; i < live->size(); ++i)
      if (auto id = copy_into(w, (*live)[i], child.id); !id)
        return std::move(id.error());
    if (auto err = w.archive_rows(c.archive_ids,
                                  std::vector<int64_t>(c.archive_ids.size(), *summary_id)))
      return err;
    if (auto err = w.end_session(c.session_id, now, child_end_reason, "end the parent session"))
      return err;
    if (auto err = log_commit(w, c, child.id, *summary_id))
      return err;
    return w.live_rows(child.id);
  });
}

caf::expected<session_record> reset(session_writer& w, const std::string& session_id,
                                    int head_count, time_ms now, const std::string& reason,
                                    int64_t max_row_tokens) {
  if (auto err = check_reset_request(head_count, now, max_row_tokens))
    return err;
  return run_on_open_session(w, access::write, "reset", session_id,
                             [&]() -> caf::expected<session_record> {
    auto old = w.load_session(session_id);
    if (!old)
      return std::move(old.error());
    auto live = w.live_rows(session_id);
    if (!live)
      return std::move(live.error());
    auto child = successor_of(w, *old, now);
    if (auto err = create(w, child, "create the reset session"))
      return err;
    // The head and the latest summary, without any row that cannot fit.
    for (auto i : plan_reset_copy(*live, head_count, max_row_tokens))
      if (auto id = copy_into(w, (*live)[i], child.id); !id)
        return std::move(id.error());
    if (auto err = w.end_session(session_id, now, reason, "end the reset session"))
      return err;
    return child;
  });
}

caf::expected<checkpoint_record> checkpoint(session_writer& w, const std::string& session_id,
                                            const std::string& name, time_ms now) {
  if (name.empty() || name.size() > 128)
    return bad_request("checkpoint: name must be 1..128 bytes");
  return run_on_open_session(w, access::write, "create checkpoint", session_id,
                             [&]() -> caf::expected<checkpoint_record> {
    auto last = w.last_row_id(session_id);
    if (!last)
      return std::move(last.error());
    checkpoint_record cp{session_id, name, *last, now};
    if (auto err = w.put_checkpoint(cp))
      return err;
    return cp;
  });
}

caf::expected<std::vector<message>> rollback_to_checkpoint(session_writer& w,
                                                           const std::string& session_id,
                                                           const std::string& name) {
  auto mark = run_on_open_session(w, access::read, "load checkpoint", session_id,
                                  [&]() -> caf::expected<int64_t> {
    auto cp = w.find_checkpoint(session_id, name);
    if (!cp)
      return std::move(cp.error());
    if (!*cp)
      return not_found("no checkpoint '" + name + "' in session '" + session_id + "'");
    if (const auto& by = (*cp)->retired_by; !by.empty())
      return bad_request("checkpoint '" + name + "' was undone by the rollback to '" + by
                         + "': its rows are rolled back; create it again to use the name");
    return (*cp)->last_message_id;
  });
  if (!mark)
    return std::move(mark.error());
  // The single writer runs one operation at a time: nothing changed since the read.
  return rollback_after_row(w, session_id, *mark, name);
}

caf::expected<std::vector<message>> rollback_after_row(session_writer& w,
                                                       const std::string& session_id,
                                                       int64_t mark, const std::string& label) {
  if (mark < 0)
    return bad_request("rollback: a negative row id");
  using rows = std::vector<message>;
  return run_on_open_session(w, access::write, "roll back", session_id,
                             [&]() -> caf::expected<rows> {
    if (auto err = w.roll_back_after(session_id, mark, label))
      return err;
    return w.live_rows(session_id);
  });
}

caf::expected<session_record> end(session_writer& w, const std::string& session_id, time_ms now,
                                  const std::string& reason) {
  if (auto err = check_label(reason, "end reason"))
    return err;
  return run_on_open_session(w, access::write, "end session", session_id,
                             [&]() -> caf::expected<session_record> {
    if (auto err = w.end_session(session_id, now, reason, "end session"))
      return err;
    return w.load_session(session_id);
  });
}

} // namespace mneme::session_commits
