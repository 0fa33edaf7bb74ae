// The API's router: routes are matched on the raw (still percent-encoded) request path,
// split at '/', and each captured segment is percent-decoded only after the split, so a
// session key may hold '/', ' ', '%' or any UTF-8 ("telegram/123" is "telegram%2F123").
// A path that matches a pattern under another method is told apart from an unknown
// path, so the API can answer 405 with an Allow header instead of 404.
//
// Patterns: "/v1/sessions/{}/turns" — literal segments, "{}" captures one segment,
// a final "{*}" captures the rest of the path ('/' kept; it may be empty, but the '/'
// before it must be there).
// HEAD is looked up as GET.
//
// Threads: add() before serving; find() from any thread afterwards (const).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mneme::api {

// Decodes %XX escapes ('+' stays '+': this is a path, not a form); a malformed escape
// is kept literally.
std::string percent_decode(std::string_view text);

// The path part of a request target (before '?' or '#'), still encoded.
std::string_view raw_path_of(std::string_view target);

// The query parameters of a request target (after '?', before '#'): name=value pairs
// split at '&', each side percent-decoded ('+' stays '+', as in a path); a name without
// '=' has an empty value. The first of two equal names wins in find().
struct query_params {
  std::vector<std::pair<std::string, std::string>> items;
  const std::string* find(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }
  std::string value_or(std::string_view name, std::string fallback) const;
};
query_params parse_query(std::string_view target);

class route_table {
 public:
  struct found {
    std::optional<size_t> route;      // index from add(), when method and path match
    std::vector<std::string> args;    // the decoded captures of that route
    std::vector<std::string> allowed; // methods of the routes whose path matches
    std::optional<size_t> first_at_path; // the first route whose path matches, any method
  };

  // REQUIRES: pattern starts with '/'; "{*}" only as the last segment.
  // Returns the route's index (0, 1, ... in the order of adding).
  size_t add(std::string method, std::string_view pattern);

  found find(std::string_view method, std::string_view raw_path) const;

 private:
  struct route {
    std::string method;
    std::vector<std::string> segments;
  };
  std::vector<route> routes_;
};

} // namespace mneme::api
