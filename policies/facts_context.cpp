// Semantic memory as a context row; see facts_context.hpp.
#include "policies/facts_context.hpp"

#include "policies/row_replacement.hpp"
#include "policies/token_estimate.hpp"

namespace mneme {

message facts_context_message(const std::vector<remembered_fact>& facts,
                              const std::string& session_id, time_ms now) {
  std::string text{facts_context_open};
  text += '\n';
  std::size_t shown = 0;
  for (const auto& f : facts) {
    if (shown == facts_context_max_facts)
      break;
    text += "- ";
    text += one_line_excerpt(f.key, facts_context_key_chars);
    text += ": ";
    text += one_line_excerpt(f.value, facts_context_value_chars);
    text += '\n';
    ++shown;
  }
  if (facts.empty())
    text += "- (no facts remembered)\n";
  else if (facts.size() > shown)
    text += "- (" + std::to_string(facts.size() - shown) + " more not shown)\n";
  text += facts_context_close;
  message m;
  m.session_id = session_id;
  m.role = msg_role::system;
  m.content = std::move(text);
  m.timestamp_ms = now;
  m.token_estimate = estimate_message_tokens(m);
  return m;
}

bool is_facts_context(std::string_view content) {
  return content.substr(0, facts_context_open.size()) == facts_context_open;
}

} // namespace mneme
