// The Prometheus text exposition of a running mneme runtime (SPEC §8 metrics): what
// `GET /metrics` of the daemon answers. Reads the runtime's relaxed-atomic counters
// (actors/runtime_metrics.hpp), asks the supervisor and both LLM pools for their
// figures with a short timeout, and counts stored/open sessions and active cooldowns
// and anti-thrash locks over a read-only database connection.
//
// Thread: call from a non-CAF thread only (the HTTP server's): it blocks on a
// scoped_actor and on SQLite. Safe to call concurrently.
#pragma once

#include <chrono>
#include <string>

#include "caf/all.hpp"

#include "actors/runtime.hpp"

namespace mneme::api {

// How long render_metrics_text waits for each actor's answer; a silent actor's
// gauges are left out (the rest of the exposition is still rendered).
inline constexpr std::chrono::milliseconds metrics_ask_timeout{500};

// REQUIRES: called outside every CAF scheduler thread; rt was started on sys.
// `ask_timeout` bounds each actor's answer (tests that assert the actors' samples pass
// a long one, so a slow machine cannot make a gauge vanish).
std::string render_metrics_text(caf::actor_system& sys, const mneme::runtime& rt,
                                std::chrono::milliseconds ask_timeout = metrics_ask_timeout);

// Only the runtime's own counters (runtime_metrics and its storage_metrics): the
// families render_metrics_text takes from `rm`, without asking any actor or the
// database. Any thread.
std::string render_counters_text(const runtime_metrics& rm);

} // namespace mneme::api
