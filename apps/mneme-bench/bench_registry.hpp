// Registry of the benchmarks of `mneme-bench`, the pattern of apps/mneme/command_registry.hpp:
// each bench_<name>.cpp in this folder registers one benchmark with MNEME_BENCH at
// static-initialization time; main.cpp adds every registered benchmark to the CLI11 app as
// the subcommand `mneme-bench <name>`, parses, and runs the chosen one. A benchmark
// declares its flags on its subcommand (numbers with ranges, defaults shown by --help), so
// bad or unknown flags are CLI11 errors before it runs. A new benchmark is a new file, never
// an edit of main.cpp. Only this program includes this file.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <string>
#include <type_traits>

#include <CLI/CLI.hpp>

namespace mneme::bench {

// What runs when the benchmark was chosen; returns the process exit code.
using bench_action = std::function<int()>;

// Declares the benchmark's flags on `cmd` (already created with its name and summary)
// and returns its action. Parsed values reach the action through state the setup
// captures (a shared_ptr to the benchmark's options struct).
using bench_setup = std::function<bench_action(CLI::App& cmd)>;

struct bench_entry {
  std::string summary;
  bench_setup setup;
};

// Exit codes shared by every benchmark.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;  // the benchmark ran and missed, or could not run
inline constexpr int exit_usage = 2;    // bad flags

// The check of an integer flag: CLI::Range(min, max) after the value parsed as a whole
// number of T, so `--sessions abc` and `--sessions 1.5` are refused as not numbers
// ("Failed parsing abc as a INT") and `--sessions -5` as out of range ("Value -5 not in
// range 1 to 100000"). Without `max` the bound is T's largest value and --help says ">= min".
template <class T>
CLI::Validator integer_range(T min, T max = std::numeric_limits<T>::max()) {
  static_assert(std::is_integral_v<T>);
  CLI::Range range{min, max};
  auto describe = max == std::numeric_limits<T>::max() ? "INT >= " + std::to_string(min)
                                                        : range.get_description();
  return CLI::Validator{[range](std::string& value) {
                          auto not_whole = CLI::TypeValidator<T>{""}(value);
                          return not_whole.empty() ? range(value) : not_whole;
                        },
                        describe};
}

// Every registered benchmark by name (sorted, so help output is stable).
std::map<std::string, bench_entry>& registry();

struct registrar {
  registrar(const std::string& name, std::string summary, bench_setup setup) {
    registry()[name] = bench_entry{std::move(summary), std::move(setup)};
  }
};

} // namespace mneme::bench

#define MNEME_BENCH_CAT2(a, b) a##b
#define MNEME_BENCH_CAT(a, b) MNEME_BENCH_CAT2(a, b)
// The setup is variadic so that a lambda with braced lists (CLI::IsMember({...})) needs no
// parentheses around it.
#define MNEME_BENCH(name, summary, ...)                                                  \
  static ::mneme::bench::registrar MNEME_BENCH_CAT(mneme_bench_reg_, __COUNTER__){name, summary, \
                                                                            __VA_ARGS__}
