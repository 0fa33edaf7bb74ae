// Facts found by meaning (issue 48): a fact search whose query carries its vector runs
// the backend's full-text search and the user's nearest fact vectors in the process's
// vector index, fused by reciprocal rank (policies/rank_fusion.hpp) as the message
// search's hybrid mode is. Backend-neutral: both stores answer through
// message_store::query_facts and facts_by_id. Called by the storage actor only.
//
// Decisions:
//   - The vector leg runs when the query has text with a positive clause, a vector of
//     the index's dimensions and the store an index; otherwise the search is exactly
//     the full-text one (a list when the text is empty).
//   - Each leg brings fusion_leg_conversations(limit) facts (3 × limit, at least 10);
//     a vector hit counts only when the database has it under the same user (checked
//     again: the index is per user) and, without include_inactive, while it is the
//     active version (the index keeps the vector of a replaced or removed version).
//   - Equal fused scores keep the full-text order first (fuse_rankings' tie rule).
// Thread: the caller's; the index is thread-safe.
#pragma once

#include "caf/expected.hpp"

#include "messages/storage_types.hpp"
#include "store/message_store.hpp"
#include "store/vector_index.hpp"

namespace mneme {

// The search of `q` on `store`, with the vector leg when `index` is non-null and the
// query qualifies (above). Errors: those of query_facts and facts_by_id.
caf::expected<std::vector<fact_record>> search_facts(message_store& store,
                                                     const vector_index* index,
                                                     const fact_query& q);

} // namespace mneme
