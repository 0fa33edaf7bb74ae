// mneme-bench: side-by-side benchmark programs (ours vs the raw library doing the same
// work). `mneme-bench` lists them; `mneme-bench NAME [--json] [options]` runs one.
#include <cstdio>
#include <string>
#include <vector>

#include "apps/mneme-bench/bench_registry.hpp"

namespace mneme::bench {

std::map<std::string, bench_entry>& registry() {
  static std::map<std::string, bench_entry> entries;
  return entries;
}

} // namespace mneme::bench

int main(int argc, char** argv) {
  auto& reg = mneme::bench::registry();
  if (argc < 2 || reg.find(argv[1]) == reg.end()) {
    std::fprintf(stderr, "usage: mneme-bench NAME [--json] [options]\nbenchmarks:\n");
    for (auto& [name, e] : reg)
      std::fprintf(stderr, "  %-10s %s\n", name.c_str(), e.summary.c_str());
    return argc < 2 ? 0 : 2;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  return reg[argv[1]].run(args);
}
