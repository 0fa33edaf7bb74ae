// Free space and the idle-time full-text indexer (docs/operations.md "Disk full"):
// whether an index tick may run given the free space of the database's filesystem, how
// much text it may take, and the tick's cap after a refused or a committed transaction.
// Appends come first: below a reserve of free space no index tick runs, so the space
// that returns after a full disk serves acknowledged appends before the catch-up, and a
// tick never takes more text than the space above the reserve can hold in log and index
// pages. A refused index transaction halves the cap (down to a floor), a committed one
// doubles it back (up to the pacing's caps), so the catch-up after a full disk goes in
// transactions the returned space can hold.
// Pure; standard library only; any thread. Used by actors/storage (index_schedule and
// the storage actor); figures behind the defaults: docs/operations.md "Disk full".
#pragma once

#include <cstdint>

namespace mneme {

// The default database.index_free_space_reserve_bytes: 64 MiB. Above one tick's
// write-ahead log at the default pacing (policies/index_pacing log_bytes, 24 MiB), so
// a tick that starts at the reserve cannot take the last space appends need, and a few
// minutes of appends at a busy gateway's rate (about 100 rows/s of 2 KiB: 12 MiB a
// minute) find room while the operator frees more.
inline constexpr int64_t default_index_free_space_reserve_bytes = 64LL * 1024 * 1024;

// Disk bytes a catch-up tick may need per byte of row text: its index pages twice, once
// in the write-ahead log and once in the file after the checkpoint, at the measured
// worst case (random words: the database grows 6.5-6.7 bytes per indexed text byte,
// natural text 4.7-4.9; docs/operations.md "Disk full"), rounded up.
inline constexpr int64_t index_disk_bytes_per_text_byte = 16;

// Free space is read again this often while ticks wait for it.
inline constexpr int64_t index_space_poll_ms = 1000;

enum class index_space_verdict {
  idle,           // nothing to index
  run,            // a tick may run, with at most max_text_bytes of text
  wait_for_space, // free space below the reserve (or just above it after a refusal)
};

struct index_space_inputs {
  int64_t free_bytes = -1;        // free space of the database's filesystem; < 0 unknown
  int64_t reserve_bytes = default_index_free_space_reserve_bytes; // <= 0: no reserve
  int64_t backlog_rows = 0;       // rows missing from at least one index
  bool refused_last = false;      // the last index transaction was refused (full disk)
  int64_t disk_bytes_per_text_byte = index_disk_bytes_per_text_byte; // < 1 counts as 1
};

struct index_space_decision {
  index_space_verdict verdict = index_space_verdict::idle;
  // run: the text the tick may take (it always takes at least one row); INT64_MAX
  // when the free space is unknown.
  int64_t max_text_bytes = 0;
};

// The verdict: idle without backlog; run when the free space is unknown (the retry
// delay of policies/index_retry paces refusals then); wait_for_space below the
// reserve, and, after a refused transaction, below the reserve and one eighth of it
// more (so a disk that just refused is not tried again at the first freed page);
// otherwise run, with the text that (free - reserve) holds at
// disk_bytes_per_text_byte (at least 1 byte).
index_space_decision decide_index_space(const index_space_inputs& in);

// A tick's cap: rows and text bytes per index transaction.
struct index_cap {
  int64_t rows = 0;
  int64_t bytes = 0;
};

// The smallest cap a refusal shrinks to: 16 rows, 64 KiB of text.
inline constexpr index_cap index_cap_floor{16, 64 * 1024};

// After a refused transaction: each figure halved, not below `floor` (nor below 1).
index_cap shrink_index_cap(const index_cap& cap, const index_cap& floor = index_cap_floor);

// After a committed one: each figure doubled, not above `max` (values below 1 are
// treated as 1; no overflow).
index_cap grow_index_cap(const index_cap& cap, const index_cap& max);

// A cap a refusal shrank grows back only after this many transactions committed at it:
// doubling after every commit made every other transaction of a catch-up on a nearly
// full disk a refused one (each costing its index work and a retry delay); after four
// at one size, one in five is.
inline constexpr int64_t index_commits_per_cap_doubling = 4;

// Whether the cap grows after a commit, `commits_at_cap` (>= 1) having committed at it
// since it last changed.
inline bool index_cap_grows(int64_t commits_at_cap) {
  return commits_at_cap >= index_commits_per_cap_doubling;
}

// A refused transaction whose refusal shrank the cap is tried again this soon: the
// smaller one may fit (and the refused one's log pages were given back). At the floor
// the doubling delay of policies/index_retry applies.
inline constexpr int64_t index_shrunk_retry_ms = 100;

} // namespace mneme
