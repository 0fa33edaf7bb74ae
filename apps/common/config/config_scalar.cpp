// Strict scalar reading for the configuration loader; see config_scalar.hpp.
#include "apps/common/config/config_scalar.hpp"

#include <cassert>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include <fmt/format.h>

namespace mneme {

namespace {

constexpr size_t max_shown_chars = 60;

bool looks_like_plain_number(std::string_view t) {
  static const std::regex number{R"([-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?)"};
  return std::regex_match(t.begin(), t.end(), number);
}

bool is_decimal_integer(std::string_view t) {
  static const std::regex integer{R"([-+]?[0-9]+)"};
  return std::regex_match(t.begin(), t.end(), integer);
}

} // namespace

std::string show_scalar(const yaml_scalar& s) {
  if (!s.quoted && looks_like_plain_number(s.text))
    return s.text;
  if (s.text.size() <= max_shown_chars)
    return yaml_quote(s.text);
  return yaml_quote(s.text.substr(0, max_shown_chars)) + "...";
}

std::optional<bool> parse_config_bool(const yaml_scalar& s, std::string& why) {
  if (!s.quoted) {
    const auto& t = s.text;
    if (t == "true" || t == "True" || t == "TRUE")
      return true;
    if (t == "false" || t == "False" || t == "FALSE")
      return false;
  }
  why = show_scalar(s) + " is not a boolean (write true or false)";
  return std::nullopt;
}

std::optional<int64_t> parse_config_int(const yaml_scalar& s, std::string& why) {
  if (s.quoted) {
    why = show_scalar(s) + " is a quoted string, not an integer";
    return std::nullopt;
  }
  if (!is_decimal_integer(s.text)) {
    why = show_scalar(s) + " is not an integer";
    return std::nullopt;
  }
  auto digits = s.text.find_first_not_of("+-");
  if (s.text.size() - digits > 1 && s.text[digits] == '0') {
    why = show_scalar(s) + " has a leading zero (octal in YAML 1.1): write it without";
    return std::nullopt;
  }
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') {
    why = s.text + " does not fit a 64-bit integer";
    return std::nullopt;
  }
  return static_cast<int64_t>(v);
}

std::optional<double> parse_config_number(const yaml_scalar& s, std::string& why) {
  if (s.quoted) {
    why = show_scalar(s) + " is a quoted string, not a number";
    return std::nullopt;
  }
  if (!looks_like_plain_number(s.text)) {
    why = show_scalar(s) + " is not a number";
    return std::nullopt;
  }
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(s.text.c_str(), &end);
  if (errno == ERANGE || *end != '\0' || !std::isfinite(v)) {
    why = s.text + " is not a representable number";
    return std::nullopt;
  }
  return v;
}

std::string format_config_number(double x) {
  assert(std::isfinite(x));
  return fmt::format("{}", x);
}

std::string yaml_quote(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);  // UTF-8 passes through unchanged
        }
    }
  }
  out += '"';
  return out;
}

} // namespace mneme
