// The fault-injecting fake LLM server (SPEC §8): an OpenAI-compatible
// `POST /v1/chat/completions` endpoint (JSON and SSE) with deterministic answers,
// a context window, and the faults of a scenario (fault_plan.hpp); OpenAI's
// compaction endpoint `POST /v1/responses/compact` (compaction_wire.hpp) and
// server-side compaction of chat requests that carry a compact threshold for the
// models configured as native (server_compaction.hpp); OpenAI's `POST /v1/embeddings`
// with deterministic vectors (embeddings_wire.hpp, the scenario's embedding_mode); Anthropic's Messages API
// `POST /v1/messages` (JSON and its named SSE events, messages_responder.hpp) with the
// same answers, tool calls and faults; plus its control API:
//
//   GET    /health          {"status":"ok"}
//   GET    /control/faults  the active scenario (scenario.hpp shape) + elapsed_s
//   POST   /control/faults  replace the scenario (JSON body, same shape as the YAML
//                           file) and restart the scenario clock; 400 naming the
//                           offending key when invalid
//   DELETE /control/faults  drop every fault rule and restart the scenario clock
//   GET    /control/stats   requests served per purpose (chat, summary,
//                           compaction) and over the Messages API (messages),
//                           server compactions, faults injected per
//                           kind, window overflows, bad requests, connections,
//                           tool_pairing: orphan calls and results received
//
// One event-loop thread (epoll, non-blocking sockets, timer heap) serves every
// connection: delayed answers and trickles are timers, never sleeping threads.
// HTTP/1.1 keep-alive and pipelining, Content-Length request bodies,
// `Expect: 100-continue`, request size limits (413), malformed input answered
// with a JSON 400 and the connection closed.
//
// Threads: start(), stop(), set_scenario(), clear_faults(), current_scenario()
// and stats() are thread-safe; handlers run on the loop thread only. start() and
// stop() are explicit; the destructor stops. No global state (the logger is passed
// in or a private null logger). Copy and move are deleted.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "apps/common/fakellm/chat_responder.hpp"
#include "apps/common/fakellm/fault_plan.hpp"
#include "apps/common/fakellm/http_parser.hpp"
#include "apps/common/fakellm/scenario.hpp"
#include "caf/error.hpp"
#include "caf/expected.hpp"

namespace spdlog {
class logger;
}

namespace mneme::fakellm {

struct fake_llm_options {
  std::string host = "127.0.0.1";
  uint16_t port = 0;                     // 0 = an ephemeral port, see start()
  answer_settings answers;               // window, answer size, SSE piece size
  http_limits limits;                    // request head/body limits (413 above)
  int listen_backlog = 4096;
  std::shared_ptr<spdlog::logger> log;   // null = a private null logger
  // Test seam: the scenario clock, which places requests in the fault rules' time
  // windows (start_s, end_s). Called on any thread; must be thread-safe.
  std::function<std::chrono::steady_clock::time_point()> clock = std::chrono::steady_clock::now;
};

struct fake_llm_stats {
  int64_t chat_requests = 0;             // valid chat-completions requests, by purpose
  int64_t summary_requests = 0;
  int64_t compaction_requests = 0;       // valid POST /v1/responses/compact requests
  int64_t embedding_requests = 0;        // valid POST /v1/embeddings requests
  int64_t embedded_inputs = 0;           // texts they carried
  int64_t messages_requests = 0;         // of chat + summary: valid POST /v1/messages
                                         // (Anthropic's Messages API) requests
  // The last valid POST /v1/messages: its body and its anthropic-version and
  // anthropic-beta headers ("" when absent), what a test asserts a call carried on.
  std::string last_messages_body;
  std::string last_anthropic_version;
  std::string last_anthropic_beta;
  int64_t server_compactions = 0;        // chat answers in which the server compacted
  int64_t control_requests = 0;          // /health and /control/*
  int64_t bad_requests = 0;              // malformed HTTP or JSON, unknown paths
  int64_t window_overflows = 0;          // rejected by the window (not by a fault)
  // The largest chat-purpose prompt received (its token estimate, policies/token_estimate),
  // answered or not: what a test asserts "nothing was sent over the window" on.
  int64_t max_chat_prompt_tokens = 0;
  int64_t connections_accepted = 0;
  int64_t connections_open = 0;
  // The tool-pairing audit of every valid chat-completions request (summaries too;
  // policies/soak_tool_checks.hpp): calls without their results, results without their
  // call, and the requests that had either. A client that pairs correctly keeps all 0.
  int64_t orphan_tool_calls = 0;
  int64_t orphan_tool_results = 0;
  int64_t requests_with_orphans = 0;
  std::array<int64_t, fault_kind_count> injected{};  // indexed by fault_kind
  int64_t injected_of(fault_kind k) const { return injected[static_cast<size_t>(k)]; }
};

class fake_llm_server {
 public:
  explicit fake_llm_server(fake_llm_options options = {});
  ~fake_llm_server();
  fake_llm_server(const fake_llm_server&) = delete;
  fake_llm_server& operator=(const fake_llm_server&) = delete;

  // Binds, listens and starts the loop thread; returns the bound port.
  // Errors: errc::bad_request (already started), errc::internal (socket errors).
  caf::expected<uint16_t> start();
  // Closes every connection and the listener and joins the loop thread. Idempotent.
  void stop();

  uint16_t port() const;          // 0 before start()
  std::string base_url() const;   // "http://<host>:<port>"

  // Replaces the scenario and restarts its clock. Invalid rules -> config_invalid.
  caf::error set_scenario(scenario s);
  void clear_faults();
  scenario current_scenario() const;
  fake_llm_stats stats() const;

  // The number of threads the server runs (the loop thread): 1 while started.
  int thread_count() const;

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

// The JSON document GET /control/stats answers.
std::string stats_json(const fake_llm_stats& s, double elapsed_s);

} // namespace mneme::fakellm
