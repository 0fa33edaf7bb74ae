// The full-history client load of `mneme-bench proxy` (bench_proxy.cpp), `mneme-bench
// responses` and `mneme-bench anthropic` (bench_doors.cpp): --clients clients at once on
// one client thread (libcurl's multi interface, actors/llm/curl_multi_loop), each
// holding a transcript of `history` messages (user and assistant alternating, the last a
// user message) that it sends once unmeasured (through mneme this stores the history),
// then `requests` measured requests: its whole transcript plus one new user message,
// streamed, the answer read to its end and appended to the transcript, as a stock SDK
// loop does.
// One pass per target, with fresh keys:
//   direct          POST the fake LLM's chat completions URL
//   chat_door       POST /v1/chat/completions with X-Mneme-Session (the OpenAI door)
//   responses_door  POST /v1/responses with session-id, `store: false`, the transcript as
//                   `input` (message items), the answer taken from response.completed
//   anthropic_door  POST /v1/messages with X-Mneme-Session and anthropic-version,
//                   max_tokens 1024, the transcript as `messages` (string contents), the
//                   answer read from its named events (Anthropic's stream)
// The measured phase starts when every client finished its unmeasured request and
// `settle` returned; its process CPU time (getrusage) is the pass's cpu_seconds.
// Threads: run_proxy_pass() blocks its caller; only the bench program links this file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace mneme::bench {

enum class proxy_target { direct, chat_door, responses_door, anthropic_door };
std::string_view to_string(proxy_target t);

struct proxy_pass {
  std::vector<double> request_ms;
  int64_t ok = 0;
  std::map<std::string, int64_t> failures;
  double cpu_seconds = 0; // process CPU time of the measured phase
  bool deadline_hit = false;
};

struct proxy_pass_spec {
  proxy_target target = proxy_target::direct;
  int clients = 1;
  int history = 1;
  int requests = 1;       // measured, per client
  int max_seconds = 900;  // the pass's deadline
  std::string url;        // the endpoint of the target
  std::function<void()> settle = [] {};
};

proxy_pass run_proxy_pass(const proxy_pass_spec& spec);

// Process CPU time (user + system) so far, in seconds.
double process_cpu_seconds();
double round2(double v);
// requests_ok, failures, deadline_hit, request_ms_p50/p99, cpu_seconds.
nlohmann::json pass_json(const proxy_pass& p);
// (door's CPU - direct's CPU) per request of the door's pass, in microseconds.
double cpu_us_per_request(const proxy_pass& door, const proxy_pass& direct);
// No failure, no deadline, `expected` requests answered.
bool clean(const proxy_pass& p, int64_t expected);

// The load flags of a full-history benchmark (proxy, responses): --clients, --history,
// --requests, with their ranges; the defaults are the variables' values.
void add_history_load_flags(CLI::App& cmd, int& clients, int& history, int& requests);

} // namespace mneme::bench
