// The retention histogram of /metrics (issue 45): per committed compaction whose middle
// had identifiers, the share of them its summary kept (policies/identifier_retention.hpp),
// in fixed buckets, as relaxed atomics: written from any session actor's thread, read by
// the metrics exporter from any thread. buckets[i] counts ratios in
// (bounds[i-1], bounds[i]]; rendering (cumulative, Prometheus style) is the exporter's.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace mneme {

struct retention_histogram {
  static constexpr std::array<double, 11> bounds{0.1, 0.2, 0.3, 0.4, 0.5, 0.6,
                                                 0.7, 0.8, 0.9, 0.95, 1.0};

  std::array<std::atomic<uint64_t>, bounds.size()> buckets{};
  std::atomic<uint64_t> count{0};
  std::atomic<int64_t> sum_millionths{0}; // sum of the ratios x 1e6

  // REQUIRES: 0 <= kept <= in, in > 0.
  void observe(int64_t in, int64_t kept) {
    if (in <= 0 || kept < 0 || kept > in)
      return;
    const double ratio = static_cast<double>(kept) / static_cast<double>(in);
    size_t i = 0;
    while (i + 1 < bounds.size() && ratio > bounds[i])
      ++i;
    buckets[i].fetch_add(1, std::memory_order_relaxed);
    count.fetch_add(1, std::memory_order_relaxed);
    sum_millionths.fetch_add(kept * 1000000 / in, std::memory_order_relaxed);
  }
};

} // namespace mneme
