// A process's memory figures from /proc, for the benchmarks of mneme-bench that report
// memory, and the {"median", "min", "max"} object of a figure repeated over runs. Their
// percentiles and medians are policies/percentile.hpp's (nearest rank, p a fraction),
// like every other figure of the project.
// Header-only; read-only, safe from any thread. Only mneme-bench's benchmarks include it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policies/percentile.hpp"

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

// {"median", "min", "max"} of one figure's runs (all 0 when there are none).
inline nlohmann::json median_and_range(const std::vector<double>& runs) {
  return {{"median", median_or_zero(runs)},
          {"min", runs.empty() ? 0 : *std::min_element(runs.begin(), runs.end())},
          {"max", runs.empty() ? 0 : *std::max_element(runs.begin(), runs.end())}};
}

} // namespace mneme::bench
