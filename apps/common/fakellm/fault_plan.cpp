// Implementation of the pure fault decision (see fault_plan.hpp).
#include "apps/common/fakellm/fault_plan.hpp"

#include <array>
#include <cassert>
#include <cmath>

namespace mneme::fakellm {

namespace {

constexpr std::array<std::string_view, fault_kind_count> kind_names{
    "refuse",         "reset",          "silence",        "unavailable",   "latency",
    "payload_too_large", "long_context_429", "overflow_400", "malformed_json",
    "truncated_body", "empty_content",  "reasoning_only", "trickle",
    "output_too_large_400", "rate_limit_429"};

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr uint64_t fraction_salt = 1;
constexpr uint64_t jitter_salt = 2;

bool targets_match(const fault_rule& r, int index, const fault_plan& plan,
                   const request_facts& f, const std::vector<int64_t>& injected) {
  if (!in_window(r, f.elapsed_s)) return false;
  if (!r.model.empty() && f.model.find(r.model) == std::string_view::npos) return false;
  if (r.purpose == purpose_filter::chat && (f.is_summary || f.is_compaction || f.is_embedding))
    return false;
  if (r.purpose == purpose_filter::summary && !f.is_summary) return false;
  if (r.purpose == purpose_filter::compaction && !f.is_compaction) return false;
  if (r.purpose == purpose_filter::embedding && !f.is_embedding) return false;
  if (f.prompt_tokens < r.min_prompt_tokens) return false;
  if (r.kind == fault_kind::payload_too_large && f.body_bytes <= r.max_body_bytes) return false;
  auto done = static_cast<size_t>(index) < injected.size() ? injected[index] : 0;
  if (r.max_count > 0 && done >= r.max_count) return false;
  if (r.fraction < 1.0 &&
      uniform01(plan.seed, f.seq, static_cast<uint64_t>(index), fraction_salt) >= r.fraction)
    return false;
  return true;
}

} // namespace

std::string_view to_string(fault_kind k) {
  return kind_names[static_cast<size_t>(k)];
}

std::optional<fault_kind> parse_fault_kind(std::string_view s) {
  for (size_t i = 0; i < kind_names.size(); ++i)
    if (kind_names[i] == s) return static_cast<fault_kind>(i);
  return std::nullopt;
}

std::string_view to_string(purpose_filter p) {
  switch (p) {
    case purpose_filter::any: return "any";
    case purpose_filter::chat: return "chat";
    case purpose_filter::summary: return "summary";
    case purpose_filter::compaction: return "compaction";
    case purpose_filter::embedding: return "embedding";
  }
  return "unknown";
}

std::optional<purpose_filter> parse_purpose_filter(std::string_view s) {
  if (s == "any") return purpose_filter::any;
  if (s == "chat") return purpose_filter::chat;
  if (s == "summary") return purpose_filter::summary;
  if (s == "compaction") return purpose_filter::compaction;
  if (s == "embedding") return purpose_filter::embedding;
  return std::nullopt;
}

std::string validate(const fault_rule& r) {
  if (!(r.fraction >= 0.0 && r.fraction <= 1.0)) return "fraction must be within [0, 1]";
  if (!(r.start_s >= 0.0) || !std::isfinite(r.start_s)) return "start_s must be >= 0";
  if (r.end_s && !(*r.end_s > r.start_s)) return "end_s must be greater than start_s";
  if (r.min_prompt_tokens < 0) return "min_prompt_tokens must be >= 0";
  if (r.max_count < 0) return "max_count must be >= 0";
  if (r.latency_ms < 0 || r.jitter_ms < 0) return "latency_ms and jitter_ms must be >= 0";
  if (r.max_body_bytes < 0) return "max_body_bytes must be >= 0";
  if (r.silence_ms < 0) return "silence_ms must be >= 0";
  if (!r.retry_after.empty()) {
    if (r.kind != fault_kind::unavailable && r.kind != fault_kind::rate_limit_429
        && r.kind != fault_kind::long_context_429)
      return "retry_after applies to unavailable, rate_limit_429 and long_context_429 only";
    for (char c : r.retry_after)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        return "retry_after must not contain control characters";
  }
  if (r.kind == fault_kind::latency && r.latency_ms == 0 && r.jitter_ms == 0)
    return "latency needs latency_ms or jitter_ms";
  if (r.kind == fault_kind::refuse) {
    if (!r.end_s) return "refuse needs end_s (the listener reopens then)";
    if (r.fraction != 1.0 || !r.model.empty() || r.purpose != purpose_filter::any ||
        r.min_prompt_tokens != 0 || r.max_count != 0)
      return "refuse closes the listener: only start_s and end_s may target it (use reset "
             "to target requests)";
  }
  return {};
}

bool in_window(const fault_rule& r, double elapsed_s) {
  return elapsed_s >= r.start_s && (!r.end_s || elapsed_s < *r.end_s);
}

double uniform01(uint64_t seed, uint64_t seq, uint64_t rule, uint64_t salt) {
  uint64_t h = splitmix64(seed);
  h = splitmix64(h ^ seq);
  h = splitmix64(h ^ (rule << 8 | salt));
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);  // 53 bits
}

fault_decision decide(const fault_plan& plan, const request_facts& facts,
                      const std::vector<int64_t>& injected) {
  fault_decision d;
  for (size_t i = 0; i < plan.rules.size(); ++i) {
    const auto& r = plan.rules[i];
    assert(validate(r).empty());
    if (r.kind == fault_kind::refuse) continue;  // acts on the listener, see listener_refused
    int index = static_cast<int>(i);
    if (r.kind == fault_kind::latency) {
      if (!targets_match(r, index, plan, facts, injected)) continue;
      auto jitter = r.jitter_ms == 0 ? 0
                    : static_cast<int64_t>(uniform01(plan.seed, facts.seq, i, jitter_salt) *
                                           static_cast<double>(r.jitter_ms + 1));
      d.delay_ms += r.latency_ms + jitter;
      d.latency_rules.push_back(index);
      continue;
    }
    if (d.answer) continue;
    if (targets_match(r, index, plan, facts, injected)) {
      d.answer = r.kind;
      d.answer_rule = index;
    }
  }
  return d;
}

bool listener_refused(const fault_plan& plan, double elapsed_s) {
  for (const auto& r : plan.rules)
    if (r.kind == fault_kind::refuse && in_window(r, elapsed_s)) return true;
  return false;
}

} // namespace mneme::fakellm
