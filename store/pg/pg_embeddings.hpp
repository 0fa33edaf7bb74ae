// Stored vectors on PostgreSQL (store/embeddings.hpp states the contract): the
// `embeddings` and `embed_state` tables of schema version 13 (store/pg/pg_schema.cpp).
// Each call is one transaction of its own on `conn`. Thread: the store's owner.
#pragma once

#include <string>
#include <vector>

#include <pqxx/connection>

#include "caf/expected.hpp"

#include "messages/embedding_rows.hpp"

namespace mneme {

caf::expected<embed_candidates> pg_rows_to_embed(pqxx::connection& conn, int32_t source,
                                                 int64_t after_id, int64_t limit);
caf::error pg_store_vectors(pqxx::connection& conn, const embed_write& w);
caf::expected<embed_progress> pg_embed_progress(pqxx::connection& conn, const std::string& model,
                                                int32_t dims);
caf::expected<std::vector<stored_vector>> pg_stored_vectors(pqxx::connection& conn,
                                                            const std::string& model,
                                                            int32_t dims, int32_t source,
                                                            int64_t after_id, int64_t limit);

} // namespace mneme
