// An LLM pool: the typed actor every caller (session, gateway, bench) talks to for one
// endpoint. The summarizer pool and the chat pool are the same code with two configs
// (llm_endpoint.hpp: make_summary_pool_config / make_chat_pool_config).
//
// Behaviour:
//   - at most `max_concurrency` HTTP calls in flight; beyond that requests wait in a FIFO
//     of at most `max_queue`; a request arriving at a full queue gets errc::overloaded at
//     once (no unbounded latency);
//   - each request has a deadline = arrival + endpoint.total_timeout: its HTTP total
//     timeout is what is left when it leaves the queue, and a request still queued at its
//     deadline (less min_call_budget) fails with errc::llm_total_timeout ("while queued");
//   - stopping the pool answers every pending request with errc::shutting_down;
//   - every failure is a caf::error with a mneme::errc (llm_errors.hpp) and a context
//     line (status, elapsed, body excerpt, never the key).
// Callers use caller_timeout(cfg) (> the HTTP deadline) as their request timeout so the
// precise error wins over sec::request_timeout.
//
// Threads: the pool is an event-based actor and never blocks; HTTP runs on the pool's
// own curl-multi loop thread (curl_multi_loop.hpp), one thread per pool whatever the
// concurrency, never a thread per call (figures: docs/benchmarks.md#llm). Stopping the
// pool joins that thread after failing its transfers (milliseconds). Keep the handle: an
// unreferenced pool dies as unreachable.
#pragma once

#include <chrono>
#include <memory>

#include <spdlog/logger.h>

#include "caf/all.hpp"

#include "actors/llm/llm_endpoint.hpp"
#include "messages/mneme_types.hpp"

namespace mneme {

using llm_pool_actor =
  caf::typed_actor<caf::replies_to<llm_call_atom, chat_request>::with<chat_answer>,
                   caf::replies_to<llm_stats_atom>::with<llm_pool_stats>>;

namespace llm {

// A queued request with less than this left before its deadline is failed rather than
// started: no HTTP call finishes in less.
inline constexpr std::chrono::milliseconds min_call_budget{200};

// Margin between the pool's own deadline and a caller's request timeout.
inline constexpr std::chrono::seconds caller_timeout_margin{5};

// The request timeout a caller should use: the HTTP deadline plus the margin.
inline std::chrono::milliseconds caller_timeout(const llm_pool_config& cfg) {
  return cfg.endpoint.total_timeout + caller_timeout_margin;
}

// Spawns a pool. `log` may be null (then nothing is logged). REQUIRES:
// cfg.max_concurrency > 0, cfg.endpoint.total_timeout > 0, idle_timeout > 0.
llm_pool_actor spawn_llm_pool(caf::actor_system& sys, llm_pool_config cfg,
                              std::shared_ptr<spdlog::logger> log = nullptr);

} // namespace llm
} // namespace mneme
