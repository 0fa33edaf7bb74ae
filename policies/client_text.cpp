// Strict client names and log escaping; see client_text.hpp.
#include "policies/client_text.hpp"

#include "policies/utf8.hpp"

namespace mneme {

namespace {

bool is_control(char32_t c) { return c < 0x20 || c == 0x7F; }

// What a log line may not hold as is: C0 controls and DEL, C1 controls (U+0080..U+009F:
// NEL breaks a line in some viewers) and the Unicode line and paragraph separators.
bool breaks_a_log_line(char32_t c) {
  return is_control(c) || (c >= 0x80 && c <= 0x9F) || c == 0x2028 || c == 0x2029;
}

void append_hex_escape(std::string& out, unsigned char b) {
  static const char* digits = "0123456789abcdef";
  out += "\\x";
  out.push_back(digits[b >> 4]);
  out.push_back(digits[b & 0xF]);
}

} // namespace

name_verdict check_name(std::string_view text, std::size_t max_bytes) {
  if (text.empty())
    return {name_problem::empty, 0};
  if (text.size() > max_bytes)
    return {name_problem::too_long, max_bytes};
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto at = pos;
    auto c = next_code_point(text, pos);
    if (c == replacement_character && pos - at == 1)
      return {name_problem::invalid_utf8, at};
    if (is_control(c))
      return {name_problem::control_character, at};
  }
  return {};
}

std::string describe_name_problem(const name_verdict& v, std::string_view what,
                                  std::size_t max_bytes) {
  std::string w{what};
  switch (v.problem) {
    case name_problem::none: return {};
    case name_problem::empty: return w + " is empty";
    case name_problem::too_long:
      return w + " is longer than " + std::to_string(max_bytes) + " bytes";
    case name_problem::invalid_utf8:
      return w + " is not valid UTF-8 (byte " + std::to_string(v.byte) + ")";
    case name_problem::control_character:
      return w + " holds a control character (byte " + std::to_string(v.byte) + ")";
  }
  return w + " is not acceptable";
}

std::string log_quoted(std::string_view text, std::size_t max_bytes) {
  auto shown = text.substr(0, max_bytes);
  std::string out = "\"";
  std::size_t pos = 0;
  while (pos < shown.size()) {
    auto at = pos;
    auto c = next_code_point(shown, pos);
    if (c == replacement_character && pos - at == 1) {
      append_hex_escape(out, static_cast<unsigned char>(shown[at]));
    } else if (breaks_a_log_line(c)) {
      for (auto i = at; i < pos; ++i) // its UTF-8 bytes (one for a C0 control or DEL)
        append_hex_escape(out, static_cast<unsigned char>(shown[i]));
    } else if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else {
      out.append(shown.substr(at, pos - at));
    }
  }
  out += "\"";
  if (text.size() > shown.size())
    out += "...(+" + std::to_string(text.size() - shown.size()) + " bytes)";
  return out;
}

} // namespace mneme
