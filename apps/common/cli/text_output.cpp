// Human-readable output of CLI commands; see text_output.hpp.
#include "apps/common/cli/text_output.hpp"

#include <unistd.h>

#include <cassert>
#include <ctime>

#include <fmt/format.h>

namespace mneme::cli {

namespace {

// Decodes one UTF-8 character at s[i]; returns its length (1 for an invalid byte) and
// sets `cp` (-1 for an invalid byte).
size_t decode(std::string_view s, size_t i, int32_t& cp) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) {
    cp = -1;
    return 1;
  }
  cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t k = 1; k < len; ++k) {
    auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc >> 6) != 0x2) {
      cp = -1;
      return 1;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  return len;
}

bool wide(int32_t cp) {
  return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF)
         || (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF)
         || (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60)
         || (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F)
         || (cp >= 0x20000 && cp <= 0x3FFFD);
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

} // namespace

bool stdout_is_terminal() {
  return ::isatty(STDOUT_FILENO) == 1;
}

std::string render_snippet(std::string_view snippet, bool terminal) {
  std::string out{snippet};
  if (terminal) {
    replace_all(out, ">>>", highlight_on);
    replace_all(out, "<<<", highlight_off);
  }
  return out;
}

size_t display_width(std::string_view s) {
  size_t width = 0;
  for (size_t i = 0; i < s.size();) {
    int32_t cp = 0;
    i += decode(s, i, cp);
    width += cp >= 0 && wide(cp) ? 2 : 1;
  }
  return width;
}

std::string one_line(std::string_view text, size_t max_columns) {
  assert(max_columns >= 3);
  std::string flat;
  for (size_t i = 0; i < text.size();) {
    int32_t cp = 0;
    auto len = decode(text, i, cp);
    if (cp == '\n' || cp == '\r' || cp == '\t')
      flat += ' ';
    else if (cp >= 0x20 && cp != 0x7F)
      flat.append(text.substr(i, len));
    else if (cp < 0)
      flat += "\xEF\xBF\xBD"; // U+FFFD for a byte that is not UTF-8
    i += len;
  }
  if (display_width(flat) <= max_columns)
    return flat;
  std::string out;
  size_t width = 0;
  for (size_t i = 0; i < flat.size();) {
    int32_t cp = 0;
    auto len = decode(flat, i, cp);
    size_t w = cp >= 0 && wide(cp) ? 2 : 1;
    if (width + w > max_columns - 3)
      break;
    out.append(flat, i, len);
    width += w;
    i += len;
  }
  return out + "...";
}

std::string format_time(time_ms t) {
  if (t == 0)
    return "-";
  std::time_t secs = static_cast<std::time_t>(t / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

std::string render_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths(header.size());
  for (size_t c = 0; c < header.size(); ++c)
    widths[c] = display_width(header[c]);
  for (auto& row : rows) {
    assert(row.size() == header.size());
    for (size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], display_width(row[c]));
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      out += cells[c];
      if (c + 1 < cells.size())
        out += std::string(widths[c] - display_width(cells[c]) + 2, ' ');
    }
    out += '\n';
  };
  line(header);
  for (auto& row : rows)
    line(row);
  return out;
}

} // namespace mneme::cli
