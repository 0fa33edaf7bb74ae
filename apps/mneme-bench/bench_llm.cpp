// mneme-bench llm: N concurrent summary requests through the summarizer pool against
// the in-process fake LLM server answering after a fixed delay. Reports wall time,
// the process's peak thread count, errors, and the client's overhead per call (call
// latency minus the server's delay). `--baseline threads` runs the same load as one
// blocking curl_easy_perform per thread (what detached workers at that concurrency
// would cost) for comparison. Options:
//   --json               one JSON object on stdout
//   --requests N         concurrent requests (default 1000)
//   --delay-ms D         the fake server's answer delay (default 500)
//   --baseline threads   thread-per-call baseline instead of the pool
// The flags are declared, with their ranges, at the registration at the end of this
// file (`mneme-bench llm --help`). Only this program links this file.
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <sstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <curl/curl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/llm/curl_multi_loop.hpp"
#include "actors/llm/llm_pool.hpp"
#include "actors/llm/llm_wire.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "apps/mneme-bench/bench_registry.hpp"
#include "policies/percentile.hpp"

namespace mneme::bench {
namespace {

using steady = std::chrono::steady_clock;

int count_threads() {
  int n = 0;
  if (auto* dir = ::opendir("/proc/self/task")) {
    while (auto* e = ::readdir(dir))
      n += e->d_name[0] != '.';
    ::closedir(dir);
  }
  return n;
}

// CPU time (user + system) of this process's threads whose name starts with `prefix`,
// or of the whole process when `prefix` is empty, in ms (clock-tick resolution).
double cpu_ms(const std::string& prefix) {
  double ticks = 0;
  if (auto* dir = ::opendir("/proc/self/task")) {
    while (auto* e = ::readdir(dir)) {
      if (e->d_name[0] == '.')
        continue;
      std::string base = std::string{"/proc/self/task/"} + e->d_name;
      if (!prefix.empty()) {
        std::ifstream comm{base + "/comm"};
        std::string name;
        std::getline(comm, name);
        if (name.rfind(prefix, 0) != 0)
          continue;
      }
      std::ifstream stat{base + "/stat"};
      std::string line;
      std::getline(stat, line);
      // Fields after the ")" closing the name: state is field 3; utime 14, stime 15.
      std::istringstream rest{line.substr(line.rfind(')') + 2)};
      std::string field;
      for (int i = 3; i <= 15 && rest >> field; ++i)
        if (i == 14 || i == 15)
          ticks += std::stod(field);
    }
    ::closedir(dir);
  }
  return ticks * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// Samples /proc/self/task every few ms; peak() excludes the sampler's own thread.
class thread_sampler {
public:
  thread_sampler() : th_([this] {
    while (!stop_) {
      peak_ = std::max(peak_.load(), count_threads());
      std::this_thread::sleep_for(std::chrono::milliseconds{2});
    }
  }) {}
  ~thread_sampler() { finish(); }
  int finish() {
    if (!stop_.exchange(true))
      th_.join();
    return peak_ - 1;
  }

private:
  std::atomic<bool> stop_{false};
  std::atomic<int> peak_{0};
  std::thread th_;
};

struct options {
  bool json = false;
  int requests = 1000;
  int delay_ms = 500;
  bool baseline_threads = false;
};

struct batch_result {
  double wall_s = 0;
  int threads = 0;
  int errors = 0;
  std::map<std::string, int> error_codes;
  std::vector<double> latency_ms;
};

chat_request bench_request(int i) {
  chat_request req;
  req.purpose = llm_purpose::summary;
  req.model = "fake-summary";
  message m;
  m.session_id = "bench-" + std::to_string(i);
  m.role = msg_role::user;
  m.content = "Summarize the conversation, target about 200 tokens. The user edited "
              "/srv/app/config.yaml, restarted worker " + std::to_string(i)
              + " and saw ERR_TIMEOUT_42 twice before the fix in build 1.2.3.";
  req.messages.push_back(m);
  return req;
}

// Fires `n` requests at once from one event-based actor and waits for every answer.
batch_result run_pool_batch(caf::actor_system& sys, const llm_pool_actor& pool,
                            const llm::llm_pool_config& cfg, int n) {
  std::promise<batch_result> done;
  auto fut = done.get_future();
  thread_sampler sampler;
  auto start = steady::now();
  sys.spawn([&done, pool, cfg, n, start](caf::event_based_actor* self) {
    auto res = std::make_shared<batch_result>();
    auto left = std::make_shared<int>(n);
    auto finish_one = [=, &done] {
      if (--*left == 0) {
        res->wall_s = std::chrono::duration<double>(steady::now() - start).count();
        done.set_value(*res);
        self->quit();
      }
    };
    for (int i = 0; i < n; ++i) {
      auto t0 = steady::now();
      self->request(pool, llm::caller_timeout(cfg), llm_call_atom_v, bench_request(i))
        .then(
          [=](chat_answer&) {
            res->latency_ms.push_back(
              std::chrono::duration<double, std::milli>(steady::now() - t0).count());
            finish_one();
          },
          [=](caf::error& err) {
            ++res->errors;
            ++res->error_codes[render_error(err).substr(0, render_error(err).find(':'))];
            finish_one();
          });
    }
  });
  auto res = fut.get();
  res.threads = sampler.finish();
  return res;
}

// The same load as one blocking curl_easy_perform per thread.
batch_result run_thread_batch(const std::string& url, int n) {
  llm::ensure_curl_global_init();
  batch_result res;
  std::vector<double> lat(static_cast<size_t>(n), -1);
  std::atomic<int> errors{0};
  thread_sampler sampler;
  auto start = steady::now();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      auto body = llm::to_wire_json(bench_request(i));
      std::string answer;
      auto* h = curl_easy_init();
      curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
      headers = curl_slist_append(headers, "X-Mneme-Purpose: summary");
      curl_easy_setopt(h, CURLOPT_URL, url.c_str());
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
      curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
      curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
      curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 60000L);
      curl_easy_setopt(h, CURLOPT_WRITEFUNCTION,
                       +[](char* p, size_t s, size_t k, void* u) {
                         static_cast<std::string*>(u)->append(p, s * k);
                         return s * k;
                       });
      curl_easy_setopt(h, CURLOPT_WRITEDATA, &answer);
      auto t0 = steady::now();
      auto rc = curl_easy_perform(h);
      long status = 0;
      curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
      if (rc != CURLE_OK || status != 200)
        ++errors;
      else
        lat[static_cast<size_t>(i)] =
          std::chrono::duration<double, std::milli>(steady::now() - t0).count();
      curl_slist_free_all(headers);
      curl_easy_cleanup(h);
    });
  for (auto& t : threads)
    t.join();
  res.wall_s = std::chrono::duration<double>(steady::now() - start).count();
  res.threads = sampler.finish();
  res.errors = errors;
  for (auto v : lat)
    if (v >= 0)
      res.latency_ms.push_back(v);
  return res;
}

int run_llm_bench(const options& o) {
  auto threads_at_start = count_threads();
  fakellm::fake_llm_server server;
  if (auto port = server.start(); !port) {
    std::fprintf(stderr, "mneme-bench llm: fake server: %s\n",
                 render_error(port.error()).c_str());
    return 1;
  }
  fakellm::scenario s;
  fakellm::fault_rule latency;
  latency.kind = fakellm::fault_kind::latency;
  latency.latency_ms = o.delay_ms;
  if (o.delay_ms > 0)
    s.plan.rules.push_back(latency);
  if (auto err = server.set_scenario(s)) {
    std::fprintf(stderr, "mneme-bench llm: %s\n", render_error(err).c_str());
    return 1;
  }
  llm::llm_pool_config cfg;
  cfg.name = "summary";
  cfg.endpoint.url = llm::chat_completions_url(server.base_url());
  cfg.endpoint.model = "fake-summary";
  cfg.endpoint.purpose = llm_purpose::summary;
  cfg.endpoint.idle_timeout = std::chrono::seconds{30};
  cfg.endpoint.total_timeout = std::chrono::seconds{60};
  cfg.max_concurrency = static_cast<size_t>(o.requests);
  cfg.max_queue = static_cast<size_t>(o.requests);

  batch_result res;
  double sequential_ms = 0;
  double transport_cpu_ms = 0;
  double process_cpu_ms = 0;
  if (o.baseline_threads) {
    res = run_thread_batch(cfg.endpoint.url, o.requests);
  } else {
    caf::actor_system_config sys_cfg;
    register_mneme_types(sys_cfg);
    sys_cfg.set("logger.verbosity", caf::atom("quiet"));
    caf::actor_system sys{sys_cfg};
    auto pool = llm::spawn_llm_pool(sys, cfg);
    auto cpu0 = cpu_ms("");
    res = run_pool_batch(sys, pool, cfg, o.requests);
    transport_cpu_ms = cpu_ms("llm-summary"); // the pool's loop thread, from its start
    process_cpu_ms = cpu_ms("") - cpu0;
    // Per-call cost without server delay: 50 calls one after another.
    server.clear_faults();
    std::vector<double> seq;
    for (int i = 0; i < 50; ++i) {
      auto one = run_pool_batch(sys, pool, cfg, 1);
      if (!one.latency_ms.empty())
        seq.push_back(one.latency_ms.front());
    }
    sequential_ms = median_or_zero(seq);
    caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
  }
  auto p50 = median_or_zero(res.latency_ms) - o.delay_ms;
  auto p99 = percentile_or_zero(res.latency_ms, 0.99) - o.delay_ms;
  nlohmann::json codes = res.error_codes;
  if (o.json) {
    nlohmann::json j{{"bench", "llm"},
                     {"transport", o.baseline_threads ? "thread_per_call" : "curl_multi_pool"},
                     {"requests", o.requests},
                     {"delay_ms", o.delay_ms},
                     {"wall_s", res.wall_s},
                     {"threads", res.threads},
                     {"threads_at_start", threads_at_start},
                     {"errors", res.errors},
                     {"error_codes", codes},
                     {"overhead_ms_p50", p50},
                     {"overhead_ms_p99", p99}};
    if (!o.baseline_threads) {
      j["sequential_call_ms_p50"] = sequential_ms;
      j["transport_cpu_us_per_call"] = transport_cpu_ms * 1000.0 / o.requests;
      j["process_cpu_ms"] = process_cpu_ms;
    }
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("llm: %d concurrent summary requests, fake server delay %d ms, transport %s\n",
                o.requests, o.delay_ms,
                o.baseline_threads ? "thread per call" : "curl-multi pool");
    std::printf("  wall time          %.3f s (target <= 2 s)\n", res.wall_s);
    std::printf("  threads (peak)     %d (process had %d before the run)\n", res.threads,
                threads_at_start);
    std::printf("  errors             %d %s\n", res.errors, codes.dump().c_str());
    std::printf("  overhead per call  p50 %.1f ms, p99 %.1f ms (latency minus server delay)\n",
                p50, p99);
    if (!o.baseline_threads) {
      std::printf("  sequential call    p50 %.2f ms (no delay, one call at a time)\n",
                  sequential_ms);
      std::printf("  transport CPU      %.0f us per call (the pool's curl-multi thread)\n",
                  transport_cpu_ms * 1000.0 / o.requests);
      std::printf("  process CPU        %.0f ms for the batch (client, CAF and fake server)\n",
                  process_cpu_ms);
    }
  }
  server.stop();
  return res.errors == 0 ? 0 : 1;
}

} // namespace

MNEME_BENCH("llm", "1,000 concurrent summary calls through the LLM pool vs a 500 ms fake LLM",
            [](CLI::App& cmd) -> bench_action {
              auto o = std::make_shared<options>();
              cmd.add_option("--requests", o->requests, "concurrent requests")
                ->check(integer_range(1));
              cmd.add_option("--delay-ms", o->delay_ms, "the fake server's answer delay")
                ->check(integer_range(0));
              cmd.add_option_function<std::string>(
                   "--baseline", [o](const std::string&) { o->baseline_threads = true; },
                   "`threads`: one blocking call per thread instead of the pool")
                ->check(CLI::IsMember({"threads"}));
              cmd.add_flag("--json", o->json, "one JSON object on stdout");
              return [o] { return run_llm_bench(*o); };
            });

} // namespace mneme::bench
