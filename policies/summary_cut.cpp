// The cut of an over-long summary; see summary_cut.hpp for the rule.
#include "policies/summary_cut.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "policies/token_estimate.hpp"
#include "policies/utf8_cut.hpp"

namespace mneme {

int64_t summary_cut_limit(int64_t budget_tokens) {
  const double limit = std::floor(static_cast<double>(budget_tokens) * summary_overrun_factor);
  return std::max<int64_t>(1, static_cast<int64_t>(limit));
}

namespace {

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r'
                        || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// The longest prefix of `line` (whole code points) whose estimate is <= max_tokens.
std::string_view prefix_within(std::string_view line, int64_t max_tokens) {
  size_t lo = 0, hi = line.size();
  auto fits = [&](size_t n) { return estimate_text_tokens(line.substr(0, n)) <= max_tokens; };
  while (lo < hi) { // binary search on bytes, then back off to a code-point start
    size_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) lo = mid; else hi = mid - 1;
  }
  return line.substr(0, utf8_boundary_at_or_before(line, lo));
}

} // namespace

summary_cut cut_summary_to_tokens(std::string_view summary, int64_t max_tokens) {
  assert(max_tokens >= 1);
  summary_cut out;
  out.tokens_before = estimate_text_tokens(summary);
  if (out.tokens_before <= max_tokens) {
    out.text = std::string{summary};
    out.tokens_after = out.tokens_before;
    return out;
  }
  out.cut = true;
  size_t kept = 0; // bytes of whole lines kept
  size_t at = 0;
  while (at < summary.size()) {
    size_t nl = summary.find('\n', at);
    size_t end = nl == std::string_view::npos ? summary.size() : nl;
    if (estimate_text_tokens(trim_right(summary.substr(0, end))) > max_tokens)
      break;
    kept = end;
    at = nl == std::string_view::npos ? summary.size() : nl + 1;
  }
  std::string_view text = trim_right(summary.substr(0, kept));
  if (text.empty()) {
    size_t first_end = summary.find('\n');
    text = prefix_within(summary.substr(0, first_end), max_tokens);
  }
  out.text = std::string{text};
  out.tokens_after = estimate_text_tokens(out.text);
  return out;
}

} // namespace mneme
