// The recall pool (SPEC §4): one typed handle in front of a few detached reader
// actors, each owning one read-only connection of the configured backend
// (store/recall_sources.hpp: SQLite WAL readers run beside the single writer and
// never block it; on PostgreSQL each reader holds a connection of its own). A search goes to an idle reader; while all readers
// are busy, up to `max_queued` searches wait in order and any beyond that are
// refused with errc::overloaded (the caller retries) instead of growing latency.
// Every reader answers a search with its backend's recall_source (store/recall.hpp,
// store/pg/pg_recall.hpp): tenant scoped, routed, ranked, anchored. A message is findable as soon as the storage
// actor acknowledged its append: the ack follows the durable COMMIT, and a reader
// starts a fresh WAL snapshot for every search.
//
// Thread: the front actor only dispatches (event-based, never blocks); readers run
// on their own threads. Talk to the pool only by messages.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include <spdlog/logger.h>

#include "caf/fwd.hpp"
#include "caf/replies_to.hpp"
#include "caf/typed_actor.hpp"

#include "actors/embed/embed_metrics.hpp"
#include "messages/embedding_types.hpp"
#include "messages/mneme_types.hpp"
#include "store/vector_index.hpp"
#include "store/store_params.hpp"

namespace mneme {

using recall_actor = caf::typed_actor<
  // One search: the hits, one per session, best first.
  caf::replies_to<rc_search_atom, recall_request>::with<recall_result>>;

struct recall_pool_params {
  std::size_t readers = 2;       // read-only connections; 1..16 (store_params::readers)
  std::size_t max_queued = 256;  // searches waiting for a reader before overloaded
  std::chrono::milliseconds reader_timeout{30000}; // one search on a reader
};

// Semantic recall (issue 48): the process's vector index and the embedder that turns a
// search query into a vector. Both empty while embeddings are off: every search is then
// full text, exactly as without them. With them, a search whose mode is not fts first
// asks the embedder for the query's vector (the front actor waits for it without
// blocking, at most query_timeout; those searches count against max_queued), then
// hands request and vector to a reader (store/vector_recall.hpp runs the legs). An
// embedder error or timeout runs the search on full text; recall_result says
// provider_failed or timed_out. A search is never failed for its vector leg.
struct recall_vectors {
  std::shared_ptr<vector_index> index;
  query_embedder embedder;
  std::chrono::milliseconds query_timeout{2000}; // one query embedding
  // Counts the searches run on full text only for their vector leg; may be null.
  std::shared_ptr<embed_metrics> metrics;
};

// Opens `params.readers` read-only connections of `params.backend` on the calling
// thread (so a missing or foreign file, or an unreachable or unmigrated PostgreSQL,
// fails here with its errc) and spawns the pool. Keep the handle:
// the readers are linked to the front actor and end with it. `log` may be null.
// Errors: bad_request when readers is outside 1..16; the errors of
// open_recall_source.
caf::expected<recall_actor> spawn_recall(caf::actor_system& sys, const store_params& params,
                                         std::shared_ptr<spdlog::logger> log,
                                         recall_pool_params pool = {},
                                         recall_vectors vectors = {});

} // namespace mneme
