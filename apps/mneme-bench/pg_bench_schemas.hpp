// Where a benchmark's PostgreSQL runs go (mneme-bench storage --backend postgres,
// mneme-bench nodes): a server URL (given, or the throw-away cluster's) under which
// every run gets a schema of its own, all dropped when the object goes. pg_trgm is
// created once in public, where every run's search_path finds it (a store would
// otherwise create it in the first run's schema, out of the others' path).
// Thread: the bench's main thread.
#pragma once

#include <string>
#include <vector>

#include "store/store_params.hpp"

namespace mneme::bench {

class pg_bench_schemas {
public:
  // `prefix` names the schemas ("mneme_bench" -> mneme_bench_<pid>_<n>); `who` names
  // the bench in the message printed when they cannot be dropped.
  pg_bench_schemas(std::string url, std::string prefix, std::string who);
  ~pg_bench_schemas();
  pg_bench_schemas(const pg_bench_schemas&) = delete;
  pg_bench_schemas& operator=(const pg_bench_schemas&) = delete;

  // The URL of a new, empty schema (search_path: it, then public).
  std::string fresh_url();
  // The parameters of a new, empty PostgreSQL store.
  store_params fresh();

private:
  std::string base_, prefix_, who_;
  std::vector<std::string> schemas_;
};

} // namespace mneme::bench
