// What `mneme-bench runtime` sends and reads back (bench_runtime.cpp): each
// (session, turn)'s session key and user text, the bench's one byte of knowledge per
// (session, turn), and the read-only pass over the stored user rows that finds which
// acknowledged turns were stored (once or twice) and which were lost.
// Only mneme-bench's runtime benchmark includes it. Thread: the caller's; the pass opens
// its own read-only connection (run it once the runtime has stopped).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mneme::bench {

// What the bench knows of one (session, turn); one byte each, index session * turns + turn.
enum turn_bit : uint8_t {
  acknowledged = 1, // a turn_reply came back
  stored = 2,       // its user row is in the store
  stored_twice = 4, // a retry stored it again (the first attempt had stored it)
};

// The key of the bench's session `session`: "bench-<session>".
std::string runtime_session_key(int session);

// The user text of (session, turn): "<session>:<turn> " then the filler; the prefix is
// what the store check reads back.
std::string runtime_turn_text(int session, int turn, const std::string& filler);

// What the read-only pass over the stored rows found.
struct store_check {
  std::string error;                  // empty = the check ran to the end
  int64_t stored_sessions = 0;
  int64_t user_rows = 0;              // real user rows (not summaries)
  int64_t unrecognised_user_rows = 0; // rows whose key or "<session>:<turn>" prefix is not ours
  int64_t live_bytes = 0;             // content bytes of the live rows
  double seconds = 0;
};

// Streams the stored user rows of the SQLite database at `path` (no listing, no actor,
// no timeout) and sets `stored` (and `stored_twice`) in `turns_state`.
// REQUIRES: turns_state.size() == sessions * turns.
store_check check_stored_turns(const std::string& path, int sessions, int turns,
                               std::vector<uint8_t>& turns_state);

} // namespace mneme::bench
