// Measurement helpers shared by the benchmarks of mneme-bench: a process's memory figures
// from /proc and the one definition of a percentile and a median. Every percentile or
// median a benchmark reports goes through this file; a benchmark writes none of its own.
// Header-only; pure or read-only functions, safe from any thread. Only mneme-bench's
// benchmarks include it.
//
// Definition: nearest rank. The p-th percentile of n samples is the smallest sample with
// at least p * n samples at or below it (rank ceil(p * n)); it is always a measured sample,
// never an interpolation. p = 1 is the maximum; the median (p = 0.5) of an even count is
// the lower of the two middle samples. It replaced the index rounding some benchmarks used
// (round or floor of p * (n - 1)); they differ by at most one adjacent sample (a median of
// an even count: the lower middle instead of the upper), and no figure in
// docs/benchmarks.md relies on which: its medians of runs and pairs are over odd counts
// (3 or 5 runs, 7 or 3 pairs), where all of them agree.
#pragma once

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace mneme::bench {

// A "Vm...:" figure of <proc_dir>/status in bytes (VmRSS: resident now, VmHWM: peak);
// 0 when unknown. `proc_dir` is "/proc/self" or "/proc/<pid>".
inline int64_t proc_status_bytes(const std::string& proc_dir, const std::string& field) {
  std::ifstream in(proc_dir + "/status");
  std::string key;
  while (in >> key) {
    if (key == field) {
      int64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
    std::string rest;
    std::getline(in, rest);
  }
  return 0;
}

// The nearest-rank p-th percentile of `xs` (see above); nullopt without samples.
// REQUIRES: 0 < p <= 1.
template <class T>
std::optional<T> nearest_rank_percentile(std::vector<T> xs, double p) {
  assert(p > 0 && p <= 1);
  if (xs.empty())
    return std::nullopt;
  std::sort(xs.begin(), xs.end());
  auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(xs.size())));
  return xs[std::clamp<size_t>(rank, 1, xs.size()) - 1];
}

// nearest_rank_percentile, 0 without samples (for reports that print a number anyway).
template <class T>
T percentile(std::vector<T> xs, double p) {
  return nearest_rank_percentile(std::move(xs), p).value_or(T{});
}

// The nearest-rank median: percentile(xs, 0.5), 0 without samples.
template <class T>
T median(std::vector<T> xs) {
  return percentile(std::move(xs), 0.5);
}

} // namespace mneme::bench
