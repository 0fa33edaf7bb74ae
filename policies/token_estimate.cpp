// Implementation of the local token estimate; rules in token_estimate.hpp.
#include "policies/token_estimate.hpp"

#include "policies/utf8.hpp"

namespace mneme {

namespace {

// Characters of one message, split by cost class, before rounding.
struct char_tally {
  int64_t cjk = 0;
  int64_t other = 0;

  void add(std::string_view text) {
    for (std::size_t pos = 0; pos < text.size();) {
      if (is_cjk_code_point(next_code_point(text, pos)))
        ++cjk;
      else
        ++other;
    }
  }

  int64_t tokens() const {
    return cjk + (other + latin_chars_per_token - 1) / latin_chars_per_token;
  }
};

} // namespace

int64_t estimate_text_tokens(std::string_view utf8) {
  char_tally tally;
  tally.add(utf8);
  return tally.tokens();
}

int64_t estimate_message_tokens(const message& m) {
  char_tally tally;
  tally.add(m.content);
  tally.add(m.tool_call_id);
  tally.add(m.tool_name);
  for (const auto& call : m.tool_calls) {
    tally.add(call.id);
    tally.add(call.name);
    tally.add(call.arguments);
  }
  return message_overhead_tokens
         + tool_call_overhead_tokens * static_cast<int64_t>(m.tool_calls.size())
         + tally.tokens();
}

int64_t estimate_messages_tokens(const std::vector<message>& messages) {
  int64_t total = 0;
  for (const auto& m : messages)
    total += estimate_message_tokens(m);
  return total;
}

} // namespace mneme
