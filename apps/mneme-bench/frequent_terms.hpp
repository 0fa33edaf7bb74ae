// The frequent-term shape of `mneme-bench recall` (issue 46 target 4): search time must
// not grow with a term's hits. A few heavy users are appended to the generated corpus,
// each with `rows_per_user` rows in sessions of 200 written interleaved (as concurrent
// users' rows are), whose filler carries the CJK 2-character words 数据 and 日志 and the
// Latin words "pipeline" and "ledger" in 25-50 % of the user's rows, plus one rare word
// (Latin or CJK) planted in every 50th session. The searches of that shape, timed for
// each plan of store/sqlite/sqlite_recall.hpp in the same run, alternating query by
// query: the frequent words (common) and the planted rare words (rare, with their
// recall@3), wall and this thread's processor milliseconds.
// Only mneme-bench links this unit; its functions run on the caller's thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "caf/expected.hpp"

#include "store/sqlite/sqlite_recall.hpp"
#include "testing/recall_corpus.hpp"

namespace mneme {
class message_store;
class store_reader;
} // namespace mneme

namespace mneme::bench {

struct frequent_shape_spec {
  int32_t users = 2;
  int64_t rows_per_user = 20000;
};

struct frequent_shape {
  std::vector<std::string> users;
  std::vector<recall_probe> rare_probes;   // one per planted rare word
  std::map<std::string, double> fractions; // each frequent word's share of the rows
};

// Appends the shape's users to `store` (after the generated corpus). Errors: the store's.
caf::expected<frequent_shape> add_frequent_term_users(message_store& store,
                                                      const frequent_shape_spec& spec);

// The frequent words of the shape (queries of the "common" figures).
const std::vector<std::string>& frequent_queries();

// One plan's timed searches.
struct plan_timings {
  std::vector<double> common_ms, common_cpu_ms; // the shape's frequent words
  std::vector<double> rare_ms, rare_cpu_ms;     // the shape's planted rare words
  std::vector<double> corpus_common_ms, corpus_common_cpu_ms; // corpus-wide common words
  int64_t rare_found_at_3 = 0;
  int64_t rare_probes = 0;
  std::vector<std::vector<std::string>> common_top3; // sessions, per common search
};

// `rounds` rounds of every frequent word for every user of `shape` plus every rare
// probe and `corpus_common` (the common-word queries of recall_measure, over the
// corpus's users) through recall_search on `reader`, once per plan in `plans` per
// query. Errors: the first search error.
caf::expected<std::map<frequent_term_plan, plan_timings>>
time_plans(store_reader& reader, const frequent_shape& shape,
           const std::vector<recall_request>& corpus_common,
           const std::vector<frequent_term_plan>& plans, int rounds);

const char* plan_name(frequent_term_plan p);

// Per plan p: plan_<p>_{common,rare,corpus_common}_{p50,p99}_ms and _cpu_{p50,p99}_ms,
// plan_<p>_rare_recall_at_3; with two plans, plan_top3_differ: the common searches
// whose top-3 sessions differ between them (of plan_common_searches).
void report_plans(nlohmann::json& j, const std::map<frequent_term_plan, plan_timings>& by_plan);

} // namespace mneme::bench
