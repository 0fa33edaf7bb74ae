// Whether the OpenAI door's fast body reader (openai_fast_body.hpp) agrees with the
// full decoder on one body: shared by tests/openai_fast_body_test.cpp and the fuzz
// target tests/fuzz/fuzz_openai_body.cpp. Header-only; no test framework.
#pragma once

#include <string>
#include <string_view>

#include "apps/common/api/doors/openai_chat/openai_fast_body.hpp"
#include "apps/common/api/doors/openai_chat/openai_wire.hpp"
#include "apps/common/api/plumbing/request_decoder.hpp"
#include "messages/errc.hpp"

namespace mneme::test {

inline bool same_rows(const std::vector<message>& a, const std::vector<message>& b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].role != b[i].role || a[i].content != b[i].content
        || a[i].tool_call_id != b[i].tool_call_id || a[i].tool_calls != b[i].tool_calls
        || a[i].tool_name != b[i].tool_name)
      return false;
  return true;
}

inline bool same_chat_request(const api::openai_chat_request& a,
                              const api::openai_chat_request& b) {
  const auto& x = a.turn;
  const auto& y = b.turn;
  return same_rows(a.messages, b.messages) && a.model == b.model && a.stream == b.stream
         && a.include_usage == b.include_usage && a.user == b.user
         && a.metadata_session_id == b.metadata_session_id && x.set_tools == y.set_tools
         && x.tools_json == y.tools_json
         && x.options.has_max_tokens == y.options.has_max_tokens
         && x.options.max_tokens == y.options.max_tokens
         && x.options.has_temperature == y.options.has_temperature
         && x.options.temperature == y.options.temperature
         && x.options.extra_json == y.options.extra_json;
}

// What one body did: the fast path took it (`taken`), and whether decode_openai_chat
// answered exactly what the full decoder answers (the same request, or an error with
// the same text).
struct body_agreement {
  bool taken = false;
  bool agrees = false;
};

inline body_agreement openai_body_agreement(std::string_view body) {
  body_agreement out;
  out.taken = !api::first_invalid_utf8(body) && api::fast_openai_body(body).has_value();
  auto quick = api::decode_openai_chat(body);
  auto full = api::decode_openai_chat_fully(body);
  if (quick && full)
    out.agrees = same_chat_request(*quick, *full);
  else if (!quick && !full)
    out.agrees = render_error(quick.error()) == render_error(full.error());
  return out;
}

} // namespace mneme::test
