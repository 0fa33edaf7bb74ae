// Stored vectors on SQLite (store/embeddings.hpp states the contract): the
// `embeddings` and `embed_state` tables of schema v14 (store/sqlite/migrations.cpp).
// store_sqlite_vectors REQUIRES the writer connection and runs in its own IMMEDIATE
// transaction; the reads run on any connection. Thread: the thread that owns `db`.
#pragma once

#include <string>
#include <vector>

#include "caf/expected.hpp"

#include "messages/embedding_rows.hpp"

namespace mneme {

class db_connection;

caf::expected<embed_candidates> sqlite_rows_to_embed(db_connection& db, int32_t source,
                                                     int64_t after_id, int64_t limit);
caf::error store_sqlite_vectors(db_connection& db, const embed_write& w);
caf::expected<embed_progress> sqlite_embed_progress(db_connection& db, const std::string& model,
                                                    int32_t dims);
caf::expected<std::vector<stored_vector>> sqlite_stored_vectors(db_connection& db,
                                                                const std::string& model,
                                                                int32_t dims, int32_t source,
                                                                int64_t after_id, int64_t limit);

} // namespace mneme
