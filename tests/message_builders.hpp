// Transcript rows built in one call, for tests: a bare message of a role, a tool result
// answering a call, and a row of a session as a caller hands it to the store.
// Standard library and messages/transcript.hpp only, so the pure policy tests (which
// link mneme_policies alone) may include it; tests/store_test_util.hpp includes it for
// the store tests. Header-only; tests/*_test.cpp include it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "messages/transcript.hpp"

namespace mneme::testing {

// A message of `role` holding `content`; every other field keeps its default (no
// session, no id, timestamp and token estimate 0).
inline message msg(msg_role role, std::string content) {
  message m;
  m.role = role;
  m.content = std::move(content);
  return m;
}

// A tool row answering the call `call_id` of the tool `tool_name`.
inline message tool_result(std::string call_id, std::string tool_name, std::string content) {
  auto m = msg(msg_role::tool, std::move(content));
  m.tool_call_id = std::move(call_id);
  m.tool_name = std::move(tool_name);
  return m;
}

// The token estimate a session row carries: none (0), or a quarter of its content's
// bytes.
enum class row_estimate { none, quarter_of_bytes };

// The timestamp of every session row msg(sid, ...) builds.
constexpr time_ms row_timestamp_ms = 1700000000000;

// A row of session `sid` as a caller hands it to the store: not stored yet (id 0),
// stamped row_timestamp_ms.
inline message msg(const std::string& sid, msg_role role, std::string text,
                   row_estimate estimate = row_estimate::quarter_of_bytes) {
  auto m = msg(role, std::move(text));
  m.session_id = sid;
  m.timestamp_ms = row_timestamp_ms;
  if (estimate == row_estimate::quarter_of_bytes)
    m.token_estimate = static_cast<int64_t>(m.content.size() / 4);
  return m;
}

} // namespace mneme::testing
