// What the user reads after an exhausted turn (SPEC §5.3, issue 25 item 6): the
// session was reset, how many compactions the turn tried, and what became of the
// unanswered message — answered in the new session (gateway.replay_after_reset: true,
// the default: it is re-run there once), or to be sent again, quoted by its first
// k_resend_quote_chars code points so the user can tell which one. Pure, standard
// library only, any thread; the gateway calls it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mneme {

inline constexpr std::size_t k_resend_quote_chars = 200;

// The first k_resend_quote_chars code points of `text`, cut on a code point boundary,
// followed by "…" when something was cut. Invalid UTF-8 bytes count as one code point.
std::string resend_quote(std::string_view text);

// The notice of a reset after exhaustion. `answered`: the message was re-run and
// answered in the new session; otherwise the notice asks to send it again and quotes
// it (resend_quote; no quote when `unanswered_text` is empty).
std::string exhaustion_notice(std::size_t compactions_tried, bool answered,
                              std::string_view unanswered_text);

} // namespace mneme
