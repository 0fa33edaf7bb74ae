// The notice after an exhausted turn; see exhaustion_notice.hpp.
#include "policies/exhaustion_notice.hpp"

#include "policies/utf8.hpp"

namespace mneme {

std::string resend_quote(std::string_view text) {
  if (count_code_points(text) <= k_resend_quote_chars)
    return std::string{text};
  return std::string{text.substr(0, byte_offset_of_code_point(text, k_resend_quote_chars))} + "…";
}

std::string exhaustion_notice(std::size_t compactions_tried, bool answered,
                              std::string_view unanswered_text) {
  std::string out = "This conversation grew past what could be compacted ("
                    + std::to_string(compactions_tried)
                    + (compactions_tried == 1 ? " compaction" : " compactions")
                    + " tried), so it was restarted. The earlier messages are kept and"
                      " searchable; the new session starts from their latest summary.";
  if (answered)
    return out + " Your last message was answered in the new session.";
  if (unanswered_text.empty()) // the context service: the agent knows what it sent
    return out + " Your last message was not answered; please send it again.";
  return out + " Your last message was not answered; please send it again: \""
         + resend_quote(unanswered_text) + "\"";
}

} // namespace mneme
