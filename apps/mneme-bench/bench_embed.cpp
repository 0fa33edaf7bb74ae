// mneme-bench embed (issue 48): the embedder's throughput against the in-process fake
// LLM, side by side with the floor of the same work.
//
// A recall corpus (`--messages` rows, SQLite, indexed for full text) is built once.
// Each pass then runs, in alternating order:
//   direct  one libcurl handle posting the rows worth embedding (policies/embed_plan)
//           `--batch-size` at a time to the fake's POST /v1/embeddings and reading each
//           answer with the embedder's own parser (actors/llm/embedding_wire): the HTTP
//           and JSON work alone, nothing stored;
//   mneme   the runtime started on the corpus with `embeddings:` on (a model name of
//           its own per pass, so everything is embedded again from watermark 0): the
//           embedder reads the rows through the storage actor, calls the fake, stores
//           vectors and watermark in one transaction and fills the index, until
//           mneme_embedded_rows_total reaches the corpus's worth.
// Both passes make the same calls to the same fake in this process, so the fake's own
// processor time is in both: `mneme_cpu_us_per_row` is (mneme pass CPU − direct pass
// CPU) / rows, what the embedder adds; throughputs are rows a second of wall time.
// The database is a file without fsync (bench_runtime_config): durability is not what is
// measured here. Flags at the registration at the end (`mneme-bench embed --help`).
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "actors/embed/embedder_actor.hpp"
#include "actors/llm/curl_multi_loop.hpp"
#include "actors/runtime.hpp"
#include "actors/scheduler_tuning.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "apps/mneme-bench/bench_registry.hpp"
#include "apps/mneme-bench/bench_stats.hpp"
#include "apps/mneme-bench/inprocess_runtime.hpp"
#include "apps/mneme-bench/proxy_load.hpp"
#include "apps/mneme-bench/recall_measure.hpp"
#include "messages/errc.hpp"
#include "messages/mneme_types.hpp"
#include "policies/embed_plan.hpp"
#include "policies/percentile.hpp"
#include "store/store_maintenance.hpp"

namespace mneme::bench {
namespace {

using clock_type = std::chrono::steady_clock;

struct embed_options {
  int64_t messages = 20000;
  int64_t batch_size = 64;
  int64_t dims = 256;
  int32_t passes = 3;
  int64_t max_seconds = 1800;
  bool json = false;
};

struct pass_figures {
  double wall_s = 0, cpu_s = 0;
  int64_t rows = 0, calls = 0;
  bool ok = false;
};

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// The texts the embedder would send, in id order (worth_embedding, embed_input).
std::vector<std::string> texts_worth_embedding(const std::string& db_path,
                                               std::size_t max_chars) {
  std::vector<std::string> out;
  sqlite3* db = nullptr;
  sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT role, is_summary, content FROM messages ORDER BY id", -1, &st,
                     nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::string_view role{reinterpret_cast<const char*>(sqlite3_column_text(st, 0))};
    bool summary = sqlite3_column_int(st, 1) != 0;
    std::string_view text{reinterpret_cast<const char*>(sqlite3_column_blob(st, 2)),
                          static_cast<std::size_t>(sqlite3_column_bytes(st, 2))};
    if (worth_embedding(role, summary, true, text))
      out.push_back(embed_input(text, max_chars));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

size_t append_answer(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// The floor: the same calls, one at a time on one kept-alive connection, each answer
// parsed and checked as the embedder does; nothing stored.
pass_figures direct_pass(const llm::embedding_endpoint& ep, const std::vector<std::string>& texts,
                         std::size_t batch) {
  pass_figures f;
  llm::ensure_curl_global_init();
  auto* h = curl_easy_init();
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  headers = curl_slist_append(headers, "X-Mneme-Purpose: embedding");
  curl_easy_setopt(h, CURLOPT_URL, ep.url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 60000L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, append_answer);
  auto cpu0 = process_cpu_seconds();
  auto t0 = clock_type::now();
  f.ok = true;
  for (std::size_t at = 0; at < texts.size() && f.ok; at += batch) {
    std::vector<std::string> part(texts.begin() + static_cast<std::ptrdiff_t>(at),
                                  texts.begin() + static_cast<std::ptrdiff_t>(
                                                    std::min(texts.size(), at + batch)));
    auto body = llm::embedding_request_json(ep, part);
    std::string answer;
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &answer);
    long status = 0;
    auto rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    auto vs = llm::parse_embedding_answer(answer, part.size(), ep.dimensions);
    if (rc != CURLE_OK || status != 200 || !vs) {
      std::cerr << "direct call failed: curl " << rc << ", status " << status << "\n";
      f.ok = false;
    }
    f.rows += vs ? static_cast<int64_t>(vs->size()) : 0;
    ++f.calls;
  }
  f.wall_s = seconds_since(t0);
  f.cpu_s = process_cpu_seconds() - cpu0;
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  return f;
}

// The runtime on the corpus with embeddings on under `model`, until every row worth
// embedding is stored (or the deadline).
pass_figures mneme_pass(caf::actor_system& sys, const fakellm::fake_llm_server& fake,
                        const std::string& db_path, const embed_options& o,
                        const std::string& model, int64_t rows) {
  pass_figures f;
  auto rc = bench_runtime_config(1, fake.base_url(), db_path);
  if (!rc) {
    std::cerr << render_error(rc.error()) << "\n";
    return f;
  }
  embedding_params p;
  p.enabled = true;
  p.model = model;
  p.dimensions = o.dims;
  p.batch_size = o.batch_size;
  p.idle_poll_ms = 50;
  rc->embeddings = embedder_config{embedding_endpoint_of(p, fake.base_url(), ""), p};
  auto cpu0 = process_cpu_seconds();
  auto t0 = clock_type::now();
  auto rt = runtime::start(sys, *rc);
  if (!rt) {
    std::cerr << render_error(rt.error()) << "\n";
    return f;
  }
  auto& m = *(*rt)->metrics()->embeddings;
  auto deadline = t0 + std::chrono::seconds{o.max_seconds};
  while (static_cast<int64_t>(m.embedded_rows[0].load()) < rows && clock_type::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds{2});
  f.wall_s = seconds_since(t0);
  f.cpu_s = process_cpu_seconds() - cpu0;
  f.rows = static_cast<int64_t>(m.embedded_rows[0].load());
  f.calls = static_cast<int64_t>(m.provider_calls.load());
  f.ok = f.rows >= rows && m.skipped_rows.load() == 0;
  (*rt)->stop();
  return f;
}

int run_embed_bench(const embed_options& o) {
  std::string dir = "/tmp/mneme-bench-embed-XXXXXX";
  if (!::mkdtemp(dir.data())) {
    std::cerr << "cannot create a directory under /tmp\n";
    return exit_failure;
  }
  auto cleanup = [&] { std::filesystem::remove_all(dir); };
  store_params params;
  params.path = dir + "/embed.db";
  params.synchronous_full = false;
  {
    auto built = build_recall_corpus(params, bench_corpus_spec(o.messages));
    if (!built) {
      std::cerr << render_error(built.error()) << "\n";
      cleanup();
      return exit_failure;
    }
    if (auto* maint = built->store->maintenance())
      if (auto n = maint->index_all(); !n) {
        std::cerr << render_error(n.error()) << "\n";
        cleanup();
        return exit_failure;
      }
  }
  embedding_params defaults;
  auto texts = texts_worth_embedding(params.path,
                                     static_cast<std::size_t>(defaults.max_input_chars));
  fakellm::fake_llm_server fake;
  if (auto port = fake.start(); !port) {
    std::cerr << render_error(port.error()) << "\n";
    cleanup();
    return exit_failure;
  }
  caf::actor_system_config cfg;
  register_mneme_types(cfg);
  tune_scheduler(cfg);
  cfg.set("logger.verbosity", caf::atom("quiet"));
  caf::actor_system sys{cfg};
  embedding_params ep_params;
  ep_params.model = "fake-embed-direct";
  ep_params.dimensions = o.dims;
  auto ep = embedding_endpoint_of(ep_params, fake.base_url(), "");
  std::vector<double> direct_rps, mneme_rps, ratio, extra_cpu_us, direct_cpu_us, mneme_cpu_us;
  nlohmann::json passes = nlohmann::json::array();
  bool all_ok = true;
  for (int32_t pass = 0; pass < o.passes && all_ok; ++pass) {
    pass_figures d, m;
    auto model = "fake-embed-" + std::to_string(pass);
    auto rows = static_cast<int64_t>(texts.size());
    if (pass % 2 == 0) {
      d = direct_pass(ep, texts, static_cast<std::size_t>(o.batch_size));
      m = mneme_pass(sys, fake, params.path, o, model, rows);
    } else {
      m = mneme_pass(sys, fake, params.path, o, model, rows);
      d = direct_pass(ep, texts, static_cast<std::size_t>(o.batch_size));
    }
    all_ok = d.ok && m.ok;
    direct_rps.push_back(d.rows / std::max(1e-9, d.wall_s));
    mneme_rps.push_back(m.rows / std::max(1e-9, m.wall_s));
    ratio.push_back(mneme_rps.back() / std::max(1e-9, direct_rps.back()));
    direct_cpu_us.push_back(d.cpu_s * 1e6 / std::max<int64_t>(1, d.rows));
    mneme_cpu_us.push_back(m.cpu_s * 1e6 / std::max<int64_t>(1, m.rows));
    extra_cpu_us.push_back(mneme_cpu_us.back() - direct_cpu_us.back());
    passes.push_back({{"direct_rows_per_s", direct_rps.back()},
                      {"mneme_rows_per_s", mneme_rps.back()},
                      {"direct_cpu_us_per_row", direct_cpu_us.back()},
                      {"mneme_pass_cpu_us_per_row", mneme_cpu_us.back()},
                      {"mneme_calls", m.calls},
                      {"direct_calls", d.calls},
                      {"mneme_rows", m.rows},
                      {"ok", d.ok && m.ok}});
  }
  fake.stop();
  nlohmann::json j{{"messages", o.messages},
                   {"rows_embedded_per_pass", texts.size()},
                   {"batch_size", o.batch_size},
                   {"dims", o.dims},
                   {"passes", passes.size()},
                   {"direct_rows_per_s", median_and_range(direct_rps)},
                   {"mneme_rows_per_s", median_and_range(mneme_rps)},
                   {"mneme_vs_direct", median_and_range(ratio)},
                   {"direct_cpu_us_per_row", median_and_range(direct_cpu_us)},
                   {"mneme_cpu_us_per_row", median_and_range(extra_cpu_us)},
                   {"per_pass", passes}};
  if (o.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    for (auto& [k, v] : j.items())
      std::printf("%-26s %s\n", k.c_str(), v.dump().c_str());
  }
  cleanup();
  return all_ok ? exit_ok : exit_failure;
}

MNEME_BENCH("embed",
            "the embedder against the in-process fake's /v1/embeddings, beside the same calls"
            " made directly",
            [](CLI::App& cmd) -> bench_action {
              auto o = std::make_shared<embed_options>();
              cmd.add_option("--messages", o->messages, "rows in the corpus")
                ->check(integer_range<int64_t>(100, 10000000))->capture_default_str();
              cmd.add_option("--batch-size", o->batch_size, "texts per provider call")
                ->check(integer_range<int64_t>(1, 2048))->capture_default_str();
              cmd.add_option("--dims", o->dims, "vector dimensions")
                ->check(integer_range<int64_t>(1, 4096))->capture_default_str();
              cmd.add_option("--passes", o->passes, "passes of both ways")
                ->check(integer_range<int32_t>(1, 20))->capture_default_str();
              cmd.add_option("--max-seconds", o->max_seconds, "deadline of each mneme pass")
                ->check(integer_range<int64_t>(1, 86400))->capture_default_str();
              cmd.add_flag("--json", o->json, "one JSON object on stdout");
              return [o] { return run_embed_bench(*o); };
            });

} // namespace
} // namespace mneme::bench
