// Human-readable output of the `mneme` commands: aligned tables (UTF-8 aware, CJK
// counted two columns wide), one-line previews of message text, UTC times, and search
// snippets whose >>>match<<< marks become bold colour on a terminal and stay as they
// are when the output is piped. Pure functions except stdout_is_terminal(); any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme::cli {

// ANSI sequences around a highlighted match on a terminal.
inline constexpr std::string_view highlight_on = "\x1b[1;33m";
inline constexpr std::string_view highlight_off = "\x1b[0m";

bool stdout_is_terminal();

// The snippet with >>> / <<< replaced by highlight_on / highlight_off when `terminal`,
// unchanged otherwise.
std::string render_snippet(std::string_view snippet, bool terminal);

// Columns a terminal uses for `s` (UTF-8; East Asian wide characters count 2; invalid
// bytes count 1).
size_t display_width(std::string_view s);

// `text` on one line (newlines and tabs as spaces, control bytes dropped) cut to at most
// `max_columns` columns at a character boundary, "..." marking a cut.
// REQUIRES: max_columns >= 3.
std::string one_line(std::string_view text, size_t max_columns);

// "2026-11-30 12:00:00Z"; "-" for 0.
std::string format_time(time_ms t);

// Rows under a header, columns padded to the widest cell, two spaces apart; the last
// column is not padded. Every row has as many cells as the header (REQUIRES).
std::string render_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows);

} // namespace mneme::cli
