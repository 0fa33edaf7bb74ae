// What the in-process HTTP benchmarks of mneme-bench (http, agent) share to start mneme
// beside their load: the runtime configuration against the fake LLM, and the file limit
// their thousands of sockets need. Only this program includes this file.
#pragma once

#include <cstdint>
#include <string>

#include "caf/expected.hpp"

#include "actors/runtime.hpp"

namespace mneme::bench {

// The runtime against the fake LLM at `llm_url`, its database at `db_path` (no fsync: a
// file under /tmp, not what is measured): the chat pool admits `concurrency` calls at
// once and queues as many (the pool is not what is measured), and the compaction
// threshold (90% of the window) is far above what the benchmarks' turns add, so no
// session compacts.
caf::expected<runtime_config> bench_runtime_config(int64_t concurrency, const std::string& llm_url,
                                                   const std::string& db_path);

// Raises the soft limit of open files to the hard one (each client holds a socket here,
// and the server, the chat pool and the fake LLM hold more).
void raise_file_limit();

} // namespace mneme::bench
