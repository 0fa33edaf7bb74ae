// A deterministic generated corpus for measuring recall (SPEC §4 quality bar): many
// users' sessions of English, Chinese, Japanese, mixed, code and error text of
// realistic sizes, written through the store (group commits, a real compaction
// commit, a real checkpoint rollback), with known facts planted in known messages
// and the probes that must (or must never) find them. Used by the recall quality
// suite (tests/recall_quality_test.cpp) and `mneme-bench recall`, so both measure
// the same thing; part of mneme_testing, never of the product. Same seed and spec →
// same corpus, byte for byte.
//
// Planted fact kinds (the `label` of each probe):
//   en        a sentence with two made-up words: probed by a quoted sub-phrase, one
//             word, a 6-character prefix*, and a 6-character inner substring;
//   zh        two rare 2-character Han words: probed by each 2-character word and by
//             the 4-character run;
//   ja        a 4-kana katakana word inside Japanese text: by the word, its first 3;
//   glued     a made-up Latin word glued between Han characters: by the word;
//   code      a made-up identifier in a stack trace / error line: by the glued
//             identifier, the snake_case name, and an inner substring;
//   archived  an English fact that survives only in rows a compaction archived;
//   rolled    a fact only in rows undone by a checkpoint rollback: 0 hits unless
//             include_inactive, then found;
//   foreign   a fact found by its owner; asked by another user sharing the filler
//             vocabulary ("+other_user"): 0 hits, always.
//
// Thread: the caller's (the store's owner); no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "caf/expected.hpp"

#include "messages/recall_types.hpp"

namespace mneme {

class message_store;
class recall_source;

struct corpus_spec {
  uint64_t seed = 20261130;
  int64_t messages = 40000;          // approximate total rows written
  int32_t messages_per_session = 20; // average; sessions vary 0.5x..1.5x
  int32_t sessions_per_user = 10;
  int32_t fact_every_n_sessions = 3; // one planted fact in every n-th session
  int32_t batch_rows = 512;          // rows per group commit
};

enum class probe_expect : uint8_t {
  found,          // the planted session is among the top 3 hits
  absent,         // no hit at all (another user's fact, or rolled back by default)
};

struct recall_probe {
  std::string label;       // fact kind (see above) and probe form, e.g. "en/prefix"
  recall_request request;  // the user and query as a user would send them
  std::string session_id;  // where the fact was planted
  probe_expect expect = probe_expect::found;
};

struct corpus_report {
  int64_t messages = 0;
  int64_t sessions = 0;
  int64_t content_bytes = 0;
  double ingest_seconds = 0;
  std::vector<recall_probe> probes;
};

// Writes the corpus into `store` (which must be open and may already hold rows).
// Errors: the store's errors, unchanged.
caf::expected<corpus_report> generate_corpus(message_store& store, const corpus_spec& spec);

struct probe_outcome {
  int64_t expected_found = 0;  // probes with expect == found
  int64_t found_at_3 = 0;      // ... whose session was among the top 3
  int64_t leaks = 0;           // hits of probes with expect == absent
  std::vector<std::string> misses; // "label query" of each failed probe (first 50)
  std::vector<double> latencies_ms; // one per probe, the whole search incl. anchored view

  double recall_at_3() const {
    return expected_found == 0 ? 1.0
                               : static_cast<double>(found_at_3) / expected_found;
  }
};

// Runs every probe through `source` (either backend). Errors: the first search error.
caf::expected<probe_outcome> run_probes(recall_source& source,
                                        const std::vector<recall_probe>& probes);

} // namespace mneme
