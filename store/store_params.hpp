// The `database:` block of the configuration: where and how the store keeps its file.
// Plain values filled by apps/common/config/app_config; read by the storage actor at spawn.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "store/store_backend.hpp"

namespace mneme {

class vector_index;

struct store_params {
  store_backend backend = store_backend::sqlite;
  std::string url;                     // postgres: postgresql://user:pass@host:port/db
  std::string url_file;                // postgres: a file whose first line is the URL
  std::string path = "mneme.db";       // SQLite file; ":memory:" for tests
  int64_t busy_timeout_ms = 5000;      // only a foreign process can hold a lock
  int64_t max_batch = 512;             // appends per group commit
  bool synchronous_full = true;        // PRAGMA synchronous=FULL (else NORMAL)
  int64_t readers = 2;                 // read-only connections for recall/export
  std::string cold_storage_dir = "cold"; // JSONL of ended sessions (SPEC §7)
  int64_t max_content_bytes = 32 << 20; // larger message contents are refused (bad_request)
  // SQLite: no idle-time index tick runs while the database's filesystem has less free
  // space than this, so space that returns after a full disk serves appends first
  // (policies/index_space.hpp says why 64 MiB); 0 turns the check off.
  int64_t index_free_space_reserve_bytes = 64LL << 20;
  // gateway.node_id (PostgreSQL only): non-empty = node mode, writes fenced by session-key
  // leases (store/pg/pg_leases.hpp) instead of one writer per database.
  std::string node_id;
  // gateway.lease_seconds in ms (node mode): a transaction of this node idle that long
  // (the node paused mid-write) is ended by the server, so it cannot hold a lease row
  // locked against a takeover.
  int64_t node_lease_ms = 10000;
  // Semantic recall (issue 48): the process's vector index, set by the runtime while
  // embeddings are on, never by the configuration. The storage actor's fact search
  // then fuses the user's nearest fact vectors with full text when the query carries
  // its vector (store/fact_vectors.hpp). Null: facts are searched by words only.
  std::shared_ptr<const vector_index> vectors;
};

} // namespace mneme
