// The API's router; see route_table.hpp.
#include "apps/common/api/plumbing/route_table.hpp"

#include <algorithm>
#include <cassert>

namespace mneme::api {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

// The segments between '/' (the leading '/' yields no empty first segment).
std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  if (!path.empty() && path.front() == '/')
    path.remove_prefix(1);
  while (true) {
    auto slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos)
      break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

constexpr std::string_view capture_one = "{}";
constexpr std::string_view capture_rest = "{*}";

// The decoded captures when `segments` matches `raw`.
std::optional<std::vector<std::string>> match(const std::vector<std::string>& segments,
                                              const std::vector<std::string_view>& raw,
                                              std::string_view raw_path) {
  std::vector<std::string> args;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (segments[i] == capture_rest) {
      // The rest of the raw path after the i-th segment's start, '/' kept.
      if (i >= raw.size())
        return std::nullopt;
      args.push_back(percent_decode(
        raw_path.substr(static_cast<size_t>(raw[i].data() - raw_path.data()))));
      return args;
    }
    if (i >= raw.size())
      return std::nullopt;
    if (segments[i] == capture_one) {
      if (raw[i].empty())
        return std::nullopt;
      args.push_back(percent_decode(raw[i]));
    } else if (segments[i] != raw[i]) {
      return std::nullopt;
    }
  }
  if (raw.size() != segments.size())
    return std::nullopt;
  return args;
}

} // namespace

std::string percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      int hi = hex_value(text[i + 1]);
      int lo = hex_value(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

std::string_view raw_path_of(std::string_view target) {
  return target.substr(0, target.find_first_of("?#"));
}

size_t route_table::add(std::string method, std::string_view pattern) {
  assert(!pattern.empty() && pattern.front() == '/');
  route r{std::move(method), {}};
  for (auto s : split_path(pattern))
    r.segments.emplace_back(s);
  assert(std::find(r.segments.begin(), r.segments.end(), capture_rest) == r.segments.end()
         || r.segments.back() == capture_rest);
  routes_.push_back(std::move(r));
  return routes_.size() - 1;
}

route_table::found route_table::find(std::string_view method, std::string_view raw_path) const {
  found out;
  if (method == "HEAD")
    method = "GET";
  auto raw = split_path(raw_path);
  for (size_t i = 0; i < routes_.size(); ++i) {
    auto args = match(routes_[i].segments, raw, raw_path);
    if (!args)
      continue;
    if (!out.first_at_path)
      out.first_at_path = i;
    if (std::find(out.allowed.begin(), out.allowed.end(), routes_[i].method) == out.allowed.end())
      out.allowed.push_back(routes_[i].method);
    if (!out.route && routes_[i].method == method) {
      out.route = i;
      out.args = std::move(*args);
    }
  }
  return out;
}

const std::string* query_params::find(std::string_view name) const {
  for (const auto& [k, v] : items)
    if (k == name)
      return &v;
  return nullptr;
}

std::string query_params::value_or(std::string_view name, std::string fallback) const {
  auto v = find(name);
  return v ? *v : std::move(fallback);
}

query_params parse_query(std::string_view target) {
  query_params out;
  auto q = target.find('?');
  if (q == std::string_view::npos)
    return out;
  auto query = target.substr(q + 1);
  query = query.substr(0, query.find('#'));
  while (!query.empty()) {
    auto amp = query.find('&');
    auto item = query.substr(0, amp);
    if (!item.empty()) {
      auto eq = item.find('=');
      if (eq == std::string_view::npos)
        out.items.emplace_back(percent_decode(item), std::string{});
      else
        out.items.emplace_back(percent_decode(item.substr(0, eq)),
                               percent_decode(item.substr(eq + 1)));
    }
    if (amp == std::string_view::npos)
      break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

} // namespace mneme::api
