// The embedder (issue 48): turns stored rows into vectors in the background and search
// queries into vectors on demand, through an OpenAI-compatible POST /v1/embeddings
// (actors/llm/embedding_wire.hpp, on a curl-multi loop thread of its own).
//
// Background work, never on the acknowledging path (appends are acknowledged by the
// storage actor alone):
//   1. read the rows above the watermark of (model, dims, source) through the storage
//      actor (st_emrows: messages first, then facts), batch_size at a time;
//   2. keep those worth embedding, cut to max_input_chars (policies/embed_plan.hpp);
//   3. call the provider; store the vectors and move the watermark in one transaction
//      (st_emput); then add them to the vector index;
//   4. with nothing left, look again after idle_poll_ms.
// A failing provider: exponential back-off capped at backoff_max_ms (Retry-After
// honoured up to the cap), one call at a time, nothing queued: no hot loop, no growing
// memory; it resumes by itself. A batch the provider refuses as too large is split, and
// a single row it still refuses is skipped (stays findable by full text). A model or
// dimension change starts a new watermark at 0: everything is re-embedded in the
// background while the old vectors stay in the database.
//
// Queries (em_query_atom): one call with the configured query timeout, at most
// max_query_calls at once; while backing off, or beyond that, errc::overloaded at once.
// An empty query is bad_request.
//
// Threads: an event-based actor that never blocks; the HTTP calls run on its own loop
// thread. Keep the handle (an unreferenced actor dies). Logs: logger "embed", no text
// and no key at info level.
#pragma once

#include <chrono>
#include <memory>

#include <spdlog/logger.h>

#include "caf/all.hpp"

#include "actors/embed/embed_metrics.hpp"
#include "actors/embedding_params.hpp"
#include "actors/llm/embedding_wire.hpp"
#include "actors/storage/storage_actor.hpp"
#include "messages/embedding_types.hpp"
#include "store/vector_index.hpp"

namespace mneme {

// The embedder's full interface: the query embedder's (messages/embedding_types.hpp)
// plus its own timer tick.
using embedder_actor = query_embedder::extend<caf::reacts_to<em_tick_atom, int64_t>>;

inline constexpr std::size_t max_query_calls = 16;
// Rows read per storage request for the start-up rebuild of the index.
inline constexpr int64_t rebuild_page_rows = 4096;

struct embedder_config {
  llm::embedding_endpoint endpoint;  // URL, key, model, dims, timeouts
  embedding_params params;           // batch size, cut, back-off, polling, query timeout
};

// The endpoint of `p` with `base_url` and `api_key` already resolved ("builtin" and
// "" replaced by the caller).
llm::embedding_endpoint embedding_endpoint_of(const embedding_params& p,
                                              const std::string& base_url,
                                              const std::string& api_key);

// Spawns the embedder; it starts embedding at once. `index` receives every vector it
// stores (the caller has already loaded the stored ones: rebuild_vector_index).
// `metrics` and `log` may be null.
embedder_actor spawn_embedder(caf::actor_system& sys, embedder_config cfg,
                              storage_actor storage, std::shared_ptr<vector_index> index,
                              std::shared_ptr<embed_metrics> metrics,
                              std::shared_ptr<spdlog::logger> log);

// Loads every stored vector of (model, dims) into `index`, paged, through the storage
// actor, blocking the calling thread (REQUIRES: not a scheduler thread: the runtime's
// start). Returns the vectors loaded or the storage error.
caf::expected<int64_t> rebuild_vector_index(caf::actor_system& sys, const storage_actor& storage,
                                            const std::string& model, int32_t dims,
                                            vector_index& index,
                                            std::chrono::milliseconds page_timeout);

} // namespace mneme
