// The `database:` block of the configuration: where and how the store keeps its file.
// Plain values filled by apps/common/config/app_config; read by the storage actor at spawn.
#pragma once

#include <cstdint>
#include <string>

namespace mneme {

struct store_params {
  std::string backend = "sqlite";      // "sqlite" or "postgres" (store/pg, stage 1)
  std::string url;                     // postgres: postgresql://user:pass@host:port/db
  std::string url_file;                // postgres: a file whose first line is the URL
  std::string path = "mneme.db";       // SQLite file; ":memory:" for tests
  int64_t busy_timeout_ms = 5000;      // only a foreign process can hold a lock
  int64_t max_batch = 512;             // appends per group commit
  bool synchronous_full = true;        // PRAGMA synchronous=FULL (else NORMAL)
  int64_t readers = 2;                 // read-only connections for recall/export
  std::string cold_storage_dir = "cold"; // JSONL of ended sessions (SPEC §7)
  int64_t max_content_bytes = 32 << 20; // larger message contents are refused (bad_request)
};

} // namespace mneme
