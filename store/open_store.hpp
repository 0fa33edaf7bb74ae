// Opens the store of either backend by its params (store/message_store.hpp): the one
// place that picks SQLite or PostgreSQL for a writer (the storage actor, benchmarks,
// tests, tools that run a store on their own thread).
// Thread: the caller's; the store then belongs to it.
#pragma once

#include <memory>

#include "caf/expected.hpp"

#include "store/message_store.hpp"
#include "store/store_params.hpp"

namespace mneme {

// sqlite_store::open or pg_store::open by params.backend, with their errors.
caf::expected<std::unique_ptr<message_store>> open_message_store(const store_params& params);

// The store a daemon writes through (the storage actor, `mneme compact`): SQLite's open
// takes the file's writer lock; on PostgreSQL, with params.node_id the store writes in
// node mode under its leases (pg_store::set_node), else it takes the database's writer
// lock (pg_store::lock_as_only_writer, storage_locked when another writer holds it).
caf::expected<std::unique_ptr<message_store>> open_writer_store(const store_params& params);

} // namespace mneme
