// The project's error codes, carried inside caf::error (category atom "mneme").
// One enum for every module so that an error crosses actor boundaries unchanged;
// the context message of a caf::error carries the detail (SQLite message, HTTP body
// excerpt, config path). Codes start at 1: 0 means "no error" for caf::error.
// New codes are appended at the end of their group's range only; numbers are stable
// because they are persisted in logs and reported by the HTTP API.
#pragma once

#include <cstdint>
#include <string>

#include "caf/error.hpp"
#include "caf/make_message.hpp"
#include "caf/message.hpp"

namespace mneme {

enum class errc : uint8_t {
  // --- generic (1..19)
  bad_request = 1,        // malformed or invalid input from a caller
  config_invalid = 2,     // configuration rejected at load time
  not_found = 3,          // unknown session, message, checkpoint
  overloaded = 4,         // a bounded queue is full; retry later
  shutting_down = 5,      // the runtime is stopping and refuses new work
  internal = 6,           // a bug: an invariant did not hold
  foreign_session = 7,    // the session a key (or session id) names belongs to another
                          // user: an admin naming that user gets 400 bad_request, a user
                          // token the 404 of an unknown key (whether it exists is hidden)
  session_busy = 8,       // a door request on this session key is in flight; retry after it

  // --- storage (20..39)
  storage_failed = 20,        // any other SQLite failure
  storage_disk_full = 21,     // SQLITE_FULL
  storage_corrupt = 22,       // SQLITE_CORRUPT / SQLITE_NOTADB
  storage_locked = 23,        // SQLITE_BUSY / SQLITE_LOCKED from a foreign process
  storage_schema_too_new = 24,// the file was written by a newer mneme
  storage_readonly = 25,      // SQLITE_READONLY / permission denied
  storage_cant_open = 26,     // SQLITE_CANTOPEN

  // --- LLM transport (40..59)
  llm_refused = 40,           // connection refused
  llm_dns = 41,               // host name could not be resolved
  llm_tls = 42,               // TLS handshake or certificate failure
  llm_idle_timeout = 43,      // no byte for the idle timeout
  llm_total_timeout = 44,     // the total ceiling elapsed
  llm_network = 45,           // reset, truncated body, other transport failure

  // --- LLM answers (60..89); classified by policies/error_classifier
  llm_payload_too_large = 60,     // HTTP 413 (T6)
  llm_long_context_rate_limit = 61, // 429 "long context" / "extra usage" (T7)
  llm_rate_limited = 62,          // plain 429
  llm_output_too_large = 63,      // 400: requested output does not fit (T8)
  llm_context_overflow = 64,      // 400/5xx overflow phrases (T9)
  llm_unsupported_parameter = 65, // 400 unsupported parameter: not an overflow
  llm_auth = 66,                  // 401 / 403
  llm_quota = 67,                 // 402 / insufficient quota
  llm_server_error = 68,          // other 5xx
  llm_bad_request = 69,           // other 4xx
  llm_malformed = 70,             // unparsable JSON or missing fields
  llm_empty_answer = 71,          // content empty (e.g. reasoning-only answer)

  // --- compaction (90..109)
  compaction_locked = 90,     // refused by cooldown / anti-thrash: refunds its attempt
  compaction_failed = 91,     // summary failed and abort_on_summary_failure is set
  compaction_exhausted = 92,  // attempts spent and the context still does not fit
  nothing_to_compact = 93,    // the middle is empty (counts as ineffective)
  compaction_in_flight = 94,  // another compaction of this session is running
  context_unfittable = 95,    // window guard: even head + summary + last user message exceed
                              // the window; the turn fails and nothing is sent (SPEC §5.6)

  // --- agent turns (110..129; SPEC §8.1, policies/tool_loop.hpp)
  tool_results_pending = 110, // a user turn while the model's tool calls wait for results
  tool_round_cap = 111,       // the turn's tool loop reached gateway.max_tool_rounds

  // --- nodes (130..149; issue 26, docs/scale-out.md)
  lease_elsewhere = 130,      // the key's lease is held by another live node; context:
                              // the message, then that node's advertise URL (a string)
  lease_lost = 131,           // this node no longer holds the key's lease: the write was
                              // refused by its fencing token and nothing was stored

  // --- idempotent writes (150..159; docs/api.md "Idempotency-Key")
  idempotency_key_reused = 150, // the key names a different request stored within the
                                // window: nothing written (422)
  idempotency_in_flight = 151,  // a request with the same key is still running (409)
  idempotency_unanswered = 152, // a turn's user row is stored under the key but no answer
                                // followed it (a crash or a failed model call; 409)
};

std::string to_string(errc x);

// Renders any caf::error carrying an errc as "mneme::<code>: <context>".
std::string render_error(const caf::error& err);

} // namespace mneme

CAF_ERROR_CODE_ENUM(mneme::errc, "mneme")
