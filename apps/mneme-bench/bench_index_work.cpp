// `mneme-bench index-work --corpus FILE [--messages N] --way ticks|bulk [--json]`:
// fills the three recall indexes of a copy of an unindexed corpus one way, once,
// so the work can be counted in instructions, which a shared machine does not
// blur as it blurs processor time:
//   valgrind --tool=callgrind --toggle-collect='*measured_fill*'
//     ./build/mneme-bench index-work --corpus /tmp/c.db --messages 200000 --way ticks
// (one command line)
// FILE is the corpus of testing/recall_corpus (the one `mneme-bench recall` builds),
// generated with N messages (default 200,000) when it does not exist, and left
// unindexed (a FILE that is not an unindexed corpus is refused); each run indexes
// a copy (FILE.work-PID) and removes it. `ticks` is the committed indexer in an
// idle writer's ticks, `bulk` one transaction of INSERT ... SELECT per index
// (index_ways.hpp). Prints the messages, the transactions and the processor
// seconds of the fill. Only this program links this file.
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "apps/mneme-bench/bench_registry.hpp"
#include "apps/mneme-bench/index_ways.hpp"
#include "messages/mneme_types.hpp"
#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/fts_indexer.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "testing/recall_corpus.hpp"

namespace mneme::bench {

namespace {

// Writes an unindexed corpus of about `messages` rows to `path`, every row in
// the main file (the log checkpointed and truncated). It is built under a
// temporary name and renamed, so an interrupted build leaves no corpus behind.
caf::error build_corpus(const std::string& path, int64_t messages) {
  auto building = path + ".building";
  remove_db_files(building);
  {
    store_params p;
    p.path = building;
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
    if (auto err = (*store)->connection().exec("PRAGMA wal_checkpoint(TRUNCATE)",
                                               "checkpoint the corpus"))
      return err;
  }
  std::error_code ec;
  std::filesystem::rename(building, path, ec);
  remove_db_files(building);
  if (ec)
    return caf::make_error(errc::internal, "cannot rename " + building + " to " + path + ": "
                                             + ec.message());
  return {};
}

// The measured part, by name for callgrind's --toggle-collect.
[[gnu::noinline]] caf::expected<int64_t> measured_fill(db_connection& db, bool ticks) {
  if (ticks)
    return fill_indexes_by_ticks(db);
  if (auto err = fill_indexes_in_bulk(db))
    return err;
  return int64_t{1};
}

// Fills a copy of `corpus` (at `work`) one way: the messages and transactions,
// and the processor seconds of the fill.
struct fill_result {
  int64_t messages = 0;
  int64_t transactions = 0;
  double cpu_s = 0;
};

caf::expected<fill_result> fill_copy(const std::string& corpus, const std::string& work,
                                     bool ticks) {
  std::error_code ec;
  std::filesystem::copy_file(corpus, work, ec);
  if (ec)
    return caf::make_error(errc::internal, "cannot copy " + corpus + " to " + work + ": "
                                             + ec.message());
  store_params p;
  p.path = work;
  p.synchronous_full = true; // as the storage actor runs
  auto store = sqlite_store::open(p);
  if (!store)
    return std::move(store.error());
  auto& db = (*store)->connection();
  // A corpus someone indexed (or another mneme file) would measure nothing.
  auto backlog = fts_backlog(db);
  if (!backlog)
    return std::move(backlog.error());
  if (*backlog < 1000)
    return caf::make_error(errc::bad_request, corpus + " holds " + std::to_string(*backlog)
                                                + " unindexed messages, not an unindexed corpus"
                                                  " (remove it to build one)");
  fill_result out;
  auto t0 = std::clock();
  auto filled = measured_fill(db, ticks);
  out.cpu_s = static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
  if (!filled)
    return std::move(filled.error());
  out.transactions = *filled;
  auto indexed = check_all_indexed(db);
  if (!indexed)
    return std::move(indexed.error());
  out.messages = *indexed;
  return out;
}

// The flags of `mneme-bench index-work`.
struct index_work_options {
  std::string corpus;
  std::string way;
  int64_t messages = 200000;
  bool json = false;
};

int run_index_work(const index_work_options& o) {
  const std::string& corpus = o.corpus;
  const std::string& way = o.way;
  const int64_t messages = o.messages;
  const bool json = o.json;
  std::error_code ec;
  if (!std::filesystem::exists(corpus, ec)) {
    if (ec) {
      std::fprintf(stderr, "index-work: %s: %s\n", corpus.c_str(), ec.message().c_str());
      return 1;
    }
    if (auto err = build_corpus(corpus, messages)) {
      std::fprintf(stderr, "index-work: %s\n", render_error(err).c_str());
      return 1;
    }
  }
  // One work file per process: runs at once on one corpus do not collide.
  auto work = corpus + ".work-" + std::to_string(::getpid());
  remove_db_files(work);
  auto result = fill_copy(corpus, work, way == "ticks");
  remove_db_files(work);
  if (!result) {
    std::fprintf(stderr, "index-work: %s\n", render_error(result.error()).c_str());
    return 1;
  }
  if (json) {
    nlohmann::json j;
    j["way"] = way;
    j["messages"] = result->messages;
    j["transactions"] = result->transactions;
    j["cpu_s"] = result->cpu_s;
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s: %lld messages, %lld transactions, %.3f s of CPU\n", way.c_str(),
                static_cast<long long>(result->messages),
                static_cast<long long>(result->transactions), result->cpu_s);
  }
  return 0;
}

} // namespace

MNEME_BENCH("index-work", "one way of filling the recall indexes, once (for instruction counts)",
            [](CLI::App& cmd) -> bench_action {
              auto o = std::make_shared<index_work_options>();
              cmd.add_option("--corpus", o->corpus, "the unindexed corpus file (built when "
                                                    "missing)")
                ->required()
                ->check([](const std::string& f) {
                  return f.empty() ? std::string{"--corpus needs a file name"} : std::string{};
                });
              cmd.add_option("--messages", o->messages, "messages of a corpus built here")
                ->check(integer_range(int64_t{1000}, int64_t{100000000}));
              cmd.add_option("--way", o->way, "ticks (the committed indexer) or bulk "
                                              "(INSERT ... SELECT per index)")
                ->required()
                ->check(CLI::IsMember({"ticks", "bulk"}));
              cmd.add_flag("--json", o->json, "one JSON object on stdout");
              return [o] { return run_index_work(*o); };
            });

} // namespace mneme::bench
