// A latency histogram with fixed bucket bounds in milliseconds, as relaxed atomics:
// written from any actor's thread, read by the metrics exporter from any thread.
// buckets[i] counts observations in (bounds_ms[i-1], bounds_ms[i]]; the last is +Inf.
// Rendering (cumulative, Prometheus style) is the exporter's job.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace mneme {

struct latency_histogram {
  static constexpr std::array<double, 16> bounds_ms{
    1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000};

  std::array<std::atomic<uint64_t>, bounds_ms.size() + 1> buckets{}; // last = +Inf
  std::atomic<uint64_t> count{0};
  std::atomic<int64_t> sum_us{0};

  void observe_us(int64_t us) {
    if (us < 0)
      us = 0;
    double ms = static_cast<double>(us) / 1000.0;
    size_t i = 0;
    while (i < bounds_ms.size() && ms > bounds_ms[i])
      ++i;
    buckets[i].fetch_add(1, std::memory_order_relaxed);
    count.fetch_add(1, std::memory_order_relaxed);
    sum_us.fetch_add(us, std::memory_order_relaxed);
  }
};

} // namespace mneme
