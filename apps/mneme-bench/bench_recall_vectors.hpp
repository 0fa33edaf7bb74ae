// `mneme-bench recall --vectors` (issue 48): hybrid against full-text recall on the
// generated corpus, with every row's vector from the fake's embedding function called
// directly (policies/fake_embedding, paraphrase mode, 256 dimensions; no HTTP, so the
// embedder's throughput is not measured here). Figures: search p50/p99 of hybrid and
// fts on the same queries in the same run (target p99 <= 25 ms), the index's build
// time and memory per vector, exact scan against the HNSW graph per tenant size, and
// recall@3 of both modes on the corpus's probes and on planted paraphrase probes.
// Only mneme-bench links this unit; it runs on the caller's thread.
#pragma once

#include <cstdint>
#include <string>

namespace mneme::bench {

struct vector_bench_options {
  int64_t messages = 1000000;
  std::string dir = "/tmp";
  bool json = false;
  int32_t passes = 3;                 // search passes over the same corpus
  int32_t paraphrase_users = 40;      // users given one planted session per concept
};

// 0 when hybrid's recall@3 is at least fts's on both probe sets and nothing leaked.
int run_vector_recall_bench(const vector_bench_options& o);

} // namespace mneme::bench
