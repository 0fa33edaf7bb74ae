// Opens the store of either backend by its params (store/message_store.hpp): the one
// place outside the storage actor that picks SQLite or PostgreSQL (benchmarks, tests,
// tools that run a store on their own thread). The storage actor's spawn_storage adds
// its own steps (writer lock, node mode, WAL checkpointer).
// Thread: the caller's; the store then belongs to it.
#pragma once

#include <memory>

#include "caf/expected.hpp"

#include "store/message_store.hpp"
#include "store/store_params.hpp"

namespace mneme {

// sqlite_store::open or pg_store::open by params.backend, with their errors.
caf::expected<std::unique_ptr<message_store>> open_message_store(const store_params& params);

} // namespace mneme
