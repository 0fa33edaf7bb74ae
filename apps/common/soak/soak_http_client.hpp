// Blocking HTTP clients for a soak run against a running daemon: `daemon_client` speaks
// the daemon's API (docs/api.md: append, turn, session state, sessions, export, search,
// health, metrics) and `fakellm_control` the fake LLM's control API (/control/faults,
// /control/stats). Each call decodes the JSON it gets into the soak's own values; an
// HTTP error comes back as `call_error` with the API's error code (e.g. llm_unavailable)
// so the ledger counts failures by kind the way the in-process run does.
//
// Thread: one client per thread (cpp-httplib's client is not thread-safe), except
// stop(), which any thread may call to abort the calls in flight. Never on a CAF
// scheduler thread: every call blocks.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/common/soak/soak_target.hpp"
#include "messages/agent_turn.hpp"
#include "messages/session_messages.hpp"
#include "messages/transcript.hpp"

namespace httplib {
class Client;
}

namespace mneme::soak {

// Why a call failed: the API's error code ("llm_unavailable", "unauthorized", ...), or
// "connection" / "timeout" / "bad_response" when no usable answer came.
struct call_error {
  std::string code;
  std::string message;
  int status = 0;            // HTTP status, 0 when no answer came
  bool timed_out = false;
};

template <class T>
class call_result {
 public:
  call_result(T value) : v_(std::move(value)) {}            // NOLINT: implicit by design
  call_result(call_error err) : v_(std::move(err)) {}       // NOLINT
  explicit operator bool() const { return v_.index() == 0; }
  T& operator*() { return std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  const call_error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, call_error> v_;
};

// "key" with every byte outside [A-Za-z0-9-._~] percent-encoded (a path segment).
std::string encode_path_segment(const std::string& key);

// The committed / fallback compaction counters and the supervisor's restarts and
// exhaustion reports from the daemon's /metrics text (Prometheus text format).
struct daemon_counters {
  compaction_counts compactions;
  int64_t session_restarts = 0;
  int64_t compaction_exhausted = 0; // 0 when the daemon does not export it
};
std::optional<daemon_counters> parse_daemon_metrics(const std::string& text);

// One stored row of an export (only what the ledger comparison needs).
struct exported_row {
  std::string content;
  bool is_summary = false;
};

class daemon_client {
 public:
  // `base_url` is "http://HOST:PORT"; `token` empty = no Authorization header.
  daemon_client(const std::string& base_url, const std::string& token,
                std::chrono::milliseconds read_timeout);
  ~daemon_client();
  daemon_client(const daemon_client&) = delete;
  daemon_client& operator=(const daemon_client&) = delete;

  // POST /v1/sessions/{key}/messages -> the stored row id.
  call_result<int64_t> append(const std::string& key, const std::string& user,
                              const message& row);
  // POST /v1/sessions/{key}/turns -> the turn's reply.
  call_result<turn_reply> turn(const std::string& key, const std::string& user,
                               const std::string& content);
  // POST /v1/sessions/{key}/turns as an agent turn: the user message with `tools` and
  // abandon_pending, or `tool_results` -> the reply with its tool_calls.
  call_result<turn_reply> agent_turn(const std::string& key, const std::string& user,
                                     const turn_input& in);
  // GET /v1/sessions/{key}?live=false -> the session's numbers.
  call_result<session_poll> state(const std::string& key, const std::string& user = "");
  // GET /v1/sessions?user=U&limit=N -> the ids of the user's sessions, ended ones too.
  call_result<std::vector<std::string>> session_ids(const std::string& user, int64_t limit);
  // GET /v1/sessions/{id}/export -> every row of the session.
  call_result<std::vector<exported_row>> export_rows(const std::string& session_id);
  // GET /v1/sessions/{id}/compactions -> the session's compaction log (its "attempts":
  // committed and not), the fields the soak report reads.
  call_result<std::vector<compaction_log_entry>> compaction_log(const std::string& session_id);
  // GET /v1/search?q=Q&user=U&limit=N -> the hits' sessions.
  call_result<std::vector<marker_hit>> search(const std::string& user, const std::string& query,
                                              int64_t limit);
  // GET /v1/health -> the whole body (status, version, sessions_hosted, rss_bytes, ...).
  call_result<nlohmann::json> health();
  // GET /v1/sessions?limit=1: a call that needs the token (health does not).
  call_result<bool> check_access();
  // GET /metrics -> the counters the soak reads.
  call_result<daemon_counters> counters();

  // Aborts the calls in flight (they fail with "connection"); any thread.
  void stop();

 private:
  call_result<nlohmann::json> get_json(const std::string& path);
  call_result<nlohmann::json> post_json(const std::string& path, const nlohmann::json& body);
  call_result<turn_reply> post_turn(const std::string& key, const nlohmann::json& body);

  std::unique_ptr<httplib::Client> http_;
  std::chrono::milliseconds read_timeout_;
};

// What the fake LLM counted since it started.
struct fakellm_counts {
  std::map<std::string, int64_t> injected;   // by fault kind
  int64_t chat_requests = 0;
  int64_t summary_requests = 0;
  // tool_pairing (a fake LLM that audits pairing; pairing_audited = false otherwise).
  bool pairing_audited = false;
  int64_t orphan_tool_calls = 0;
  int64_t orphan_tool_results = 0;
  int64_t requests_with_orphans = 0;
};

class fakellm_control {
 public:
  explicit fakellm_control(const std::string& base_url);
  ~fakellm_control();
  fakellm_control(const fakellm_control&) = delete;
  fakellm_control& operator=(const fakellm_control&) = delete;

  // POST /control/faults: replaces the scenario; its clock starts now.
  std::optional<call_error> set_scenario(const nlohmann::json& scenario);
  // GET /control/stats.
  call_result<fakellm_counts> stats();

 private:
  std::unique_ptr<httplib::Client> http_;
};

} // namespace mneme::soak
