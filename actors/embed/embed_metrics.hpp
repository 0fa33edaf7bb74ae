// The embedder's counters (issue 48), read by /metrics (apps/common/api/metrics_exporter):
// plain relaxed atomics written by the embedder actor (actors/embed) on its thread and
// read from any thread. Held by runtime_metrics; `enabled` stays false while the
// `embeddings:` block is off, and the exporter then renders none of them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "messages/llm_error_kind.hpp"

namespace mneme {

struct embed_metrics {
  static constexpr std::size_t kind_slots = static_cast<std::size_t>(llm_error_kind::empty_answer) + 1;

  std::atomic<bool> enabled{false};
  // Rows embedded and stored, by source (0 message, 1 fact); rows skipped because the
  // provider refused them even alone (policies/embed_plan.hpp).
  std::array<std::atomic<uint64_t>, 2> embedded_rows{};
  std::atomic<uint64_t> skipped_rows{0};
  std::atomic<uint64_t> provider_calls{0};
  // Failed provider calls of the background embedding, by llm_error_kind.
  std::array<std::atomic<uint64_t>, kind_slots> provider_failures{};
  std::atomic<uint64_t> store_failures{0};   // a batch the storage actor refused
  std::atomic<int64_t> backlog{0};           // rows above the watermarks, last seen
  std::atomic<int64_t> backing_off{0};       // 1 while waiting out a failing provider
  std::atomic<int64_t> index_vectors{0};     // the vector index's size
  std::atomic<int64_t> index_bytes{0};       // ... and its memory
  std::atomic<uint64_t> query_embeds{0};     // search queries embedded
  std::atomic<uint64_t> query_failures{0};   // ... that failed (overloaded included)
  // Searches that wanted a vector leg and ran on full text only, written by the recall
  // pool (actors/recall): 0 the embedder failed, 1 its answer came too late.
  std::array<std::atomic<uint64_t>, 2> vector_legs_skipped{};

  void record_failure(llm_error_kind k) {
    auto i = static_cast<std::size_t>(k);
    if (i < kind_slots)
      provider_failures[i].fetch_add(1, std::memory_order_relaxed);
  }
};

} // namespace mneme
