// Opens the recall_source (store/message_store.hpp) of the configured backend: a
// read-only SQLite connection (store/sqlite/store_reader.hpp) or a PostgreSQL connection
// of its own (store/pg/pg_recall.hpp). Used by the recall pool (actors/recall) and
// the tests. Thread: the caller's; the source then belongs to one thread at a time.
#pragma once

#include <memory>

#include "caf/expected.hpp"

#include "store/message_store.hpp"
#include "store/store_params.hpp"

namespace mneme {

// Errors: those of the backend's open.
caf::expected<std::unique_ptr<recall_source>> open_recall_source(const store_params& params);

} // namespace mneme
