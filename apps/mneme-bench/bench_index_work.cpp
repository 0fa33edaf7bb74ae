// `mneme-bench index-work --corpus FILE [--messages N] --way ticks|bulk [--json]`:
// fills the three recall indexes of a copy of an unindexed corpus one way, once,
// so the work can be counted in instructions, which a shared machine does not
// blur as it blurs processor time:
//   valgrind --tool=callgrind --toggle-collect='*measured_fill*'
//     ./build/mneme-bench index-work --corpus /tmp/c.db --messages 200000 --way ticks
// (one command line)
// FILE is the corpus of store/recall_corpus (the one `mneme-bench recall` builds),
// generated with N messages (default 200,000) when it does not exist, and left
// unindexed; each run indexes a copy (FILE.work) and removes it. `ticks` is the
// committed indexer in an idle writer's ticks, `bulk` one transaction of
// INSERT ... SELECT per index (index_ways.hpp). Prints the rows, the ticks and
// the processor seconds of the fill. Only this program links this file.
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/mneme-bench/bench_registry.hpp"
#include "apps/mneme-bench/index_ways.hpp"
#include "messages/mneme_types.hpp"
#include "store/db_connection.hpp"
#include "store/recall_corpus.hpp"
#include "store/sqlite_store.hpp"

namespace mneme::bench {

namespace {

// Writes an unindexed corpus of about `messages` rows to `path`, every row in
// the main file (the log checkpointed and truncated).
caf::error build_corpus(const std::string& path, int64_t messages) {
  store_params p;
  p.path = path;
  p.synchronous_full = false; // building the corpus measures nothing durable
  auto store = sqlite_store::open(p);
  if (!store)
    return std::move(store.error());
  corpus_spec spec;
  spec.messages = messages;
  spec.messages_per_session = 60; // as `mneme-bench recall`
  auto corpus = generate_corpus(**store, spec);
  if (!corpus)
    return std::move(corpus.error());
  return (*store)->connection().exec("PRAGMA wal_checkpoint(TRUNCATE)", "checkpoint the corpus");
}

// The measured part, by name for callgrind's --toggle-collect.
[[gnu::noinline]] caf::expected<int64_t> measured_fill(db_connection& db, bool ticks) {
  if (ticks)
    return fill_indexes_by_ticks(db);
  if (auto err = fill_indexes_in_bulk(db))
    return err;
  return int64_t{1};
}

int run_index_work(const std::vector<std::string>& args) {
  std::string corpus, way;
  int64_t messages = 200000;
  bool json = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") {
      json = true;
    } else if (args[i] == "--corpus" && i + 1 < args.size()) {
      corpus = args[++i];
    } else if (args[i] == "--messages" && i + 1 < args.size()) {
      messages = std::atoll(args[++i].c_str());
    } else if (args[i] == "--way" && i + 1 < args.size()) {
      way = args[++i];
    } else {
      corpus.clear();
      break;
    }
  }
  if (corpus.empty() || (way != "ticks" && way != "bulk") || messages < 1000) {
    std::fprintf(stderr, "usage: mneme-bench index-work --corpus FILE [--messages N >= 1000]"
                         " --way ticks|bulk [--json]\n");
    return 2;
  }
  if (!std::filesystem::exists(corpus))
    if (auto err = build_corpus(corpus, messages)) {
      std::fprintf(stderr, "%s\n", render_error(err).c_str());
      remove_db_files(corpus);
      return 1;
    }
  auto work = corpus + ".work";
  remove_db_files(work);
  std::filesystem::copy_file(corpus, work);
  store_params p;
  p.path = work;
  p.synchronous_full = true; // as the storage actor runs
  auto store = sqlite_store::open(p);
  if (!store) {
    std::fprintf(stderr, "%s\n", render_error(store.error()).c_str());
    remove_db_files(work);
    return 1;
  }
  auto& db = (*store)->connection();
  auto t0 = std::clock();
  auto filled = measured_fill(db, way == "ticks");
  auto cpu_s = static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
  auto indexed = filled ? check_all_indexed(db) : caf::expected<int64_t>{filled.error()};
  store->reset();
  remove_db_files(work);
  if (!indexed) {
    std::fprintf(stderr, "index-work: %s\n", render_error(indexed.error()).c_str());
    return 1;
  }
  auto messages_indexed = *indexed;
  if (json) {
    nlohmann::json j;
    j["way"] = way;
    j["messages"] = messages_indexed;
    j["ticks"] = *filled;
    j["cpu_s"] = cpu_s;
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s: %lld messages, %lld ticks, %.3f s of CPU\n", way.c_str(),
                static_cast<long long>(messages_indexed), static_cast<long long>(*filled), cpu_s);
  }
  return 0;
}

} // namespace

MNEME_BENCH("index-work", "one way of filling the recall indexes, once (for instruction counts)",
            run_index_work);

} // namespace mneme::bench
