// Summary markers: wrapping, escaping and locating; see summary_markers.hpp.
#include "policies/summary_markers.hpp"

#include <cassert>

namespace mneme {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool is_marker_line(std::string_view line) {
  return starts_with(line, summary_prefix_tag) || starts_with(line, summary_end_tag);
}

// A marker line, possibly behind backslashes: the lines escaping touches.
bool is_escapable_line(std::string_view line) {
  const size_t first = line.find_first_not_of('\\');
  if (first == std::string_view::npos) return false;
  return is_marker_line(line.substr(first));
}

// Calls f(line) for each '\n'-separated line of s (the last one may be empty).
template <class F>
void for_each_line(std::string_view s, F&& f) {
  size_t start = 0;
  for (;;) {
    const size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) {
      f(s.substr(start));
      return;
    }
    f(s.substr(start, nl - start));
    start = nl + 1;
  }
}

std::string unescape_body(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  bool first = true;
  for_each_line(body, [&](std::string_view line) {
    if (!first) out += '\n';
    first = false;
    if (!line.empty() && line.front() == '\\' && is_escapable_line(line)) line.remove_prefix(1);
    out.append(line);
  });
  return out;
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

} // namespace

std::string wrap_summary(std::string_view body) {
  std::string out;
  out.reserve(summary_prefix_line.size() + body.size() + summary_end_line.size() + 16);
  out.append(summary_prefix_line);
  out += '\n';
  bool first = true;
  for_each_line(body, [&](std::string_view line) {
    if (!first) out += '\n';
    first = false;
    if (is_escapable_line(line)) out += '\\';
    out.append(line);
  });
  out += '\n';
  out.append(summary_end_line);
  return out;
}

std::optional<summary_span> find_summary(std::string_view text) {
  bool have_prefix = false;
  size_t prefix_begin = 0;
  size_t prefix_line_end = 0;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t nl = text.find('\n', start);
    const size_t line_end = nl == std::string_view::npos ? text.size() : nl;
    const auto line = text.substr(start, line_end - start);
    if (starts_with(line, summary_prefix_tag)) {
      have_prefix = true;
      prefix_begin = start;
      prefix_line_end = line_end;
    } else if (have_prefix && starts_with(line, summary_end_tag)) {
      summary_span s;
      s.begin = prefix_begin;
      s.end = line_end;
      s.body_begin = prefix_line_end + 1;  // past the prefix line's '\n'
      s.body_end = start - 1;              // the '\n' before the end line
      if (s.body_end < s.body_begin) s.body_end = s.body_begin = start;
      return s;
    }
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return std::nullopt;
}

std::string unwrap_summary(std::string_view text) {
  const auto span = find_summary(text);
  if (!span) return std::string{text};
  return unescape_body(text.substr(span->body_begin, span->body_end - span->body_begin));
}

std::string text_around_summary(std::string_view text, const summary_span& span) {
  assert(span.begin <= span.end && span.end <= text.size());
  const auto before = trim(text.substr(0, span.begin));
  const auto after = trim(text.substr(span.end));
  std::string out{before};
  if (!before.empty() && !after.empty()) out += "\n\n";
  out.append(after);
  return out;
}

} // namespace mneme
