// Small measurement helpers shared by the benchmarks of mneme-bench: a process's memory
// figures from /proc and the nearest-rank percentile. Header-only; pure or read-only
// functions, safe from any thread.
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

// Nearest rank: the smallest sample with at least p of the samples at or below it;
// nullopt without samples. REQUIRES: 0 < p <= 1.
inline std::optional<double> nearest_rank_percentile(std::vector<double> xs, double p) {
  assert(p > 0 && p <= 1);
  if (xs.empty())
    return std::nullopt;
  std::sort(xs.begin(), xs.end());
  auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(xs.size())));
  return xs[std::clamp<size_t>(rank, 1, xs.size()) - 1];
}

} // namespace mneme::bench
