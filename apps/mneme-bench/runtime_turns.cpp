// The runtime benchmark's turns and their read-back; see runtime_turns.hpp.
#include "apps/mneme-bench/runtime_turns.hpp"

#include <sqlite3.h>

#include <cassert>
#include <charconv>
#include <chrono>
#include <optional>
#include <string_view>

#include "messages/errc.hpp"
#include "store/sqlite/store_reader.hpp"

namespace mneme::bench {

namespace {

constexpr std::string_view session_key_prefix = "bench-";

// Parses a leading decimal number of `s` ending at `stop`; advances `s` past `stop`.
std::optional<int> leading_int(std::string_view& s, char stop) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end == s.data() + s.size() || *end != stop)
    return std::nullopt;
  s.remove_prefix(static_cast<size_t>(end - s.data()) + 1);
  return v;
}

// The whole of `s` as a decimal number.
std::optional<int> whole_int(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

// The index (session * turns + turn) of a stored user row, from its session key and the
// first characters of its content; nullopt when the row is not one the bench sent.
std::optional<size_t> turn_index(std::string_view key, std::string_view prefix, int sessions,
                                 int turns) {
  std::optional<int> key_session, session, turn;
  if (key.substr(0, session_key_prefix.size()) == session_key_prefix)
    key_session = whole_int(key.substr(session_key_prefix.size()));
  session = leading_int(prefix, ':');
  if (session)
    turn = leading_int(prefix, ' ');
  if (!key_session || !session || !turn || *key_session != *session || *session < 0
      || *session >= sessions || *turn < 0 || *turn >= turns)
    return std::nullopt;
  return static_cast<size_t>(*session) * static_cast<size_t>(turns) + static_cast<size_t>(*turn);
}

// Marks every stored user row's turn; false with out.error set when the scan failed.
bool mark_stored_turns(db_connection& db, int sessions, int turns,
                       std::vector<uint8_t>& turns_state, store_check& out) {
  auto user_rows = db.prepare(
    "SELECT se.session_key, substr(m.content, 1, 24) FROM messages m"
    " JOIN sessions se ON se.id = m.session_id"
    " WHERE m.role = 'user' AND m.is_summary = 0");
  if (!user_rows) {
    out.error = render_error(user_rows.error());
    return false;
  }
  statement_scope s{**user_rows};
  for (;;) {
    int rc = s->step();
    if (rc == SQLITE_DONE)
      return true;
    if (rc != SQLITE_ROW) {
      out.error = render_error(db.failure(rc, "scan user rows"));
      return false;
    }
    ++out.user_rows;
    auto index = turn_index(s->column_text(0), s->column_text(1), sessions, turns);
    if (!index) {
      ++out.unrecognised_user_rows;
      continue;
    }
    auto& st = turns_state[*index];
    st |= (st & stored) ? stored_twice : stored;
  }
}

// One integer of a single-row query; false with out.error set when it failed.
bool read_one_int(db_connection& db, const char* sql, const char* what, int64_t& into,
                  store_check& out) {
  auto stmt = db.prepare(sql);
  if (!stmt) {
    out.error = render_error(stmt.error());
    return false;
  }
  statement_scope s{**stmt};
  if (int rc = s->step(); rc != SQLITE_ROW) {
    out.error = render_error(db.failure(rc, what));
    return false;
  }
  into = s->column_int(0);
  return true;
}

} // namespace

std::string runtime_session_key(int session) {
  return std::string{session_key_prefix} + std::to_string(session);
}

std::string runtime_turn_text(int session, int turn, const std::string& filler) {
  return std::to_string(session) + ":" + std::to_string(turn) + " " + filler;
}

store_check check_stored_turns(const std::string& path, int sessions, int turns,
                               std::vector<uint8_t>& turns_state) {
  assert(turns_state.size() == static_cast<size_t>(sessions) * static_cast<size_t>(turns));
  auto begin = std::chrono::steady_clock::now();
  store_check out;
  store_params params;
  params.path = path;
  auto reader = store_reader::open(params);
  if (!reader) {
    out.error = "reader did not open: " + render_error(reader.error());
    return out;
  }
  auto& db = (*reader)->connection();
  if (!mark_stored_turns(db, sessions, turns, turns_state, out)
      || !read_one_int(db, "SELECT count(*) FROM sessions", "count sessions",
                       out.stored_sessions, out)
      || !read_one_int(db,
                       "SELECT coalesce(sum(length(CAST(m.content AS BLOB))), 0) FROM messages m"
                       " JOIN message_state st ON st.id = m.id WHERE st.active = 1",
                       "live bytes", out.live_bytes, out))
    return out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return out;
}

} // namespace mneme::bench
