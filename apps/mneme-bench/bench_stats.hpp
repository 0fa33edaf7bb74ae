// A process's memory figures from /proc, for the benchmarks of mneme-bench that report
// memory. Their percentiles and medians are policies/percentile.hpp's (nearest rank, p
// a fraction), like every other figure of the project.
// Header-only; read-only, safe from any thread. Only mneme-bench's benchmarks include it.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

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

} // namespace mneme::bench
