// What every backend's facts share; see facts.hpp.
#include "store/facts.hpp"

#include <algorithm>
#include <string_view>

#include "policies/fts_query.hpp"
#include "store/store_errors.hpp"

namespace mneme {

namespace {

caf::error check_size(const std::string& value, std::size_t min, std::size_t max,
                      const char* name) {
  if (value.size() < min || value.size() > max)
    return bad_request(std::string{"fact: "} + name + " must be " + std::to_string(min) + ".."
                       + std::to_string(max) + " bytes (got " + std::to_string(value.size())
                       + ")");
  return {};
}

std::string ascii_lower(std::string_view text) {
  std::string out{text};
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

} // namespace

bool fact_scan_matches(const fact_record& f, const parsed_query& q) {
  auto text = ascii_lower(f.key + "\n" + f.value);
  for (const auto& c : q.clauses) {
    bool any = std::any_of(c.any_of.begin(), c.any_of.end(), [&](const query_term& t) {
      return text.find(ascii_lower(t.text)) != std::string::npos;
    });
    if (any == c.negated)
      return false;
  }
  return true;
}

caf::error check_fact(const fact_record& f, time_ms now) {
  if (auto err = check_size(f.user_id, 1, fact_user_max_bytes, "user_id"))
    return err;
  if (auto err = check_size(f.key, 1, fact_key_max_bytes, "key"))
    return err;
  if (auto err = check_size(f.value, 1, fact_value_max_bytes, "value"))
    return err;
  if (auto err = check_size(f.source_session, 0, fact_source_max_bytes, "source_session"))
    return err;
  if (now < 0)
    return bad_request("fact: now must be >= 0");
  return {};
}

caf::error check_fact_query(const fact_query& q) {
  if (auto err = check_size(q.user_id, 1, fact_user_max_bytes, "user_id"))
    return err;
  if (q.limit < 1 || q.limit > fact_query_max_limit)
    return bad_request("fact query: limit must be 1.." + std::to_string(fact_query_max_limit));
  return {};
}

} // namespace mneme
