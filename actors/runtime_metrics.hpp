// The runtime's counters (SPEC §8 metrics): what sessions, the gateway and the storage
// actor count while they work, as plain relaxed atomics. Actors write them from their
// own threads; the daemon's /metrics exporter (apps/common) and the soak runner read
// them from any thread. No dependency on a metrics library: the exporter renders them
// in the Prometheus text format.
//
// Owned by the runtime (actors/runtime.hpp creates one per runtime); every writer
// holds a shared_ptr and tolerates a null one (tests that spawn actors alone).
// Values are figures, not synchronization.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "actors/latency_histogram.hpp"
#include "actors/storage/storage_metrics.hpp"
#include "messages/errc.hpp"
#include "policies/trigger.hpp"

namespace mneme {

// How a compaction ended, as the metrics label it.
enum class compaction_outcome_label : uint8_t {
  committed = 0,   // the summarizer's summary was committed
  fallback,        // the local fallback summary was committed
  failed,          // aborted (abort_on_summary_failure) or the commit failed
  nothing,         // nothing to compact
  count_
};

inline const char* to_label(compaction_outcome_label o) {
  switch (o) {
    case compaction_outcome_label::committed: return "committed";
    case compaction_outcome_label::fallback: return "fallback";
    case compaction_outcome_label::failed: return "failed";
    case compaction_outcome_label::nothing: return "nothing_to_compact";
    case compaction_outcome_label::count_: break;
  }
  return "unknown";
}

struct runtime_metrics {
  static constexpr size_t trigger_slots = 16;   // trigger's underlying values are < 16
  static constexpr size_t outcome_slots = static_cast<size_t>(compaction_outcome_label::count_);
  static constexpr size_t errc_slots = 128;     // errc's underlying values are < 128

  // Sessions (written by session actors).
  std::array<std::array<std::atomic<uint64_t>, outcome_slots>, trigger_slots> compactions{};
  std::atomic<int64_t> tokens_before_total{0};  // live estimate before committed compactions
  std::atomic<int64_t> tokens_after_total{0};   // ... and after
  latency_histogram summarizer_latency;         // every summarizer round trip, failed too
  std::array<std::atomic<uint64_t>, errc_slots> summary_failures{}; // by errc value
  std::atomic<uint64_t> server_compactions{0};  // answers reporting a server-side compaction

  // Gateway.
  std::atomic<uint64_t> exhaustion_resets{0};
  std::atomic<uint64_t> turns{0};
  std::atomic<uint64_t> turn_errors{0};
  latency_histogram turn_latency;               // an inbound message, gateway in to reply out

  // Recall (written by whoever awaits the recall pool: gateway, daemon).
  latency_histogram search_latency;

  // Storage: group commits, batch sizes, indexing backlog (written by the storage actor).
  std::shared_ptr<storage_metrics> storage = std::make_shared<storage_metrics>();

  void record_compaction(trigger by, compaction_outcome_label outcome, int64_t before,
                         int64_t after) {
    auto t = static_cast<size_t>(by);
    auto o = static_cast<size_t>(outcome);
    if (t < trigger_slots && o < outcome_slots)
      compactions[t][o].fetch_add(1, std::memory_order_relaxed);
    if (outcome == compaction_outcome_label::committed
        || outcome == compaction_outcome_label::fallback) {
      tokens_before_total.fetch_add(before, std::memory_order_relaxed);
      tokens_after_total.fetch_add(after, std::memory_order_relaxed);
    }
  }

  void record_summary_failure(errc code) {
    auto i = static_cast<size_t>(code);
    if (i < errc_slots)
      summary_failures[i].fetch_add(1, std::memory_order_relaxed);
  }
};

} // namespace mneme
