// The retry below compression.min_retention; see retention_retry.hpp.
#include "policies/retention_retry.hpp"

namespace mneme {

const char* to_string(retention_action a) {
  switch (a) {
    case retention_action::accept: return "accept";
    case retention_action::retry: return "retry";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, retention_action a) { return os << to_string(a); }

retention_action decide_retention_retry(const retention_retry_inputs& in) {
  if (in.min_retention <= 0 || !in.from_summarizer || in.attempt >= 2
      || in.identifiers_in < min_identifiers_to_judge)
    return retention_action::accept;
  const double kept = static_cast<double>(in.identifiers_kept)
                      / static_cast<double>(in.identifiers_in);
  return kept >= in.min_retention ? retention_action::accept : retention_action::retry;
}

std::string missing_identifiers_list(const std::vector<identifier>& missing) {
  std::string out;
  std::size_t items = 0;
  for (const auto& id : missing) {
    if (items == retry_list_max_items)
      break;
    std::string line = "- " + id.text + "\n";
    if (out.size() + line.size() > retry_list_max_bytes)
      break;
    out += line;
    ++items;
  }
  return out;
}

} // namespace mneme
