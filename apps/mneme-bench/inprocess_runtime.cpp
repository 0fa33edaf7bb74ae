// The in-process runtime of the HTTP benchmarks; see inprocess_runtime.hpp.
#include "apps/mneme-bench/inprocess_runtime.hpp"

#include <sys/resource.h>

#include <algorithm>

#include "actors/llm/llm_endpoint.hpp"

namespace mneme::bench {

caf::expected<runtime_config> bench_runtime_config(int64_t concurrency, const std::string& llm_url,
                                                   const std::string& db_path) {
  runtime_config rc;
  rc.compression.threshold = 0.9;
  rc.model.base_url = llm_url;
  chat_pool_params cp;
  cp.max_concurrency = std::max<int64_t>(cp.max_concurrency, concurrency);
  cp.max_queue = std::max<int64_t>(cp.max_queue, concurrency);
  summarizer_params sp;
  sp.base_url = llm_url;
  auto chat = llm::make_chat_pool_config(rc.model, cp);
  if (!chat)
    return chat.error();
  auto summary = llm::make_summary_pool_config(sp, rc.model, rc.compression);
  if (!summary)
    return summary.error();
  rc.chat = *chat;
  rc.summarizer = *summary;
  rc.database.path = db_path;
  rc.database.synchronous_full = false;
  return rc;
}

void raise_file_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
}

} // namespace mneme::bench
