// The runtime: the storage actor, the chat, summarizer and hygiene pools, the supervisor and the
// gateway, spawned in dependency order from one configuration and stopped in reverse.
// The daemon, the CLI's `mneme run`, the soak runner, the benchmarks and the tests all
// start mneme through it. The caller owns the actor system and keeps the runtime alive
// while it uses the handles; stop() (or the destructor) ends every actor it spawned.
//
// Thread: start/stop/ask from one non-actor thread (main or a test); the handles may be
// used from anywhere by messages.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/logger.h>

#include "caf/all.hpp"

#include "actors/embed/embedder_actor.hpp"
#include "actors/gateway/gateway_actor.hpp"
#include "actors/gateway_params.hpp"
#include "actors/llm/llm_endpoint.hpp"
#include "actors/llm/llm_pool.hpp"
#include "actors/runtime_metrics.hpp"
#include "actors/storage/storage_actor.hpp"
#include "actors/supervisor/supervisor_actor.hpp"
#include "policies/compression_params.hpp"
#include "store/store_params.hpp"

namespace mneme {

struct runtime_config {
  compression_params compression;
  model_params model;
  llm::llm_pool_config chat;        // the session's main model
  llm::llm_pool_config summarizer;  // auxiliary.compression
  // auxiliary.compression with the hygiene timeouts (llm::make_hygiene_pool_config):
  // the summaries of the gateway's hygiene compactions (T3, T4). Empty = those use
  // the summarizer pool.
  std::optional<llm::llm_pool_config> hygiene;
  store_params database;
  gateway_params gateway;
  // Semantic recall (issue 48): set while `embeddings:` is on (its URL and key resolved:
  // apps/common/host/runtime_host.hpp). Empty: no vector index, no embedder, and every
  // search is full text.
  std::optional<embedder_config> embeddings;
  std::function<time_ms()> clock = system_clock_ms; // test seam
  std::shared_ptr<spdlog::logger> log;              // null = no logging
  std::shared_ptr<runtime_metrics> metrics;         // null = start() creates one
};

class runtime {
 public:
  // Opens the store (errors such as storage_cant_open come back here), loads the stored
  // vectors into the index when embeddings are on (a storage error comes back here),
  // and spawns the actors. REQUIRES: the pools' configs are valid (see llm::spawn_llm_pool).
  static caf::expected<std::unique_ptr<runtime>> start(caf::actor_system& sys,
                                                       runtime_config cfg);
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  // Ends the gateway (and with it every session actor), the supervisor, the pools and
  // the storage actor. Idempotent.
  void stop();

  const gateway_actor& gateway() const { return gateway_; }
  const storage_actor& storage() const { return storage_; }
  const supervisor_actor& supervisor() const { return supervisor_; }
  const llm_pool_actor& chat_pool() const { return chat_; }
  const llm_pool_actor& summary_pool() const { return summarizer_; }
  // Null when runtime_config::hygiene is empty.
  const llm_pool_actor& hygiene_pool() const { return hygiene_; }
  const runtime_config& config() const { return cfg_; }
  // The counters every actor of this runtime writes (never null after start()).
  const std::shared_ptr<runtime_metrics>& metrics() const { return cfg_.metrics; }
  // The recall pool; null with an in-memory database.
  const recall_actor& recall() const { return recall_; }
  // Semantic recall: the vector index (filled from the stored vectors before start()
  // returned) and the embedder; both null while runtime_config::embeddings is empty.
  const std::shared_ptr<vector_index>& vectors() const { return vectors_; }
  const embedder_actor& embedder() const { return embedder_; }

  // The request timeout a caller of the gateway should use.
  std::chrono::milliseconds turn_timeout() const;

 private:
  runtime(caf::actor_system& sys, runtime_config cfg) : sys_(sys), cfg_(std::move(cfg)) {}
  // The index from the stored vectors, then the embedder (runtime_config::embeddings).
  caf::error start_embeddings(caf::actor_system& sys);

  caf::actor_system& sys_;
  runtime_config cfg_;
  storage_actor storage_;
  llm_pool_actor chat_;
  llm_pool_actor summarizer_;
  llm_pool_actor hygiene_;     // null without runtime_config::hygiene
  supervisor_actor supervisor_;
  gateway_actor gateway_;
  lease_actor leases_; // node mode only
  recall_actor recall_;        // null with an in-memory database (no second connection)
  std::shared_ptr<vector_index> vectors_; // semantic recall only
  embedder_actor embedder_;               // semantic recall only
  bool stopped_ = false;
};

// The session parameters the runtime derives from its configuration (exposed for tests
// and tools that spawn sessions themselves).
session_params session_params_of(const runtime_config& cfg);

} // namespace mneme
