// The one skeleton of every transaction that rewrites a session's rows, and the
// primitives a backend supplies for it (store/session_commits.hpp writes each operation
// once on top of them; store/sqlite/sqlite_store_commits.cpp and
// store/pg/pg_store_commits.cpp are the two sets of primitives).
//
// The skeleton (run_on_open_session): begin a transaction, check that the session is
// open, run the operation's body through the primitives, then commit when the body
// succeeded and roll back otherwise. An exception a primitive throws rolls back too and
// becomes the backend's errc (failure()). So a refused or failed operation leaves the
// database as it was, and a returned one is durable.
//
// A session_writer lives for one operation (one transaction at a time) on the store's
// owner's thread.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "messages/storage_types.hpp"
#include "messages/transcript.hpp"

namespace mneme {

// A live row's place in live order: its id and its stored position (= id when it
// never moved).
struct live_place {
  int64_t id = 0;
  int64_t position = 0;
};

// Where a row is: its session and whether it is archived (compacted) or live (active).
struct row_place {
  std::string session_id;
  bool active = false;
  bool compacted = false;
};

// A checkpoint as a rollback reads it.
struct checkpoint_mark {
  int64_t last_message_id = 0;
  std::string retired_by; // the label of the rollback that retired it; "" while usable
};

class session_writer {
public:
  // A write transaction, or a read of committed state (a rollback's checkpoint lookup).
  enum class access { read, write };

  virtual ~session_writer() = default;

  // --- the transaction
  // REQUIRES: none open.
  virtual caf::error begin(access a) = 0;
  // Durable on return without error (a read just ends). REQUIRES: one open.
  virtual caf::error commit() = 0;
  // Ends the open transaction, if any, keeping nothing of it.
  virtual void roll_back() noexcept = 0;
  // The errc of an exception a primitive threw, naming the operation `what`; a backend
  // whose primitives report every failure as a value rethrows it.
  virtual caf::error failure(const std::exception& e, const char* what) = 0;

  // --- inside the transaction
  // not_found / bad_request unless the session exists and is open (see message_store).
  virtual caf::error require_open(const std::string& session_id) = 0;
  // REQUIRES (load_session, live_*): the session exists.
  virtual caf::expected<session_record> load_session(const std::string& session_id) = 0;
  virtual caf::expected<std::vector<live_place>> live_places(const std::string& session_id) = 0;
  // The live context (message_store::live_context).
  virtual caf::expected<std::vector<message>> live_rows(const std::string& session_id) = 0;
  // Where row `id` is; nullopt when no row has that id.
  virtual caf::expected<std::optional<row_place>> find_row(int64_t id) = 0;
  // Validates `m` as an append and inserts it live into its (open) session at
  // `position` (0: its own id). Returns its id.
  virtual caf::expected<int64_t> insert_message(const message& m, int64_t position) = 0;
  // Archives each live row ids[i] into by[i] (active = 0, compacted = 1, archived_by).
  // REQUIRES: ids.size() == by.size(); each id checked live.
  virtual caf::error archive_rows(const std::vector<int64_t>& ids,
                                  const std::vector<int64_t>& by) = 0;
  virtual caf::error write_triggers(const std::string& session_id, const trigger_state& t) = 0;
  // A new session id (store/session_ids.hpp) for a session created at `now`.
  virtual std::string next_session_id(time_ms now) = 0;
  // Inserts the sessions row of `rec` (id, user, key, parent, model, started, ended,
  // end reason); false when a session with that id exists. `what` names the step in a
  // storage error.
  virtual caf::expected<bool> insert_session(const session_record& rec, const char* what) = 0;
  // Ends the session at `now` (at least 1 ms) for `reason`.
  virtual caf::error end_session(const std::string& session_id, time_ms now,
                                 const std::string& reason, const char* what) = 0;
  // The highest row id of the session, any state; 0 when it has none.
  virtual caf::expected<int64_t> last_row_id(const std::string& session_id) = 0;
  // Inserts the checkpoint, or moves an existing name to cp and makes it usable again.
  virtual caf::error put_checkpoint(const checkpoint_record& cp) = 0;
  virtual caf::expected<std::optional<checkpoint_mark>>
  find_checkpoint(const std::string& session_id, const std::string& name) = 0;
  // Adds `e` (checked: store/compaction_log.hpp) to the compaction log; its id.
  virtual caf::expected<int64_t> insert_compaction_log(const compaction_log_entry& e) = 0;
  // In this order: revives the rows archived by a row above `mark` (live again),
  // rolls back every row above `mark` that is live or archived, retires the
  // checkpoints above `mark` by `label`.
  virtual caf::error roll_back_after(const std::string& session_id, int64_t mark,
                                     const std::string& label) = 0;
};

// The skeleton: `body` (() -> caf::expected<T>) runs inside one transaction of `w` on the
// open session `session_id`; committed only when it succeeds. `what` names the operation
// in the error of an exception.
template <class Body>
auto run_on_open_session(session_writer& w, session_writer::access a, const char* what,
                         const std::string& session_id, Body&& body) -> decltype(body()) {
  using result_type = decltype(body());
  try {
    if (auto err = w.begin(a))
      return err;
    result_type result = [&]() -> result_type {
      if (auto err = w.require_open(session_id))
        return err;
      return body();
    }();
    if (result) {
      if (auto err = w.commit()) {
        w.roll_back();
        return err;
      }
      return result;
    }
    w.roll_back();
    return result;
  } catch (const std::exception& e) {
    w.roll_back();
    return w.failure(e, what);
  }
}

} // namespace mneme
