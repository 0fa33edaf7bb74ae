// Registry of the benchmarks of `mneme-bench`: each bench_<name>.cpp in this folder
// registers one entry with MNEME_BENCH at static-initialization time; main.cpp
// dispatches `mneme-bench <name> [args...]`. Only this program links these files.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mneme::bench {

// Runs a benchmark with its own arguments (argv after the name); returns the exit code.
using bench_fn = std::function<int(const std::vector<std::string>& args)>;

struct bench_entry {
  std::string summary;
  bench_fn run;
};

std::map<std::string, bench_entry>& registry();

struct registrar {
  registrar(const std::string& name, std::string summary, bench_fn fn) {
    registry()[name] = bench_entry{std::move(summary), std::move(fn)};
  }
};

} // namespace mneme::bench

#define MNEME_BENCH_CAT2(a, b) a##b
#define MNEME_BENCH_CAT(a, b) MNEME_BENCH_CAT2(a, b)
#define MNEME_BENCH(name, summary, fn) \
  static ::mneme::bench::registrar MNEME_BENCH_CAT(mneme_bench_reg_, __LINE__){name, summary, fn}
