// What the files of the PostgreSQL store share (store/pg/pg_store*.cpp): bytea
// parameters and fields, row decoding, the session lookups every operation starts
// with, and the exception guard. Only for store/pg.
// Thread: the store's owner.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/binarystring>
#include <pqxx/result>
#include <pqxx/transaction_base>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "messages/storage_types.hpp"
#include "messages/transcript.hpp"
#include "policies/reconnect_plan.hpp"
#include "store/pg/pg_error.hpp"

namespace mneme::pg {

// The column list of every session read, in the order decode_session expects.
#define MNEME_PG_SESSION_COLUMNS                                                      \
  "id, user_id, session_key, parent_id, model, started_at_ms, ended_at_ms, "          \
  "end_reason, cooldown_until_ms, cooldown_reason, anti_thrash_strikes, "             \
  "lock_until_ms, probe_pending, fallback_streak, compaction_count, last_prompt_tokens"

// The column list of every message read (from message_rows), as decode_messages expects.
#define MNEME_PG_MESSAGE_COLUMNS                                                        \
  "id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp_ms, " \
  "token_estimate, active, compacted, is_summary, replaced_first_id, replaced_last_id, " \
  "archived_by"

// A bytea parameter holding `s` as given (NUL and invalid UTF-8 included).
pqxx::binarystring bytes(const std::string& s);
// PostgreSQL's text form of a bigint[] ("{1,2,3}"), a parameter cast with ::bigint[].
std::string bigint_array(const std::vector<int64_t>& ids);
// The bytes of a bytea field.
std::string text_of(const pqxx::field& f);

session_record decode_session(const pqxx::row& r);
// Rows selected with MNEME_PG_MESSAGE_COLUMNS; `archived_by`, when given, receives
// each row's archived_by column.
caf::expected<std::vector<message>> decode_messages(const pqxx::result& rows,
                                                    std::vector<int64_t>* archived_by = nullptr);

std::string unknown_session(const std::string& id);

// Inside `t`: not_found unless the session exists (text that is not a valid session
// id names no session and never reaches a query).
caf::error require_session(pqxx::transaction_base& t, const std::string& session_id);
// The live context of a session inside `t`. REQUIRES: the session exists.
caf::expected<std::vector<message>> live_rows(pqxx::transaction_base& t,
                                              const std::string& session_id);

// Inserts the sessions row of `rec` inside `t` (the prepared "session_insert": id,
// user, key, parent, model, started, ended, end reason); false when a session with
// that id exists.
bool insert_session(pqxx::transaction_base& t, const session_record& rec);

// Inserts one message row and its live state row inside `t` (the prepared
// "message_insert"; the recall columns are left to the indexer, pg_indexer.hpp);
// position 0 means "= id". Returns the
// new id. `fence_token` is the lease the row is written under (0: none, outside node
// mode; stored as NULL). REQUIRES: `m` validated, its session open.
int64_t insert_message_row(pqxx::transaction_base& t, const message& m, int64_t position,
                           int64_t fence_token = 0);

// Runs `body` (returning caf::expected<T> or caf::error) and turns a libpqxx
// exception into the errc of pg_error.hpp. When the connection was lost before
// anything was committed (pg_connection_lost), `body` runs again after the waits of
// policies/reconnect_plan (libpqxx connects again on that run): a database restart
// costs the caller a wait, not an error. REQUIRES: `body` is one whole transaction (or
// none), so that running it again after a lost connection does its work once.
// guarded() without running `body` again: for a step of a transaction that spans calls
// (the group's COMMIT), which its caller starts over as a whole.
template <class F>
auto guarded_once(const std::string& what, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::exception& e) {
    return pg_failure(e, what);
  }
}

template <class F>
auto guarded(const std::string& what, F&& body) -> decltype(body()) {
  int64_t waited_ms = 0;
  for (int attempt = 0;; ++attempt) {
    try {
      return body();
    } catch (const std::exception& e) {
      auto wait = pg_connection_lost(e)
                    ? policies::reconnect_wait_ms(policies::reconnect_limits{}, attempt, waited_ms)
                    : std::nullopt;
      if (!wait)
        return pg_failure(e, what);
      std::this_thread::sleep_for(std::chrono::milliseconds{*wait});
      waited_ms += *wait;
    }
  }
}

} // namespace mneme::pg
