// mneme-bench responses and mneme-bench anthropic: full-history clients through one of
// the OpenAI-shaped doors beside the same clients through the chat door (POST
// /v1/chat/completions, X-Mneme-Session) and straight to the fake LLM, streamed, in one
// run (issues 43 and 44's benchmarks):
//   responses  POST /v1/responses, `store: false`, a session-id header, the transcript
//              as `input` (target: responses_cpu_ratio <= 1.2)
//   anthropic  POST /v1/messages, X-Mneme-Session, the transcript as `messages` (the
//              upstream stays OpenAI-compatible, as most deployments' is)
//
// The rig is `mneme-bench proxy`'s (in process: the fake LLM answering every chat call
// after --llm-delay-ms, the runtime on a SQLite file under /tmp, api::http_server on
// 127.0.0.1) and the load proxy_load.hpp's: the same clients, histories and loop for
// the three passes, one after the other with fresh keys: direct, chat, the door.
//
// Reported: request time p50/p99 of each pass; added_ms_p50/p99 of each door = its
// percentile minus the direct one; cpu_us_per_request of each door = (process CPU time
// of its measured requests - that of the direct pass) / requests; and
// <door>_cpu_ratio = the door's cpu_us_per_request / the chat door's. The client's own
// work differs a little between the passes (a Responses or Anthropic stream has named
// events and more bytes per piece); it is inside the figures. Exit codes: 0 every
// request answered, 1 a failure or a deadline, 2 bad flags. Only this program links
// this file.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/mneme-bench/bench_registry.hpp"
#include "apps/mneme-bench/inprocess_runtime.hpp"
#include "apps/mneme-bench/proxy_load.hpp"
#include "policies/percentile.hpp"

namespace mneme::bench {

namespace {

using json = nlohmann::json;

// The door a run measures beside the chat door.
struct door_under_test {
  const char* name;   // the benchmark's and the pass's name
  proxy_target target;
  const char* path;   // the door's route
  const char* target_note; // printed after the ratio ("" for none)
};

const door_under_test responses_door{"responses", proxy_target::responses_door, "/v1/responses",
                                     " (target <= 1.2)"};
const door_under_test anthropic_door{"anthropic", proxy_target::anthropic_door, "/v1/messages",
                                     ""};

struct door_options {
  int clients = 100;
  int history = 200;
  int requests = 5;
  rig_flags rig{100, 2, 900, false};
};

int run_door(const door_under_test& d, const door_options& o) {
  auto daemon = start_door_rig(d.name, o.clients, o.rig);
  if (!daemon)
    return exit_failure;
  auto settle = [&rig = *daemon] { wait_until_indexed(rig); };
  proxy_pass_spec spec{proxy_target::direct, o.clients, o.history, o.requests,
                       o.rig.max_seconds, daemon->llm_url(), settle};
  auto direct = run_proxy_pass(spec);
  spec.target = proxy_target::chat_door;
  spec.url = daemon->mneme_url() + "/v1/chat/completions";
  auto chat = run_proxy_pass(spec);
  spec.target = d.target;
  spec.url = daemon->mneme_url() + d.path;
  auto door = run_proxy_pass(spec);
  daemon.reset(); // the daemon's shutdown; nothing is in flight

  const int64_t expected = int64_t{o.clients} * o.requests;
  bool all_ok = clean(direct, expected) && clean(chat, expected) && clean(door, expected);
  json report = {{"clients", o.clients}, {"history", o.history}, {"requests_per_client", o.requests},
                 {"llm_delay_ms", o.rig.llm_delay_ms}, {"io_threads", o.rig.io_threads}};
  report["passes"] = {{"direct", pass_json(direct)}, {"chat", pass_json(chat)},
                      {d.name, pass_json(door)}};
  auto added = [&](const proxy_pass& p, double q) {
    return round2(percentile_or_zero(p.request_ms, q) - percentile_or_zero(direct.request_ms, q));
  };
  for (auto [name, p] : {std::pair{"chat", &chat}, std::pair{d.name, &door}})
    report["doors"][name] = {{"added_ms_p50", added(*p, 0.5)},
                             {"added_ms_p99", added(*p, 0.99)},
                             {"cpu_us_per_request", cpu_us_per_request(*p, direct)}};
  auto chat_cpu = cpu_us_per_request(chat, direct);
  const auto ratio_key = std::string{d.name} + "_cpu_ratio";
  report[ratio_key] = chat_cpu > 0 ? round2(cpu_us_per_request(door, direct) / chat_cpu) : 0.0;
  report["ok"] = all_ok;
  if (o.rig.json_out) {
    std::cout << report.dump() << "\n";
  } else {
    std::cout << fmt::format("mneme-bench {}: {} full-history clients x {} requests, "
                             "{}-message histories, streamed, fake delay {} ms\n",
                             d.name, o.clients, o.requests, o.history, o.rig.llm_delay_ms);
    for (const auto& [name, p] : report["passes"].items())
      std::cout << fmt::format("  {:9} requests {:6} p50 {:8} ms p99 {:8} ms  cpu {} s{}\n", name,
                               p["requests_ok"].dump(), p["request_ms_p50"].dump(),
                               p["request_ms_p99"].dump(), p["cpu_seconds"].dump(),
                               p["failures"].empty() ? std::string{}
                                                     : "  failures " + p["failures"].dump());
    for (const auto& [name, d] : report["doors"].items())
      std::cout << fmt::format("  {:9} added p50 {} ms p99 {} ms, cpu {} us per request\n", name,
                               d["added_ms_p50"].dump(), d["added_ms_p99"].dump(),
                               d["cpu_us_per_request"].dump());
    std::cout << fmt::format("  {} {}{}\n", ratio_key, report[ratio_key].dump(), d.target_note);
  }
  return all_ok ? exit_ok : exit_failure;
}

bench_action door_setup(const door_under_test& d, CLI::App& cmd) {
  auto o = std::make_shared<door_options>();
  add_history_load_flags(cmd, o->clients, o->history, o->requests);
  add_rig_flags(cmd, o->rig);
  return [&d, o] { return run_door(d, *o); };
}

} // namespace

MNEME_BENCH("responses",
            "full-history clients through the Responses door vs the chat door vs the fake LLM",
            [](CLI::App& cmd) { return door_setup(responses_door, cmd); });
MNEME_BENCH("anthropic",
            "full-history clients through the Anthropic door vs the chat door vs the fake LLM",
            [](CLI::App& cmd) { return door_setup(anthropic_door, cmd); });

} // namespace mneme::bench
