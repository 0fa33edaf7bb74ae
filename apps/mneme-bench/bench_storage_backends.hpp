// `mneme-bench storage --backend postgres`: PostgreSQL beside SQLite in one run
// (bench_storage_backends.cpp says what is measured). Only mneme-bench links it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mneme::bench {

struct storage_backends_options {
  bool json = false;
  size_t sessions = 1000;
  int per_session = 30;
  std::string pg_url; // empty: a throw-away cluster
  int64_t recall_messages = 200000; // the recall part's generated corpus, rows
};

int run_storage_backends_bench(const storage_backends_options& o);

} // namespace mneme::bench
