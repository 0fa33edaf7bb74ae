// Stored vectors of semantic recall (issue 48): what both backends share about them.
// The contract of the message_store operations (store/message_store.hpp, "embeddings"):
//
//   rows_to_embed(source, after_id, limit)
//     The rows with id > after_id in id order, at most `limit` (1..embed_read_max_rows):
//     source 0: every message row of any state (live, archived, rolled back: archived
//     rows stay findable), with its session's user id, role, is_summary and content;
//     source 1: every fact version (active or retired: a put inserts a new version with
//     a new id, so an updated fact is found above the watermark as a new row; the
//     embedder skips retired ones). scanned_through = the last id returned, or after_id
//     when none. The store filters nothing else: what is embedded is the policy's call
//     (policies/embed_plan.hpp).
//   store_vectors(write)
//     One transaction: every vector of the batch (a (model, dims, source, id) already
//     stored is kept as it is: a vector is never rewritten), and the watermark of
//     (model, dims, source) moved to max(its value, write.through). All or nothing.
//     bad_request: empty model, dims outside 1..embed_max_dims, a vector of another
//     size or with a non-finite number, a source other than 0/1, through < 0.
//   embed_progress_of(model, dims)
//     The watermarks of the model (0 when it never stored), the rows above them and the
//     vectors stored for it.
//   stored_vectors(model, dims, source, after_id, limit)
//     The stored vectors of (model, dims, source) with id > after_id in id order, at
//     most `limit` (1..embed_read_max_rows): the start-up rebuild pages through them.
//
// A model or dimension change starts a new (model, dims) with watermark 0: its vectors
// are added beside the old ones, which stay in the database (nothing is deleted).
// Encoding: a vector is dims float32 values, little-endian, back to back (4 * dims
// bytes; SQLite BLOB, PostgreSQL bytea). Pure functions here; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caf/error.hpp"

#include "messages/embedding_rows.hpp"

namespace mneme {

inline constexpr int32_t embed_max_dims = 4096;
inline constexpr int64_t embed_read_max_rows = 100000;

std::string encode_vector(const std::vector<float>& v);
// nullopt when `bytes` is not `dims` float32 values.
std::optional<std::vector<float>> decode_vector(std::string_view bytes, int32_t dims);

caf::error check_embed_write(const embed_write& w);
caf::error check_embed_read(int32_t source, int64_t after_id, int64_t limit);
caf::error check_embed_model(const std::string& model, int32_t dims);

} // namespace mneme
