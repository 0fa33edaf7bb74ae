// The upstream's Retry-After, read for mneme's own clients (issue 44, docs/api.md
// "Retry-After"): when a model provider answers 429, 503 or 529 with a Retry-After, the
// door or turn route that answers its client with a retried status passes the wait on,
// so the client's SDK waits as the provider asked. Header-only, pure (the clock is a
// parameter), standard library only; any thread. Owned by the LLM client (actors/llm),
// which reads the header; the HTTP API only copies the number.
//
// Reading a value (RFC 9110 §10.2.3), leading and trailing blanks ignored:
//   - delta-seconds (digits only): that many seconds;
//   - an HTTP-date in the IMF-fixdate form ("Sun, 06 Nov 1994 08:49:37 GMT"): the
//     seconds from `now_unix_s` to it, 0 for a date already past;
//   - anything else (the obsolete RFC 850 and asctime date forms, a fraction, a sign,
//     an empty value): nullopt, the value is dropped.
// Either way the result is at most max_retry_after_seconds (a longer wait is cut to it:
// a client still waits long, and a mistaken upstream cannot park it for hours).
// Which upstream answers carry it (carries_retry_after): statuses 429, 503 and 529 only.
// Which client answers pass it on (passes_retry_after): 429 and every 5xx, the statuses
// the OpenAI and Anthropic SDKs retry by themselves (a door may map an upstream 503 to
// 502 or 529, and a 429 stays a 429); a 4xx the SDK does not retry gets none.
// Invariant: a result r satisfies 0 <= r <= max_retry_after_seconds.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace mneme {

inline constexpr int64_t max_retry_after_seconds = 600;

// Whether an upstream answer of `status` has its Retry-After passed on.
constexpr bool carries_retry_after(int status) {
  return status == 429 || status == 503 || status == 529;
}

// Whether a client answer of `client_status` passes the upstream's wait on.
constexpr bool passes_retry_after(int client_status) {
  return client_status == 429 || (client_status >= 500 && client_status <= 599);
}

namespace retry_after_detail {

constexpr bool digits(std::string_view s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  return true;
}

constexpr int64_t number(std::string_view s) {
  int64_t v = 0;
  for (char c : s) {
    v = v * 10 + (c - '0');
    if (v > max_retry_after_seconds) // past the cap: the rest cannot bring it back
      return max_retry_after_seconds + 1;
  }
  return v;
}

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's
// days_from_civil).
constexpr int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

constexpr int64_t days_in_month(int64_t y, int64_t m) {
  constexpr std::array<int64_t, 12> days{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : days[static_cast<size_t>(m - 1)];
}

// "Sun, 06 Nov 1994 08:49:37 GMT" as Unix seconds; nullopt when not of that form.
constexpr std::optional<int64_t> imf_fixdate(std::string_view s) {
  constexpr std::array<std::string_view, 7> wdays{"Mon", "Tue", "Wed", "Thu",
                                                  "Fri", "Sat", "Sun"};
  constexpr std::array<std::string_view, 12> months{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (s.size() != 29 || s.substr(3, 2) != ", " || s[7] != ' ' || s[11] != ' ' || s[16] != ' '
      || s[19] != ':' || s[22] != ':' || s.substr(25) != " GMT")
    return std::nullopt;
  bool wday = false;
  for (auto w : wdays)
    wday = wday || s.substr(0, 3) == w;
  int64_t month = 0;
  for (size_t i = 0; i < months.size(); ++i)
    if (s.substr(8, 3) == months[i])
      month = static_cast<int64_t>(i) + 1;
  auto dd = s.substr(5, 2), yyyy = s.substr(12, 4), hh = s.substr(17, 2), mi = s.substr(20, 2),
       ss = s.substr(23, 2);
  if (!wday || month == 0 || !digits(dd) || !digits(yyyy) || !digits(hh) || !digits(mi)
      || !digits(ss))
    return std::nullopt;
  auto small = [](std::string_view v) {
    int64_t n = 0;
    for (char c : v)
      n = n * 10 + (c - '0');
    return n;
  };
  int64_t year = small(yyyy), day = small(dd), hour = small(hh), minute = small(mi),
          second = small(ss);
  if (day < 1 || day > days_in_month(year, month) || hour > 23 || minute > 59 || second > 60)
    return std::nullopt;
  return days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
}

} // namespace retry_after_detail

// The wait a Retry-After value asks for, in seconds, read as described above.
constexpr std::optional<int64_t> retry_after_seconds(std::string_view value,
                                                     int64_t now_unix_s) {
  using namespace retry_after_detail;
  auto first = value.find_first_not_of(" \t");
  if (first == std::string_view::npos)
    return std::nullopt;
  value = value.substr(first, value.find_last_not_of(" \t") - first + 1);
  int64_t wait = 0;
  if (digits(value)) {
    wait = number(value);
  } else if (auto at = imf_fixdate(value)) {
    wait = *at > now_unix_s ? *at - now_unix_s : 0;
  } else {
    return std::nullopt;
  }
  return wait > max_retry_after_seconds ? max_retry_after_seconds : wait;
}

} // namespace mneme
