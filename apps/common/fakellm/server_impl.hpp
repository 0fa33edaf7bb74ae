// Private to the fake LLM server (fake_llm_server.cpp, server_io.cpp): the state
// behind fake_llm_server. Two kinds of members:
//   - shared: guarded by `mtx`, touched by the public API on any thread and by
//     the loop thread once per request (scenario, counters, sequence numbers);
//   - loop-only: sockets and connections, touched only by the loop thread while
//     it runs, and by stop() after it has been joined.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "apps/common/fakellm/event_loop.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "policies/soak_tool_checks.hpp"

namespace mneme::fakellm {

// One accepted client connection. Invariant: `busy` while a response is being
// produced (delay, trickle pause, silence); input is parsed only when not busy,
// so pipelined requests are answered in order.
struct connection {
  uint64_t id = 0;
  int fd = -1;
  std::string in;                 // received, not yet parsed
  std::string out;                // to send; out_off bytes of it already sent
  size_t out_off = 0;
  bool busy = false;
  bool silenced = false;          // accept-then-silence: never answer again
  bool sent_continue = false;     // "100 Continue" sent for the current request
  bool peer_closed = false;       // EOF seen; close once the response is out
  bool response_done = false;     // the plan's bytes are all queued
  bool close_after = false;
  std::string pending_first;      // the plan's bytes waiting for their timers
  std::string pending_rest;
  int64_t pause_ms = 0;
  event_loop::timer_id timer = 0;
};

struct fake_llm_server::impl {
  using steady = std::chrono::steady_clock;

  explicit impl(fake_llm_options o);

  // --- shared state, guarded by mtx
  mutable std::mutex mtx;
  scenario scn;
  steady::time_point scenario_start = steady::now();
  std::vector<int64_t> injected_per_rule;
  uint64_t next_seq = 0;
  fake_llm_stats counters;
  compaction_memory compacted;    // server-side compactions per conversation
  bool started = false;
  bool stopped = false;

  double elapsed_locked() const;  // REQUIRES: mtx held
  steady::time_point scenario_now() const { return opts.clock(); }

  // --- fixed after construction
  fake_llm_options opts;
  std::shared_ptr<spdlog::logger> log;

  // --- loop thread only (server_io.cpp)
  event_loop loop;
  std::thread thread;
  int listen_fd = -1;
  std::atomic<uint16_t> bound_port{0};  // written on first bind, read anywhere
  steady::time_point accept_paused_until{};
  std::unordered_map<int, std::unique_ptr<connection>> conns;
  uint64_t next_conn_id = 1;

  caf::error open_listener();
  void close_listener();
  void sync_listener();   // opens/closes the listener as the refuse windows say
  void tick_listener();   // sync_listener() every listener tick
  // From a non-loop thread: runs sync_listener() on the loop and waits for it.
  void sync_listener_from_outside();
  void on_accept();
  void on_connection_event(int fd, uint32_t events);
  void process_input(connection& c);
  // The functions below return false when they closed the connection.
  bool execute(connection& c, response_plan plan);
  bool deliver_first(connection& c);
  bool queue_bytes(connection& c, std::string_view bytes);
  bool flush(connection& c);
  bool finish_if_done(connection& c);
  void close_connection(connection& c, bool reset);
  connection* find(int fd, uint64_t id);

  // --- request handling (fake_llm_server.cpp), on the loop thread
  response_plan route(const http_request& req);
  response_plan route_guarded(const http_request& req);  // route(), exceptions -> 500
  response_plan handle_chat(const http_request& req);
  response_plan handle_messages(const http_request& req);  // Anthropic's POST /v1/messages
  // A parsed call of either wire: counted, decided, answered in that wire's format.
  response_plan answer_call(const http_request& req, const chat_call& call, bool messages_api);
  response_plan handle_compaction(const http_request& req);  // compaction_endpoint.cpp
  response_plan handle_embeddings(const http_request& req);  // embeddings_endpoint.cpp
  // A request body the OpenAI-shaped endpoints could not read: counted in bad_requests,
  // answered 400 invalid_request naming the defect.
  response_plan refuse_unreadable(const http_request& req, const caf::error& why);
  answer_settings settings_locked() const;  // REQUIRES: mtx held
  // The fault plan's verdict on one request, counted in the injection counters; a
  // request while the listener is refused (an outage window) is reset. `rule` gets
  // the answering rule. REQUIRES: mtx held.
  fault_decision decide_locked(const request_facts& rf, std::optional<fault_rule>& rule);
  response_plan handle_control(const http_request& req);
  // Adds one request's tool-pairing audit to the counters; an unclean one is logged at
  // warn with the request's sequence number. REQUIRES: mtx held.
  void count_orphans_locked(const soak::pairing_audit& audit, uint64_t seq);
};

// A whole JSON response (used for control answers and HTTP-level errors).
response_plan json_plan(int status, std::string body, bool keep_alive);

} // namespace mneme::fakellm
