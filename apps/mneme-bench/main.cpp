// mneme-bench: side-by-side benchmark programs (ours vs the raw library doing the same
// work). Every benchmark lives in its own bench_<name>.cpp and registers itself through
// bench_registry.hpp; this file only builds the CLI11 app from the registry, parses, and
// runs the chosen benchmark. `mneme-bench` or `mneme-bench --help` lists the benchmarks,
// `mneme-bench NAME --help` a benchmark's flags and their defaults.
// Exit codes: 0 success, 1 the benchmark failed or missed, 2 bad flags.
#include <iostream>
#include <map>

#include "apps/mneme-bench/bench_registry.hpp"

namespace mneme::bench {

std::map<std::string, bench_entry>& registry() {
  static std::map<std::string, bench_entry> entries;
  return entries;
}

} // namespace mneme::bench

int main(int argc, char** argv) {
  using namespace mneme::bench;
  CLI::App app{"mneme-bench: side-by-side benchmarks, mneme against the raw library or the "
               "alternative doing the same work (figures: docs/benchmarks.md)",
               "mneme-bench"};
  app.require_subcommand(0, 1);
  app.option_defaults()->always_capture_default();  // every flag's --help shows its default
  std::map<const CLI::App*, bench_action> actions;
  for (auto& [name, entry] : registry()) {
    auto* cmd = app.add_subcommand(name, entry.summary);
    actions[cmd] = entry.setup(*cmd);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help or the usage error
    return code == 0 ? exit_ok : exit_usage;
  }
  for (auto* chosen : app.get_subcommands())
    if (auto it = actions.find(chosen); it != actions.end() && it->second)
      return it->second();
  std::cout << app.help();  // no benchmark named: list them
  return exit_ok;
}
