// The two ways of filling mneme's three recall indexes that the benchmarks
// compare: the committed background indexer (store/fts_indexer index_pending, in
// the ticks of an idle writer) and one bulk transaction (an INSERT ... SELECT per
// index, FTS5's own bulk path), plus the check that either left every row
// indexed. Used by `mneme-bench recall` (index_ratio_all) and `mneme-bench
// index-work` (one way, for instruction counts), with the file helper both use;
// only mneme-bench links this.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "caf/error.hpp"
#include "caf/expected.hpp"

namespace mneme {
class db_connection;
}

namespace mneme::bench {

// Ticks of store/fts_indexer with the default pacing of an idle writer (nothing
// waits, every row may go) until caught up (index_all_pending); `after_tick`,
// when given, runs after each tick's commit. Returns the number of ticks.
caf::expected<int64_t> fill_indexes_by_ticks(db_connection& db,
                                             const std::function<void()>& after_tick = {});

// Removes a database file and the files SQLite and the writer lock keep beside it.
void remove_db_files(const std::string& path);

// One IMMEDIATE transaction: each index takes every unindexed row by one
// INSERT ... SELECT, and the watermark moves to the last message.
caf::error fill_indexes_in_bulk(db_connection& db);

// The number of messages, or an error unless the watermark is at the last
// message and each index holds one entry per message.
caf::expected<int64_t> check_all_indexed(db_connection& db);

} // namespace mneme::bench
