// mneme-bench http: the daemon's HTTP server under many keep-alive clients and slow
// connections. In process (the default) it starts the in-process fake LLM answering
// chat calls after --llm-delay-ms, the runtime on a SQLite file in a fresh directory
// under /tmp (removed at the end; the chat pool admits every client at once, the
// compaction threshold is far above what the turns add) and api::http_server on
// 127.0.0.1 with --io-threads; with --server it drives a daemon already running on
// loopback instead. The load (http_load.hpp), from two threads whatever the number of
// clients:
//   - --clients keep-alive clients, each doing --turns turns one after another
//     (POST /v1/sessions/bench-<i>/turns); a turn is timed from the start of its write
//     to the end of its answer; answers other than 200 are counted by status, broken
//     connections and turns over --turn-timeout-ms by kind (the next turn reconnects);
//   - --slow connections sending a GET /v1/health header one byte per second, never
//     finishing it, while the clients run; closes by the server are counted (and,
//     apart, connections TCP gave up on because the server never acknowledged them);
//   - every 50 ms a new connection doing GET /v1/health (5 s timeout);
//   - every 100 ms the server process's threads, open files and RSS (/proc/self in
//     process, /proc/<pid> with --pid; in process they include the load's own: its
//     threads, and its sockets, which share the file limit with the server's).
// Reports turn latency p50/p99/max beside the fake's delay, health latency, threads and
// RSS, with the targets: turn p99 <= delay + 50 ms, health p99 <= 50 ms. Percentiles are
// nearest-rank. Nothing of a message's text is printed. The whole run stops after
// --max-seconds (turns not started by then are counted as not run). In process the server
// then stops as the daemon does (begin_shutdown, a turn's time for requests in flight,
// 503 for the rest, the runtime, join):
// shutdown_seconds, or null when that took over 60 s (the report is printed, exit 1).
// Exit codes: 0 every turn answered 200 before the deadline, 1 otherwise, 2 bad flags.
// Options:
//   --clients N          keep-alive clients (default 1000)
//   --turns N            turns per client (default 20)
//   --slow N             slow connections (default 200)
//   --idle N             idle connections sending nothing, reopened when closed (default 0):
//                        a socket flood from one address (docs/benchmarks.md "flood")
//   --llm-delay-ms D     the fake LLM's delay for chat calls (default 200; in process)
//   --io-threads N       the HTTP server's io_threads argument (default 2; in process)
//   --think-ms T         pause between a client's turns (default 0)
//   --turn-timeout-ms T  a turn's limit, write + answer (default 30000)
//   --max-seconds S      the load's deadline (default 600)
//   --server URL         drive the daemon at URL (http://127.0.0.1:PORT) instead
//   --token T            bearer token for the daemon's turns (with --server)
//   --pid P              the daemon's pid: threads and RSS from /proc/P (with --server)
//   --json               one JSON object on stdout
// The flags are declared, with their ranges, in setup() at the end of this file
// (`mneme-bench http --help`). Only this program links this file.
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <csignal>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/asio/ip/address_v4.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/llm/llm_endpoint.hpp"
#include "actors/runtime.hpp"
#include "apps/common/api/http_server.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "apps/mneme-bench/bench_registry.hpp"
#include "apps/mneme-bench/http_load.hpp"
#include "apps/mneme-bench/inprocess_runtime.hpp"
#include "messages/errc.hpp"
#include "policies/percentile.hpp"

namespace mneme::bench {

namespace {

constexpr int64_t health_target_ms = 50;
constexpr int64_t turn_slack_ms = 50; // turn p99 target: the fake's delay plus this

struct options {
  int clients = 1000;
  int turns = 20;
  int slow = 200;
  int idle = 0;
  int llm_delay_ms = 200;
  int io_threads = 2;
  int think_ms = 0;
  int turn_timeout_ms = 30000;
  int max_seconds = 600;
  std::string server;
  std::string token;
  int pid = 0;
  bool json = false;
};


nlohmann::json rounded(std::optional<double> v) {
  if (!v)
    return nullptr;
  return std::round(*v * 100.0) / 100.0;
}

// "http://HOST:PORT[/]" with an IPv4 loopback HOST (or localhost) -> the target.
std::optional<http_target> parse_server_url(const std::string& url) {
  constexpr std::string_view scheme = "http://";
  if (url.compare(0, scheme.size(), scheme) != 0)
    return std::nullopt;
  auto rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/')
    rest.pop_back();
  auto colon = rest.rfind(':');
  if (colon == std::string::npos)
    return std::nullopt;
  http_target t;
  t.host = rest.substr(0, colon);
  if (t.host == "localhost")
    t.host = "127.0.0.1";
  boost::system::error_code ec;
  auto addr = boost::asio::ip::make_address_v4(t.host, ec);
  if (ec || !addr.is_loopback())
    return std::nullopt;
  try {
    size_t used = 0;
    auto port = std::stoi(rest.substr(colon + 1), &used);
    if (used != rest.size() - colon - 1 || port <= 0 || port > 65535)
      return std::nullopt;
    t.port = static_cast<uint16_t>(port);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return t;
}

http_load_options load_options_of(const options& o) {
  http_load_options l;
  l.clients = o.clients;
  l.turns = o.turns;
  l.slow = o.slow;
  l.idle = o.idle;
  l.think = std::chrono::milliseconds{o.think_ms};
  l.turn_timeout = std::chrono::milliseconds{o.turn_timeout_ms};
  l.max_duration = std::chrono::seconds{o.max_seconds};
  return l;
}

// How long the server gets to stop before the bench gives up on it.
constexpr std::chrono::seconds shutdown_limit{60};

struct in_process_result {
  http_load_result load;
  double shutdown_seconds = 0;
};

// Calls `stuck` (which must not return) when `stop` has not returned within `limit`.
void bounded(const std::function<void()>& stop, std::chrono::seconds limit,
             const std::function<void()>& stuck) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog{[&] {
    std::unique_lock<std::mutex> lock{m};
    if (!cv.wait_for(lock, limit, [&] { return done; }))
      stuck();
  }};
  stop();
  {
    std::lock_guard<std::mutex> lock{m};
    done = true;
  }
  cv.notify_one();
  watchdog.join();
}

// Fake LLM, runtime and HTTP server in this process, and the load against them. When
// the server does not stop within shutdown_limit, `stuck(load, dir)` is called (it must
// not return).
caf::expected<in_process_result>
run_in_process(const options& o,
               const std::function<void(const http_load_result&, const std::string&)>& stuck) {
  inprocess_daemon::settings rig;
  rig.name = "http";
  rig.scenario = chat_delay_scenario(o.llm_delay_ms);
  rig.concurrency = o.clients;
  rig.io_threads = o.io_threads;
  auto daemon = inprocess_daemon::start(rig);
  if (!daemon)
    return daemon.error();
  auto& d = **daemon;
  http_target target;
  target.port = d.port();
  target.proc_dir = "/proc/self";
  in_process_result out;
  out.load = run_http_load(target, load_options_of(o));
  // The daemon's shutdown: requests in flight get a turn's time, the rest 503.
  const auto stop_begin = std::chrono::steady_clock::now();
  bounded([&] { d.shut_down(std::chrono::milliseconds{o.llm_delay_ms + 1000}); },
          shutdown_limit, [&] { stuck(out.load, d.dir()); });
  out.shutdown_seconds =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_begin).count();
  return out;
}

nlohmann::json report(const options& o, const http_load_result& r) {
  const bool in_process = o.server.empty();
  const bool sampled = in_process || o.pid > 0;
  auto turn_p99 = percentile(r.turn_ms, 0.99);
  auto health_p99 = percentile(r.health_ms, 0.99);
  nlohmann::json j;
  j["server"] = in_process ? std::string{"in-process"} : o.server;
  j["clients"] = o.clients;
  j["turns_per_client"] = o.turns;
  j["think_ms"] = o.think_ms;
  j["turn_timeout_ms"] = o.turn_timeout_ms;
  j["max_seconds"] = o.max_seconds;
  j["io_threads"] = in_process ? nlohmann::json(o.io_threads) : nlohmann::json(nullptr);
  j["llm_delay_ms"] = in_process ? nlohmann::json(o.llm_delay_ms) : nlohmann::json(nullptr);
  j["turns_ok"] = r.turns_ok;
  j["turns_failed"] = r.turns_failed;
  j["turns_not_run"] = r.turns_not_run;
  j["failed_by_status"] = r.failed_by_status;
  j["failed_by_error"] = r.failed_by_error;
  j["reconnects"] = r.reconnects;
  j["deadline_hit"] = r.deadline_hit;
  j["turn_p50_ms"] = rounded(percentile(r.turn_ms, 0.50));
  j["turn_p99_ms"] = rounded(turn_p99);
  j["turn_max_ms"] = rounded(percentile(r.turn_ms, 1.0));
  j["turns_per_second"] = rounded(r.wall_seconds > 0
                                    ? static_cast<double>(r.turns_ok) / r.wall_seconds
                                    : 0.0);
  j["health_probes"] = r.health_probes;
  j["health_p50_ms"] = rounded(percentile(r.health_ms, 0.50));
  j["health_p99_ms"] = rounded(health_p99);
  j["health_failed"] = r.health_failed;
  j["slow_connections"] = o.slow;
  j["slow_connected"] = r.slow_connected;
  j["slow_closed_by_server"] = r.slow_closed_by_server;
  j["slow_timed_out"] = r.slow_timed_out;
  j["idle_connections"] = o.idle;
  j["idle_connected"] = r.idle_connected;
  j["idle_closed_by_server"] = r.idle_closed_by_server;
  const auto& closed = r.slow_closed_after_s;
  j["slow_closed_after_s_min"] =
    rounded(closed.empty() ? std::nullopt
                           : std::optional<double>{*std::min_element(closed.begin(),
                                                                     closed.end())});
  j["slow_closed_after_s_max"] = rounded(percentile(r.slow_closed_after_s, 1.0));
  j["threads"] = sampled ? nlohmann::json(r.max_threads) : nlohmann::json(nullptr);
  j["threads_before_load"] = sampled ? nlohmann::json(r.threads_before) : nlohmann::json(nullptr);
  j["client_threads"] = r.client_threads;
  j["max_open_fds"] = sampled ? nlohmann::json(r.max_fds) : nlohmann::json(nullptr);
  j["rss_bytes"] = sampled ? nlohmann::json(r.rss_bytes) : nlohmann::json(nullptr);
  j["peak_rss_bytes"] = sampled ? nlohmann::json(r.peak_rss_bytes) : nlohmann::json(nullptr);
  j["wall_seconds"] = rounded(r.wall_seconds);
  const int64_t turn_target = in_process ? o.llm_delay_ms + turn_slack_ms : 0;
  j["target_turn_p99_ms"] = in_process ? nlohmann::json(turn_target) : nlohmann::json(nullptr);
  j["target_health_p99_ms"] = health_target_ms;
  j["turn_p99_met"] = in_process ? nlohmann::json(turn_p99 && *turn_p99 <= turn_target
                                                  && r.turns_failed == 0)
                                 : nlohmann::json(nullptr);
  j["health_p99_met"] = health_p99 && *health_p99 <= health_target_ms && r.health_failed == 0;
  return j;
}

void print_summary(const nlohmann::json& j) {
  auto s = [&](const char* key) { return j[key].dump(); };
  std::cout << fmt::format(
    "http: {} clients x {} turns, {} slow connections, server {} (io_threads {})\n"
    "  turns        ok {} failed {} not run {}; by status {} by error {}\n"
    "  turn ms      p50 {} p99 {} max {} (fake LLM delay {} ms; target p99 <= {}: {})\n"
    "  throughput   {} turns/s over {} s{}\n"
    "  health ms    p50 {} p99 {} over {} probes, {} failed (target p99 <= {}: {})\n"
    "  slow         {} connected, {} closed by the server (after {}..{} s), {} timed out\n"
    "  idle         {} sockets: {} connects (reopens included), {} closed by the server\n"
    "  threads      {} at peak, {} before the load (the load runs {} of its own)\n"
    "  open files   {} at peak\n"
    "  rss          {} bytes now, {} peak\n",
    s("clients"), s("turns_per_client"), s("slow_connections"), s("server"), s("io_threads"),
    s("turns_ok"), s("turns_failed"), s("turns_not_run"), s("failed_by_status"),
    s("failed_by_error"), s("turn_p50_ms"), s("turn_p99_ms"), s("turn_max_ms"),
    s("llm_delay_ms"), s("target_turn_p99_ms"), s("turn_p99_met"), s("turns_per_second"),
    s("wall_seconds"), j["deadline_hit"].get<bool>() ? " (deadline hit)" : "",
    s("health_p50_ms"), s("health_p99_ms"), s("health_probes"), s("health_failed"),
    s("target_health_p99_ms"), s("health_p99_met"), s("slow_connected"),
    s("slow_closed_by_server"), s("slow_closed_after_s_min"), s("slow_closed_after_s_max"),
    s("slow_timed_out"), s("idle_connections"), s("idle_connected"),
    s("idle_closed_by_server"), s("threads"), s("threads_before_load"), s("client_threads"), s("max_open_fds"),
    s("rss_bytes"),
    s("peak_rss_bytes"));
  if (j.contains("shutdown_seconds"))
    std::cout << fmt::format("  shutdown     {} s (null: not within the limit)\n",
                             s("shutdown_seconds"));
}

int run(const options& o) {
  raise_file_limit();
  std::signal(SIGPIPE, SIG_IGN);
  auto emit = [&](const nlohmann::json& j) {
    if (o.json)
      std::cout << j.dump() << "\n";
    else
      print_summary(j);
    std::cout << std::flush;
  };
  http_load_result result;
  std::optional<double> shutdown_seconds;
  if (o.server.empty()) {
    auto r = run_in_process(o, [&](const http_load_result& load, const std::string& dir) {
      auto j = report(o, load);
      j["shutdown_seconds"] = nullptr; // did not stop within shutdown_limit
      emit(j);
      std::cerr << "mneme-bench http: the server did not stop within "
                << shutdown_limit.count() << " s; exiting without it\n";
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      std::_Exit(1);
    });
    if (!r) {
      std::cerr << "mneme-bench http: " << render_error(r.error()) << "\n";
      return 1;
    }
    result = std::move(r->load);
    shutdown_seconds = r->shutdown_seconds;
  } else {
    auto target = *parse_server_url(o.server);
    target.token = o.token;
    if (o.pid > 0)
      target.proc_dir = fmt::format("/proc/{}", o.pid);
    result = run_http_load(target, load_options_of(o));
  }
  auto j = report(o, result);
  if (o.server.empty())
    j["shutdown_seconds"] = rounded(shutdown_seconds);
  emit(j);
  return result.turns_failed == 0 && result.turns_not_run == 0 && !result.deadline_hit ? 0 : 1;
}

// Declares the flags of `mneme-bench http`; --server and --pid are checked as they parse.
bench_action setup(CLI::App& cmd) {
  auto o = std::make_shared<options>();
  cmd.add_option("--clients", o->clients, "keep-alive clients")->check(integer_range(1, 10000));
  cmd.add_option("--turns", o->turns, "turns per client")->check(integer_range(1, 10000));
  cmd.add_option("--slow", o->slow, "connections dribbling a header, one byte per second")
    ->check(integer_range(0, 5000));
  cmd.add_option("--idle", o->idle, "idle connections sending nothing, reopened when closed")
    ->check(integer_range(0, 19000));
  cmd.add_option("--llm-delay-ms", o->llm_delay_ms, "the fake LLM's delay for chat calls")
    ->check(integer_range(0, 60000));
  cmd.add_option("--io-threads", o->io_threads, "the in-process HTTP server's io_threads")
    ->check(integer_range(1, 256));
  cmd.add_option("--think-ms", o->think_ms, "pause between a client's turns")
    ->check(integer_range(0, 60000));
  cmd.add_option("--turn-timeout-ms", o->turn_timeout_ms, "limit of one turn (write + answer)")
    ->check(integer_range(100, 600000));
  cmd.add_option("--max-seconds", o->max_seconds, "deadline of the whole load")
    ->check(integer_range(5, 3600));
  CLI::Validator loopback_url{[](std::string& url) {
                                return parse_server_url(url)
                                         ? std::string{}
                                         : "must be http://<loopback IPv4>:PORT, got " + url;
                              },
                              "URL"};
  auto* server = cmd.add_option("--server", o->server,
                                "drive the daemon at http://127.0.0.1:PORT instead")
                   ->check(loopback_url);
  cmd.add_option("--token", o->token, "bearer token for the daemon")->needs(server);
  CLI::Validator running_pid{[](std::string& pid) {
                               return std::filesystem::exists("/proc/" + pid + "/status")
                                        ? std::string{}
                                        : "no process " + pid;
                             },
                             ""};
  cmd.add_option("--pid", o->pid, "the daemon's pid: threads and RSS from /proc/PID")
    ->default_str("")  // 0: not given
    ->check(integer_range(1, 1 << 30))
    ->check(running_pid)->needs(server);
  cmd.add_flag("--json", o->json, "one JSON object on stdout");
  return [o] { return run(*o); };
}

} // namespace

MNEME_BENCH("http", "1,000 keep-alive clients x 20 turns + 200 slow connections via HTTP",
            setup);

} // namespace mneme::bench
