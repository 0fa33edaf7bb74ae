// The fault plan of the fake LLM server and the pure decision of which fault a
// request gets. Standard library only: no I/O, no clock (elapsed time is a
// parameter), no randomness but a seeded hash, so the same plan, seed and
// request sequence always yield the same faults. Values; safe on any thread.
//
// A plan is a seed plus an ordered list of rules. Each rule has a kind, targets
// and parameters:
//
//   kind               effect on a matching request
//   refuse             the listener is closed during [start_s, end_s): connects are
//                      refused; requests on already open connections are reset.
//                      Time window only (end_s required, no other targets).
//   reset              the connection is reset (RST) right after the request is read
//   silence            the request is read and never answered (accept-then-silence)
//   unavailable        503 with an OpenAI-style server_error body (POST /v1/messages:
//                      529 overloaded_error; every fault's Anthropic form is listed in
//                      messages_responder.hpp)
//   latency            the answer (whatever it is) is delayed by latency_ms plus a
//                      uniform jitter in [0, jitter_ms]; adds up across latency rules
//   payload_too_large  413 when the request body is larger than max_body_bytes
//   long_context_429   429 with an Anthropic-style "long context / extra usage" body
//   overflow_400       400 context_length_exceeded, whatever the window says
//   malformed_json     200 whose body (or SSE chunk) is not JSON
//   truncated_body     200 announcing the full Content-Length, half sent, then close
//                      (a stream: half its events, then close: a cut mid-stream)
//   empty_content      200 with content ""
//   reasoning_only     200 with content "" and reasoning_content set
//   trickle            the first bytes of the answer (of a stream: half its events),
//                      then silence for silence_ms, then the rest (trips a client's
//                      idle timeout; a stall mid-stream)
//   output_too_large_400  400 saying the requested max_tokens does not fit in what
//                      is left of the window (the provider's T8 answer)
//   rate_limit_429     429 with a plain rate-limit body (OpenAI's rate_limit_exceeded;
//                      POST /v1/messages: rate_limit_error), no long-context wording
//
// Parameter retry_after (unavailable, rate_limit_429 and long_context_429 only): the
// answer carries `Retry-After: <value>` verbatim (seconds, or an HTTP-date), as
// providers send it with a 429 or 503/529.
//
// Targets (all must hold): fraction of requests (0..1, decided by hashing the seed,
// the request's sequence number and the rule's index), model (substring of the
// request's model; empty = any), purpose (any | chat | summary | compaction: the
// compaction endpoint, see compaction_responder.hpp | embedding: POST /v1/embeddings,
// embeddings_wire.hpp), time window
// [start_s, end_s) in seconds since the scenario started (end_s absent = open),
// min_prompt_tokens (request's prompt estimate at least this), max_count (inject
// at most this many times; 0 = unlimited).
//
// Decision, in order (decide()):
//   1. every matching latency rule adds its delay;
//   2. the first matching non-latency rule (plan order) is the answer fault;
//   3. no answer fault -> the normal answer (or the window's own overflow 400).
//
// Where plans come from: a YAML scenario file (`mneme-fakellm --scenario`,
// format in scenario.hpp, commented example in configs/fakellm/example.yaml) or
// the control API of the running server (fake_llm_server.hpp): POST
// /control/faults with the same document as JSON replaces the plan and restarts
// the scenario clock, GET shows it, DELETE clears it, GET /control/stats counts
// injections per kind and requests per purpose.
//
// Invariants: 1. decide() is a function of (plan, facts, injected counts) only.
//             2. a rule with max_count > 0 is never chosen once it has injected
//                max_count times.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace mneme::fakellm {

enum class fault_kind : uint8_t {
  refuse, reset, silence, unavailable, latency, payload_too_large, long_context_429,
  overflow_400, malformed_json, truncated_body, empty_content, reasoning_only, trickle,
  output_too_large_400, rate_limit_429,
};
inline constexpr int fault_kind_count = 15;

std::string_view to_string(fault_kind k);
std::optional<fault_kind> parse_fault_kind(std::string_view s);
inline std::ostream& operator<<(std::ostream& os, fault_kind k) { return os << to_string(k); }

enum class purpose_filter : uint8_t { any, chat, summary, compaction, embedding };
std::string_view to_string(purpose_filter p);
std::optional<purpose_filter> parse_purpose_filter(std::string_view s);
inline std::ostream& operator<<(std::ostream& os, purpose_filter p) { return os << to_string(p); }

struct fault_rule {
  fault_kind kind = fault_kind::unavailable;
  // targets
  double fraction = 1.0;
  std::string model;
  purpose_filter purpose = purpose_filter::any;
  double start_s = 0;
  std::optional<double> end_s;
  int64_t min_prompt_tokens = 0;
  int64_t max_count = 0;
  // parameters
  int64_t latency_ms = 0;       // latency
  int64_t jitter_ms = 0;        // latency
  int64_t max_body_bytes = 0;   // payload_too_large
  int64_t silence_ms = 30000;   // trickle
  std::string retry_after;      // unavailable, rate_limit_429, long_context_429; "" = none
};

struct fault_plan {
  uint64_t seed = 1;
  std::vector<fault_rule> rules;
};

// What the server knows about a request when it decides.
struct request_facts {
  uint64_t seq = 0;             // 0, 1, 2, ... in the order requests were read
  std::string_view model;
  bool is_summary = false;
  int64_t body_bytes = 0;
  int64_t prompt_tokens = 0;
  double elapsed_s = 0;         // seconds since the scenario started
  bool is_compaction = false;   // POST /v1/responses/compact
  bool is_embedding = false;    // POST /v1/embeddings
};

struct fault_decision {
  std::optional<fault_kind> answer;   // the answer fault, if any
  int answer_rule = -1;               // its index in plan.rules
  int64_t delay_ms = 0;               // total added latency
  std::vector<int> latency_rules;     // indices of the latency rules that applied
};

// Returns an empty string when the rule is valid, else what is wrong with it.
std::string validate(const fault_rule& r);

// True when `r`'s time window contains `elapsed_s`.
bool in_window(const fault_rule& r, double elapsed_s);

// The decision for one request. `injected` holds how often each rule has been
// injected so far (missing entries count as 0).
// REQUIRES: every rule of `plan` is valid.
fault_decision decide(const fault_plan& plan, const request_facts& facts,
                      const std::vector<int64_t>& injected);

// True when a refuse rule's window contains `elapsed_s`: the listener must be closed.
bool listener_refused(const fault_plan& plan, double elapsed_s);

// A deterministic uniform number in [0, 1) from (seed, seq, rule index, salt).
double uniform01(uint64_t seed, uint64_t seq, uint64_t rule, uint64_t salt);

} // namespace mneme::fakellm
