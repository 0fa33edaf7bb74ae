// The recall measurement shared by `mneme-bench recall` (bench_recall.cpp) and
// `mneme-bench storage --backend postgres` (bench_storage_backends.cpp), so both report
// the same figures the same way: the corpus they build (testing/recall_corpus, one spec),
// and the searches they time through a recall_source of either backend — every probe
// of the corpus (run_probes: recall@3 and leaks as the quality suite computes them)
// plus the common-word queries (many matches to rank, a real user's worst case).
// Only mneme-bench links this unit; its functions run on the caller's thread, which
// owns the store or source it is given.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "caf/expected.hpp"

#include "store/message_store.hpp"
#include "store/store_params.hpp"
#include "testing/recall_corpus.hpp"

namespace mneme::bench {

// The generated corpus of both benches: about `messages` rows, 60 per session.
corpus_spec bench_corpus_spec(int64_t messages);

struct recall_figures {
  probe_outcome outcome;             // the probes alone: recall@3, leaks, their latencies
  std::vector<double> latencies_ms;  // every search timed: the probes', then common_ms
  std::vector<double> common_ms;     // the common-word queries alone
};

// The common-word queries: 10 rounds of words common in the corpus's filler, each
// round another of the corpus's users.
std::vector<recall_request> common_query_requests(const corpus_report& corpus);

// Runs every probe of `corpus` and 10 rounds of the common-word queries (users spread
// over the corpus's) through `source`. Errors: the first search error.
caf::expected<recall_figures> measure_recall(recall_source& source,
                                             const corpus_report& corpus);

// The p99 of the probes' search latency per probe form (their label, "en/prefix"):
// where a search's tail comes from. REQUIRES: `outcome` is run_probes' over `corpus`.
std::map<std::string, double> probe_p99_by_form(const corpus_report& corpus,
                                                const probe_outcome& outcome);

// A store of `params`' backend with the generated corpus of `spec` written into it and,
// on SQLite, every row indexed (what the storage actor's idle indexer does before the
// indexes serve a search; PostgreSQL indexes inside the append). The store stays open
// for the caller. Errors: the store's, unchanged.
struct built_corpus {
  std::unique_ptr<message_store> store;
  corpus_report report;
  double index_seconds = 0; // SQLite's catch-up indexing; 0 on PostgreSQL
};
caf::expected<built_corpus> build_recall_corpus(const store_params& params,
                                                const corpus_spec& spec);

} // namespace mneme::bench
