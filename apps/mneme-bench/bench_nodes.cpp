// mneme-bench nodes: two `mneme serve` nodes on one PostgreSQL database beside one node
// alone, in one run (issue 26: "with two nodes on one PostgreSQL, report the aggregate
// ingest and the forwarded-request overhead p99"; docs/scale-out.md "Several nodes").
//   1. aggregate ingest: C client connections (keep-alive), each appending M messages
//      (POST /v1/sessions/{key}/messages, durable when acknowledged) to keys of its own,
//      every request sent to its key's owner (the mneme_leases row after a first append
//      that made each node own half the keys); the same load against one node alone.
//      Appends/s = acknowledged appends / wall time of the load.
//   2. forwarding overhead: one client, no other load, appends to keys owned by node A
//      sent alternately to A (direct) and to B (forwarded to A); p50/p99 of each and
//      forward_overhead_p99_ms = forwarded p99 - direct p99.
// 3 runs, each with fresh nodes on fresh schemas (alone first in even runs, the pair
// first in odd ones); medians of the runs with their range. The nodes are the `mneme`
// next to this program, their model the `mneme-fakellm` next to it (appends never call
// it). PostgreSQL: --pg-url names a server whose database the bench may create schemas
// in (dropped at the end); without it a throw-away cluster (testing/pg_test_cluster.hpp)
// is started in /tmp and removed at exit. Only mneme-bench links this file.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "apps/mneme-bench/pg_bench_schemas.hpp"
#include "apps/mneme-bench/bench_registry.hpp"
#include "apps/mneme-bench/bench_stats.hpp"
#include "policies/percentile.hpp"
#include "testing/loopback_port.hpp"
#include "testing/pg_test_cluster.hpp"

extern char** environ;

namespace mneme::bench {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

struct nodes_options {
  bool json = false;
  std::string pg_url;   // empty: a throw-away cluster
  int clients = 8;
  int per_client = 150;
  int latency_pairs = 300;
};

// The directory this program lives in (the other programs of the build are there).
fs::path own_dir() { return fs::read_symlink("/proc/self/exe").parent_path(); }

// A program of this build run in the background, stdout and stderr to `log`; killed
// (SIGTERM, then SIGKILL after 20 s) when destroyed.
class process {
public:
  process(const std::string& program, std::vector<std::string> args, const std::string& log) {
    auto path = (own_dir() / program).string();
    args.insert(args.begin(), path);
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
    if (posix_spawn(&pid_, path.c_str(), &fa, nullptr, argv.data(), environ) != 0)
      pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    if (pid_ < 0)
      throw std::runtime_error("cannot start " + path);
  }
  ~process() {
    if (pid_ <= 0)
      return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 2000; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_)
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  process(const process&) = delete;
  process& operator=(const process&) = delete;
  bool alive() const { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }

private:
  pid_t pid_ = -1;
};

std::string file_text(const std::string& path) {
  std::ifstream in{path};
  return std::string{std::istreambuf_iterator<char>{in}, {}};
}

// Waits until GET `path` on `port` answers 200 (30 s at most); throws naming the log.
void wait_ready(const process& p, int port, const std::string& path, const std::string& log) {
  auto until = clock_type::now() + std::chrono::seconds(30);
  while (clock_type::now() < until) {
    httplib::Client c{"127.0.0.1", port};
    c.set_connection_timeout(0, 200000);
    if (auto r = c.Get(path.c_str()); r && r->status == 200)
      return;
    if (!p.alive())
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("a program did not start; its log " + log + ":\n" + file_text(log));
}

struct node {
  std::string id;
  int port = 0;
  std::unique_ptr<process> proc;
};

// `count` nodes on the schema `db_url`, model at `llm_port`, files in `dir`.
std::vector<node> start_nodes(int count, const std::string& db_url, int llm_port,
                              const fs::path& dir, const std::string& tag) {
  std::vector<node> nodes(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    auto& n = nodes[static_cast<size_t>(i)];
    n.id = fmt::format("{}-{}", tag, static_cast<char>('a' + i));
    n.port = testing::free_loopback_port();
    auto config = (dir / (n.id + ".yaml")).string();
    std::ofstream{config} << "model:\n"
                             "  base_url: http://127.0.0.1:" << llm_port << "\n"
                             "database:\n"
                             "  backend: postgres\n"
                             "  url: \"" << db_url << "\"\n"
                             "gateway:\n"
                             "  node_id: " << n.id << "\n"
                             "  advertise_url: http://127.0.0.1:" << n.port << "\n"
                             "logging:\n"
                             "  level: warn\n";
    auto log = (dir / (n.id + ".log")).string();
    n.proc = std::make_unique<process>(
      "mneme", std::vector<std::string>{"serve", "--config", config, "--port",
                                        std::to_string(n.port)},
      log);
    wait_ready(*n.proc, n.port, "/v1/health", log);
  }
  return nodes;
}

const std::string body_text(600, 'x');

// One append of `key` through `c`: its latency in ms, or -1 when it was not acknowledged.
double append(httplib::Client& c, const std::string& key, int n) {
  auto body = json{{"user", "bench"}, {"role", "user"},
                   {"content", fmt::format("{} {} {}", key, n, body_text)}}.dump();
  auto t0 = clock_type::now();
  auto r = c.Post(("/v1/sessions/" + key + "/messages").c_str(), body, "application/json");
  auto ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  return r && r->status == 201 ? ms : -1;
}

std::unique_ptr<httplib::Client> client(int port) {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", port);
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);   // headers and body leave at once (no delayed-ACK stall)
  c->set_read_timeout(60, 0);
  return c;
}

// Each key's owner: its mneme_leases row's node.
std::map<std::string, std::string> owners(const std::string& db_url) {
  pqxx::connection c{db_url};
  pqxx::nontransaction t{c};
  std::map<std::string, std::string> out;
  for (const auto& row : t.exec("SELECT convert_from(session_key, 'UTF8'), owner_node"
                                " FROM mneme_leases"))
    out[row[0].as<std::string>()] = row[1].as<std::string>();
  return out;
}

struct ingest_result {
  double msgs_per_s = 0;
  int64_t errors = 0;
};

// C clients, each appending M messages to its own key through the key's owner.
ingest_result ingest(std::vector<node>& nodes, const std::string& db_url,
                     const nodes_options& o, const std::string& run_tag, int64_t& errors) {
  std::vector<std::string> keys;
  for (int i = 0; i < o.clients; ++i)
    keys.push_back(fmt::format("{}-k{}", run_tag, i));
  // A first append through alternating nodes: each node owns its share of the keys.
  for (size_t i = 0; i < keys.size(); ++i) {
    auto c = client(nodes[i % nodes.size()].port);
    if (append(*c, keys[i], -1) < 0)
      ++errors;
  }
  auto owner = owners(db_url);
  std::map<std::string, int> port_of;
  for (const auto& n : nodes)
    port_of[n.id] = n.port;
  std::atomic<int64_t> failed{0};
  std::vector<std::thread> threads;
  auto t0 = clock_type::now();
  for (const auto& key : keys)
    threads.emplace_back([&, key] {
      auto c = client(port_of.at(owner.at(key)));
      for (int n = 0; n < o.per_client; ++n)
        if (append(*c, key, n) < 0)
          failed.fetch_add(1);
    });
  for (auto& t : threads)
    t.join();
  auto s = std::chrono::duration<double>(clock_type::now() - t0).count();
  ingest_result r;
  r.errors = failed.load();
  errors += r.errors;
  r.msgs_per_s = static_cast<double>(int64_t{o.clients} * o.per_client - r.errors) / s;
  return r;
}

struct latency_result {
  double direct_p50 = 0, direct_p99 = 0, forwarded_p50 = 0, forwarded_p99 = 0;
};

// One client: appends to node A's keys, alternately through A and through B.
latency_result forwarding(std::vector<node>& nodes, const std::string& db_url,
                          const nodes_options& o, const std::string& run_tag,
                          int64_t& errors) {
  auto a = client(nodes[0].port);
  auto b = client(nodes[1].port);
  std::vector<std::string> keys;
  for (int i = 0; i < 4; ++i) {
    keys.push_back(fmt::format("{}-f{}", run_tag, i));
    if (append(*a, keys.back(), -1) < 0)
      ++errors;
  }
  auto owner = owners(db_url);
  for (const auto& k : keys)
    if (owner[k] != nodes[0].id)
      throw std::runtime_error("key " + k + " is not owned by the node it was opened through");
  std::vector<double> direct, forwarded;
  for (int i = 0; i < o.latency_pairs; ++i) {
    const auto& key = keys[static_cast<size_t>(i) % keys.size()];
    // The order inside a pair alternates, so neither side always follows the other.
    for (int side = 0; side < 2; ++side) {
      bool through_b = (side + i) % 2 == 1;
      auto ms = append(through_b ? *b : *a, key, 2 * i + side);
      if (ms < 0)
        ++errors;
      else
        (through_b ? forwarded : direct).push_back(ms);
    }
  }
  return {percentile_or_zero(direct, 0.5), percentile_or_zero(direct, 0.99),
          percentile_or_zero(forwarded, 0.5), percentile_or_zero(forwarded, 0.99)};
}

// "median (min-max)" of runs.
json figure(const std::vector<double>& runs) {
  auto j = median_and_range(runs);
  j["runs"] = runs;
  return j;
}

std::string shown(const std::vector<double>& runs, const char* unit, int decimals) {
  return fmt::format("{:.{}f} {} ({:.{}f}-{:.{}f})", median_or_zero(runs), decimals, unit,
                     *std::min_element(runs.begin(), runs.end()), decimals,
                     *std::max_element(runs.begin(), runs.end()), decimals);
}

int run(const nodes_options& o) {
  std::string url = o.pg_url;
  if (url.empty()) {
    std::fprintf(stderr, "nodes: starting a throw-away PostgreSQL cluster\n");
    url = testing::pg_test_cluster::shared().base_url();
  }
  pg_bench_schemas pg{url, "mneme_nodes", "nodes"};
  char tmpl[] = "/tmp/mneme-bench-nodes-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr)
    return exit_failure;
  fs::path dir = tmpl;
  int llm_port = testing::free_loopback_port();
  auto llm_log = (dir / "fakellm.log").string();
  process llm{"mneme-fakellm", {"--port", std::to_string(llm_port), "--log-level", "warn"},
              llm_log};
  wait_ready(llm, llm_port, "/control/stats", llm_log);

  constexpr int repeats = 3;
  std::vector<double> one_rate, two_rate, d50, d99, f50, f99, overhead;
  int64_t errors = 0;
  for (int r = 0; r < repeats; ++r) {
    auto tag = fmt::format("r{}", r);
    auto alone = [&] {
      auto db = pg.fresh_url();
      auto nodes = start_nodes(1, db, llm_port, dir, tag + "-alone");
      one_rate.push_back(ingest(nodes, db, o, tag, errors).msgs_per_s);
    };
    auto pair = [&] {
      auto db = pg.fresh_url();
      auto nodes = start_nodes(2, db, llm_port, dir, tag + "-pair");
      two_rate.push_back(ingest(nodes, db, o, tag, errors).msgs_per_s);
      auto l = forwarding(nodes, db, o, tag, errors);
      d50.push_back(l.direct_p50);
      d99.push_back(l.direct_p99);
      f50.push_back(l.forwarded_p50);
      f99.push_back(l.forwarded_p99);
      overhead.push_back(l.forwarded_p99 - l.direct_p99);
    };
    if (r % 2 == 0) {
      alone();
      pair();
    } else {
      pair();
      alone();
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);

  std::vector<double> ratio;
  for (size_t i = 0; i < two_rate.size(); ++i)
    ratio.push_back(two_rate[i] / one_rate[i]);
  json out = {
    {"clients", o.clients},
    {"per_client", o.per_client},
    {"latency_pairs", o.latency_pairs},
    {"one_node_appends_per_s", figure(one_rate)},
    {"two_nodes_appends_per_s", figure(two_rate)},
    {"two_vs_one", figure(ratio)},
    {"direct_p50_ms", figure(d50)},
    {"direct_p99_ms", figure(d99)},
    {"forwarded_p50_ms", figure(f50)},
    {"forwarded_p99_ms", figure(f99)},
    {"forward_overhead_p99_ms", figure(overhead)},
    {"errors", errors},
  };
  if (o.json) {
    std::printf("%s\n", out.dump().c_str());
    return errors == 0 ? exit_ok : exit_failure;
  }
  std::printf("%s", fmt::format(
    "nodes: two mneme serve nodes on one PostgreSQL beside one node alone, {} runs, medians "
    "(range)\n"
    "  1. aggregate durable appends, {} clients x {} appends, each to its key's owner\n"
    "       one node  {}\n"
    "       two nodes {}   ratio {}\n"
    "  2. one client, appends to node A's keys ({} each way)\n"
    "       direct to the owner   p50 {}   p99 {}\n"
    "       forwarded through B   p50 {}   p99 {}\n"
    "       forward_overhead_p99_ms {}\n"
    "  errors {}\n",
    repeats, o.clients, o.per_client, shown(one_rate, "/s", 0), shown(two_rate, "/s", 0),
    shown(ratio, "x", 2), o.latency_pairs, shown(d50, "ms", 2), shown(d99, "ms", 2),
    shown(f50, "ms", 2), shown(f99, "ms", 2), shown(overhead, "ms", 2), errors).c_str());
  return errors == 0 ? exit_ok : exit_failure;
}

} // namespace

MNEME_BENCH("nodes", "two mneme serve nodes on one PostgreSQL: aggregate durable appends beside "
                     "one node, forwarded-request overhead p50/p99",
            [](CLI::App& cmd) -> bench_action {
              auto o = std::make_shared<nodes_options>();
              cmd.add_flag("--json", o->json, "print the figures as one JSON object");
              cmd.add_option("--pg-url", o->pg_url,
                             "PostgreSQL server whose database the bench may create schemas "
                             "in (default: a throw-away cluster in /tmp)");
              cmd.add_option("--clients", o->clients,
                             "client connections of the ingest part (one key each)")
                ->check(integer_range(1, 64));
              cmd.add_option("--per-client", o->per_client, "appends per client")
                ->check(integer_range(1, 100000));
              cmd.add_option("--latency-pairs", o->latency_pairs,
                             "appends each way (direct, forwarded) of the latency part")
                ->check(integer_range(10, 100000));
              return [o] {
                try {
                  return run(*o);
                } catch (const std::exception& e) {
                  std::fprintf(stderr, "nodes: %s\n", e.what());
                  return exit_failure;
                }
              };
            });

} // namespace mneme::bench
