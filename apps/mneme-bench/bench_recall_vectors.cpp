// `mneme-bench recall --vectors`; see bench_recall_vectors.hpp.
#include "apps/mneme-bench/bench_recall_vectors.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "apps/mneme-bench/bench_stats.hpp"
#include "apps/mneme-bench/recall_measure.hpp"
#include "messages/errc.hpp"
#include "policies/fake_embedding.hpp"
#include "policies/percentile.hpp"
#include "store/recall_sources.hpp"
#include "store/store_maintenance.hpp"
#include "store/vector_index.hpp"

namespace mneme::bench {

namespace {

using clock_type = std::chrono::steady_clock;
constexpr std::size_t dims = 256;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

std::vector<float> embed(const std::string& text) {
  return fake_embedding(text, dims, fake_embedding_mode::paraphrase);
}

// One planted paraphrase: a session of `user` whose one fact row says a member of a
// concept group; the probe asks with another member of the same group.
struct paraphrase_probe {
  recall_request request;
  std::string session_id;
};

const char* filler_rows[] = {"checking in about the weekly report",
                             "thanks, I will look at it tomorrow",
                             "can you summarise the meeting notes",
                             "sure, here is the summary of what we agreed"};

caf::expected<std::vector<paraphrase_probe>> plant_paraphrases(message_store& store,
                                                               sqlite3* db, int32_t users) {
  std::vector<std::string> names;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT DISTINCT user_id FROM sessions ORDER BY user_id LIMIT ?1", -1,
                     &st, nullptr);
  sqlite3_bind_int64(st, 1, users);
  while (sqlite3_step(st) == SQLITE_ROW)
    names.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  std::vector<paraphrase_probe> out;
  const auto& groups = fake_paraphrase_groups();
  for (std::size_t u = 0; u < names.size(); ++u) {
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto& members = groups[g].members;
      session_record rec;
      rec.user_id = names[u];
      rec.session_key = "paraphrase-" + groups[g].concept_name;
      auto s = store.create_session(rec, 1);
      if (!s)
        return std::move(s.error());
      for (int i = 0; i < 6; ++i) {
        message m;
        m.session_id = s->id;
        m.role = i % 2 == 0 ? msg_role::user : msg_role::assistant;
        m.content = i == 3 ? "overnight " + members[u % members.size()] + ", we need a fix"
                           : std::string{filler_rows[i % 4]};
        if (auto id = store.append(m); !id)
          return std::move(id.error());
      }
      paraphrase_probe p;
      p.request.user_id = names[u];
      p.request.query = members[(u + 1) % members.size()];
      p.session_id = s->id;
      out.push_back(std::move(p));
    }
  }
  return out;
}

struct index_build {
  double embed_seconds = 0, add_seconds = 0;
  std::size_t vectors = 0, bytes = 0;
};

// Every row's vector into `index`, as the embedder would after a restart.
index_build fill_index(sqlite3* db, vector_index& index) {
  index_build out;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT m.id, se.user_id, m.content FROM messages m"
                     " JOIN message_state st ON st.id = m.id"
                     " JOIN sessions se ON se.id = st.session_id",
                     -1, &st, nullptr);
  double embed_ms = 0, add_ms = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    auto id = sqlite3_column_int64(st, 0);
    std::string user{reinterpret_cast<const char*>(sqlite3_column_text(st, 1))};
    std::string text{reinterpret_cast<const char*>(sqlite3_column_blob(st, 2)),
                     static_cast<std::size_t>(sqlite3_column_bytes(st, 2))};
    auto t0 = clock_type::now();
    auto v = embed(text);
    auto t1 = clock_type::now();
    index.add(user, vector_source::message, id, v);
    embed_ms += std::chrono::duration<double, std::milli>(t1 - t0).count();
    add_ms += ms_since(t1);
  }
  sqlite3_finalize(st);
  out.embed_seconds = embed_ms / 1000;
  out.add_seconds = add_ms / 1000;
  out.vectors = index.size();
  out.bytes = index.memory_bytes();
  return out;
}

struct mode_figures {
  std::vector<double> ms;
  int64_t probes_found = 0, probes_expected = 0;
  int64_t paraphrase_found = 0, paraphrase_expected = 0;
  int64_t leaks = 0;
};

bool in_top3(const recall_result& r, const std::string& session_id) {
  for (std::size_t i = 0; i < r.hits.size() && i < 3; ++i)
    if (r.hits[i].hit.session_id == session_id)
      return true;
  return false;
}

// A hybrid or fts answer leaks when it shows a rolled-back row the request did not
// ask for, or (a probe of another user's fact) the planted session.
bool leaked(const recall_result& r, const recall_probe& p) {
  for (auto& h : r.hits) {
    if (h.kind == recall_hit_kind::rolled_back && !p.request.include_inactive)
      return true;
    if (p.expect == probe_expect::absent && h.hit.session_id == p.session_id
        && p.label.rfind("rolled", 0) != 0)
      return true;
  }
  return false;
}

// One pass: every query through both modes, alternating which goes first.
caf::expected<std::pair<mode_figures, mode_figures>>
search_pass(recall_source& source, const corpus_report& corpus,
            const std::vector<paraphrase_probe>& paraphrases) {
  mode_figures fts, hybrid;
  std::size_t turn = 0;
  auto both = [&](recall_request req, auto&& judge) -> caf::error {
    req.query_vector = embed(req.query); // the embedder's part, outside the timing
    for (int i = 0; i < 2; ++i) {
      bool run_hybrid = (i == 0) == (turn % 2 == 0);
      req.mode = run_hybrid ? recall_mode::hybrid : recall_mode::fts;
      auto t0 = clock_type::now();
      auto r = source.search(req);
      auto ms = ms_since(t0);
      if (!r)
        return std::move(r.error());
      auto& f = run_hybrid ? hybrid : fts;
      f.ms.push_back(ms);
      judge(*r, f);
    }
    ++turn;
    return {};
  };
  for (auto& p : corpus.probes) {
    auto err = both(p.request, [&](const recall_result& r, mode_figures& f) {
      if (p.expect == probe_expect::found) {
        ++f.probes_expected;
        f.probes_found += in_top3(r, p.session_id) ? 1 : 0;
      }
      f.leaks += leaked(r, p) ? 1 : 0;
    });
    if (err)
      return err;
  }
  for (auto& req : common_query_requests(corpus))
    if (auto err = both(req, [](const recall_result&, mode_figures&) {}))
      return err;
  for (auto& p : paraphrases) {
    auto err = both(p.request, [&](const recall_result& r, mode_figures& f) {
      ++f.paraphrase_expected;
      f.paraphrase_found += in_top3(r, p.session_id) ? 1 : 0;
    });
    if (err)
      return err;
  }
  return std::make_pair(std::move(fts), std::move(hybrid));
}

// Exact scan against the graph for one tenant of `n` random unit vectors: query p50
// of each, the graph's recall@k against the scan, its build time and bytes per vector.
nlohmann::json exact_vs_graph(std::size_t n, std::size_t k) {
  std::mt19937 rng{static_cast<unsigned>(n)};
  std::normal_distribution<float> gauss;
  auto random_unit = [&] {
    std::vector<float> v(dims);
    float norm = 0;
    for (auto& x : v) {
      x = gauss(rng);
      norm += x * x;
    }
    for (auto& x : v)
      x /= std::sqrt(norm);
    return v;
  };
  vector_index exact{dims, n + 1};
  vector_index graph{dims, 1};
  std::vector<std::vector<float>> data;
  for (std::size_t i = 0; i < n; ++i)
    data.push_back(random_unit());
  for (std::size_t i = 0; i < n; ++i)
    exact.add("u", vector_source::message, static_cast<int64_t>(i), data[i]);
  auto t0 = clock_type::now();
  for (std::size_t i = 0; i < n; ++i)
    graph.add("u", vector_source::message, static_cast<int64_t>(i), data[i]);
  auto build_s = ms_since(t0) / 1000;
  std::vector<double> exact_us, graph_us;
  std::size_t agreed = 0, total = 0;
  for (int q = 0; q < 200; ++q) {
    auto query = random_unit();
    auto a0 = clock_type::now();
    auto truth = exact.nearest("u", query, k, vector_source::message);
    exact_us.push_back(ms_since(a0) * 1000);
    auto b0 = clock_type::now();
    auto found = graph.nearest("u", query, k, vector_source::message);
    graph_us.push_back(ms_since(b0) * 1000);
    std::set<int64_t> ids;
    for (auto& h : truth)
      ids.insert(h.id);
    for (auto& h : found)
      agreed += ids.count(h.id);
    total += truth.size();
  }
  return {{"tenant_vectors", n},
          {"exact_p50_us", median_or_zero(exact_us)},
          {"graph_p50_us", median_or_zero(graph_us)},
          {"graph_recall_at_k", total == 0 ? 1.0 : static_cast<double>(agreed) / total},
          {"graph_build_s", build_s},
          {"graph_bytes_per_vector", graph.memory_bytes() / std::max<std::size_t>(1, n)},
          {"flat_bytes_per_vector", exact.memory_bytes() / std::max<std::size_t>(1, n)}};
}

double ratio(int64_t a, int64_t b) { return b == 0 ? 1.0 : static_cast<double>(a) / b; }

} // namespace

int run_vector_recall_bench(const vector_bench_options& o) {
  auto work = o.dir + "/mneme-bench-vectors-" + std::to_string(::getpid());
  std::filesystem::create_directories(work);
  store_params params;
  params.path = work + "/recall.db";
  params.synchronous_full = false; // building the corpus measures nothing durable
  auto fail = [&](const caf::error& err) {
    std::fprintf(stderr, "%s\n", render_error(err).c_str());
    std::filesystem::remove_all(work);
    return 1;
  };
  auto built = build_recall_corpus(params, bench_corpus_spec(o.messages));
  if (!built)
    return fail(built.error());
  sqlite3* db = nullptr;
  sqlite3_open_v2(params.path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  auto paraphrases = plant_paraphrases(*built->store, db, o.paraphrase_users);
  if (!paraphrases)
    return fail(paraphrases.error());
  if (auto* m = built->store->maintenance())
    if (auto n = m->index_all(); !n)
      return fail(n.error());
  auto index = std::make_shared<vector_index>(dims);
  auto build = fill_index(db, *index);
  sqlite3_close(db);
  auto source = open_recall_source(params);
  if (!source)
    return fail(source.error());
  (*source)->use_vectors(index);
  nlohmann::json passes = nlohmann::json::array();
  std::vector<double> fts_p50, fts_p99, hybrid_p50, hybrid_p99;
  mode_figures last_fts, last_hybrid;
  for (int32_t pass = 0; pass < o.passes; ++pass) {
    auto r = search_pass(**source, built->report, *paraphrases);
    if (!r)
      return fail(r.error());
    auto& [fts, hybrid] = *r;
    fts_p50.push_back(median_or_zero(fts.ms));
    fts_p99.push_back(percentile_or_zero(fts.ms, 0.99));
    hybrid_p50.push_back(median_or_zero(hybrid.ms));
    hybrid_p99.push_back(percentile_or_zero(hybrid.ms, 0.99));
    passes.push_back({{"fts_p50_ms", fts_p50.back()}, {"fts_p99_ms", fts_p99.back()},
                      {"hybrid_p50_ms", hybrid_p50.back()},
                      {"hybrid_p99_ms", hybrid_p99.back()}});
    last_fts = std::move(fts);
    last_hybrid = std::move(hybrid);
  }
  nlohmann::json tenants = nlohmann::json::array();
  for (std::size_t n : {1000, 4000, 16000, 64000})
    tenants.push_back(exact_vs_graph(n, 40));
  nlohmann::json j{
    {"messages", built->report.messages + static_cast<int64_t>(paraphrases->size()) * 6},
    {"queries_per_mode", last_fts.ms.size()},
    {"passes", o.passes},
    {"fts_search_p50_ms", median_and_range(fts_p50)},
    {"fts_search_p99_ms", median_and_range(fts_p99)},
    {"hybrid_search_p50_ms", median_and_range(hybrid_p50)},
    {"hybrid_search_p99_ms", median_and_range(hybrid_p99)},
    {"index_vectors", build.vectors},
    {"index_add_s", build.add_seconds},
    {"fake_embed_s", build.embed_seconds},
    {"index_bytes_per_vector", build.bytes / std::max<std::size_t>(1, build.vectors)},
    {"index_graph_tenants", index->graph_tenants()},
    {"fts_recall_at_3_probes", ratio(last_fts.probes_found, last_fts.probes_expected)},
    {"hybrid_recall_at_3_probes", ratio(last_hybrid.probes_found, last_hybrid.probes_expected)},
    {"fts_recall_at_3_paraphrase",
     ratio(last_fts.paraphrase_found, last_fts.paraphrase_expected)},
    {"hybrid_recall_at_3_paraphrase",
     ratio(last_hybrid.paraphrase_found, last_hybrid.paraphrase_expected)},
    {"paraphrase_probes", last_fts.paraphrase_expected},
    {"corpus_probes", last_fts.probes_expected},
    {"fts_leaks", last_fts.leaks},
    {"hybrid_leaks", last_hybrid.leaks},
    {"exact_vs_graph", tenants},
    {"per_pass", passes}};
  if (o.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    for (auto& [k, v] : j.items())
      std::printf("%-34s %s\n", k.c_str(), v.dump().c_str());
  }
  built->store.reset();
  std::filesystem::remove_all(work);
  bool pass = last_hybrid.leaks == 0 && last_fts.leaks == 0
              && last_hybrid.probes_found >= last_fts.probes_found
              && last_hybrid.paraphrase_found >= last_fts.paraphrase_found;
  return pass ? 0 : 1;
}

} // namespace mneme::bench
