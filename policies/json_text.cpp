// JSON string escaping; see json_text.hpp.
#include "policies/json_text.hpp"

#include <cstdint>

namespace mneme {

namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD";

// The bytes that leave the fast path: quote, backslash, controls and non-ASCII.
bool is_plain(unsigned char b) { return b >= 0x20 && b < 0x80 && b != '"' && b != '\\'; }

void append_escaped_ascii(std::string& out, unsigned char b) {
  static constexpr char hex[] = "0123456789abcdef";
  switch (b) {
    case '"': out += "\\\""; return;
    case '\\': out += "\\\\"; return;
    case 0x08: out += "\\b"; return;
    case 0x09: out += "\\t"; return;
    case 0x0A: out += "\\n"; return;
    case 0x0C: out += "\\f"; return;
    case 0x0D: out += "\\r"; return;
    default:
      out += "\\u00";
      out.push_back(hex[b >> 4]);
      out.push_back(hex[b & 0x0F]);
  }
}

// How many continuation bytes a lead byte announces and the allowed range of the
// first one (Unicode Table 3-7); 0 continuation bytes = not a lead byte.
struct lead_info {
  int continuation = 0;
  unsigned char lo = 0x80, hi = 0xBF;
};

lead_info lead_of(unsigned char b) {
  if (b >= 0xC2 && b <= 0xDF)
    return {1, 0x80, 0xBF};
  if (b == 0xE0)
    return {2, 0xA0, 0xBF};
  if (b == 0xED)
    return {2, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF)
    return {2, 0x80, 0xBF};
  if (b == 0xF0)
    return {3, 0x90, 0xBF};
  if (b == 0xF4)
    return {3, 0x80, 0x8F};
  if (b >= 0xF1 && b <= 0xF3)
    return {3, 0x80, 0xBF};
  return {};
}

} // namespace

void append_json_string(std::string& out, std::string_view text) {
  out.reserve(out.size() + text.size() + 2);
  out.push_back('"');
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    size_t run = i;
    while (run < n && is_plain(s[run]))
      ++run;
    out.append(text.data() + i, run - i);
    i = run;
    if (i == n)
      break;
    const unsigned char b = s[i];
    if (b < 0x80) {
      append_escaped_ascii(out, b);
      ++i;
      continue;
    }
    auto lead = lead_of(b);
    if (lead.continuation == 0) { // cannot start a sequence: one U+FFFD, byte skipped
      out += replacement;
      ++i;
      continue;
    }
    size_t j = i + 1;
    int k = 0;
    for (; k < lead.continuation && j < n; ++k, ++j) {
      const unsigned char lo = k == 0 ? lead.lo : 0x80;
      const unsigned char hi = k == 0 ? lead.hi : 0xBF;
      if (s[j] < lo || s[j] > hi)
        break;
    }
    if (k == lead.continuation) { // well-formed
      out.append(text.data() + i, j - i);
      i = j;
      continue;
    }
    // Cut by a byte that cannot continue it (read again as a new start) or by the end.
    out += replacement;
    i = j;
  }
  out.push_back('"');
}

} // namespace mneme
