// The two ways of filling mneme's three recall indexes that the benchmarks
// compare: the committed background indexer (store/fts_indexer index_pending, in
// the ticks of an idle writer, one index per tick) and FTS5's own bulk path (one
// transaction per index with one INSERT ... SELECT), plus the check that either left every row
// indexed. Used by `mneme-bench recall` (index_ratio_all) and `mneme-bench
// index-work` (one way, for instruction counts), with the file helper both use;
// only mneme-bench links this.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "store/sqlite/fts_indexer.hpp"

namespace mneme {
class db_connection;
}

namespace mneme::bench {

// Processor seconds of the calling thread in each index's transactions, by
// position (fts_index): what a way's work on that index cost the writer. The
// checkpoints after the commits are left out: the writer's own checkpoint
// copies whatever the log holds, several indexes' ticks at once.
using index_thread_seconds = std::array<double, fts_index_count>;

// Ticks of store/fts_indexer with the default pacing of an idle writer (nothing
// waits, every row may go) until caught up (index_all_pending); `after_tick`,
// when given, runs after each tick's commit. `by_index`, when given, gains each
// tick's seconds (its after_tick left out) on the index the tick filled.
// Returns the number of ticks.
caf::expected<int64_t> fill_indexes_by_ticks(db_connection& db,
                                             const std::function<void()>& after_tick = {},
                                             index_thread_seconds* by_index = nullptr);

// Removes a database file and the files SQLite and the writer lock keep beside it.
void remove_db_files(const std::string& path);

// FTS5's bulk insert per index: one IMMEDIATE transaction per index, each with
// one INSERT ... SELECT of every row above that index's watermark and the
// watermark moved to the last message; `after_commit`, when given, runs after
// each COMMIT; `by_index` as above.
caf::error fill_indexes_in_bulk(db_connection& db, const std::function<void()>& after_commit = {},
                                index_thread_seconds* by_index = nullptr);

// The number of messages, or an error unless every index's watermark (and the
// lowest) is at the last message and each index holds one entry per message.
caf::expected<int64_t> check_all_indexed(db_connection& db);

} // namespace mneme::bench
