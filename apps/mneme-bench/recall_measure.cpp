// The shared recall measurement of mneme-bench; see recall_measure.hpp.
#include "apps/mneme-bench/recall_measure.hpp"

#include <algorithm>
#include <cassert>
#include <chrono>


#include "policies/percentile.hpp"
#include "store/open_store.hpp"
#include "store/sqlite/fts_indexer.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace mneme::bench {

namespace {

using clock_type = std::chrono::steady_clock;

double ms_between(clock_type::time_point t0, clock_type::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

// Words and phrases common in the corpus's filler: many matches to rank.
constexpr const char* common_queries[] = {"database error", "timeout", "服务器", "cache", "設定",
                                          "retry OR queue", "deploy*", "KeyError", "数据", "the"};
constexpr int common_rounds = 10;


} // namespace

corpus_spec bench_corpus_spec(int64_t messages) {
  corpus_spec spec;
  spec.messages = messages;
  spec.messages_per_session = 60;
  return spec;
}

std::vector<recall_request> common_query_requests(const corpus_report& corpus) {
  std::vector<recall_request> out;
  const int64_t users = std::max<int64_t>(1, corpus.sessions / 10);
  for (int round = 0; round < common_rounds; ++round)
    for (auto* q : common_queries) {
      recall_request req;
      req.user_id = "user-" + std::to_string(round * 7 % users);
      req.query = q;
      out.push_back(std::move(req));
    }
  return out;
}

caf::expected<recall_figures> measure_recall(recall_source& source,
                                             const corpus_report& corpus) {
  recall_figures out;
  auto outcome = run_probes(source, corpus.probes);
  if (!outcome)
    return std::move(outcome.error());
  out.outcome = std::move(*outcome);
  out.latencies_ms = out.outcome.latencies_ms;
  for (auto& req : common_query_requests(corpus)) {
    auto t0 = clock_type::now();
    auto r = source.search(req);
    auto ms = ms_between(t0, clock_type::now());
    if (!r)
      return std::move(r.error());
    out.latencies_ms.push_back(ms);
    out.common_ms.push_back(ms);
  }
  return out;
}

std::map<std::string, double> probe_p99_by_form(const corpus_report& corpus,
                                                const probe_outcome& outcome) {
  assert(outcome.latencies_ms.size() == corpus.probes.size());
  std::map<std::string, std::vector<double>> by_form;
  for (std::size_t i = 0; i < corpus.probes.size() && i < outcome.latencies_ms.size(); ++i)
    by_form[corpus.probes[i].label].push_back(outcome.latencies_ms[i]);
  std::map<std::string, double> out;
  for (auto& [form, ms] : by_form)
    out[form] = percentile_or_zero(ms, 0.99);
  return out;
}

caf::expected<built_corpus> build_recall_corpus(const store_params& params,
                                                const corpus_spec& spec) {
  built_corpus out;
  auto store = open_message_store(params);
  if (!store)
    return std::move(store.error());
  out.store = std::move(*store);
  auto report = generate_corpus(*out.store, spec);
  if (!report)
    return std::move(report.error());
  out.report = std::move(*report);
  if (auto* maintenance = out.store->maintenance()) {
    auto t0 = clock_type::now();
    if (auto n = maintenance->index_all(); !n)
      return std::move(n.error());
    out.index_seconds = ms_between(t0, clock_type::now()) / 1000;
  }
  return out;
}

} // namespace mneme::bench
