// Implementation of the fake LLM's response plans (see chat_responder.hpp).
#include "apps/common/fakellm/chat_responder.hpp"

#include <algorithm>
#include <cassert>

#include "apps/common/fakellm/fake_answer.hpp"
#include "apps/common/fakellm/fake_tool_calls.hpp"
#include "apps/common/fakellm/http_response.hpp"
#include "policies/token_estimate.hpp"

namespace mneme::fakellm {

namespace {

constexpr std::string_view json_type = "application/json";
constexpr std::string_view sse_type = "text/event-stream";
constexpr size_t trickle_first_bytes = 16;

response_plan whole(int status, std::string_view body, bool keep_alive) {
  response_plan p;
  p.status = status;
  p.first = http_response(status, json_type, body, keep_alive);
  p.close_after = !keep_alive;
  return p;
}

// A streamed answer as chunked HTTP: head, one chunk per event, terminator.
std::string stream_bytes(const std::vector<std::string>& events, size_t count, bool keep_alive,
                         bool terminate) {
  std::string out = http_chunked_head(200, sse_type, keep_alive);
  for (size_t i = 0; i < count && i < events.size(); ++i) out += http_chunk(events[i]);
  if (terminate) out += http_chunk("");
  return out;
}

} // namespace

response_plan plan_stream_answer(const std::vector<std::string>& events, const chat_facts& facts,
                                 std::optional<fault_kind> fault, const fault_rule* rule) {
  response_plan p;
  p.status = 200;
  bool keep = facts.keep_alive;
  if (fault == fault_kind::truncated_body) {
    p.first = stream_bytes(events, std::max<size_t>(1, events.size() / 2), false, false);
    p.close_after = true;
    return p;
  }
  if (fault == fault_kind::trickle) { // a stall mid-stream: half the events, silence, the rest
    auto half = std::max<size_t>(1, events.size() / 2);
    p.first = stream_bytes(events, half, keep, false);
    p.pause_ms = rule->silence_ms;
    for (size_t i = half; i < events.size(); ++i) p.rest += http_chunk(events[i]);
    p.rest += http_chunk("");
    p.close_after = !keep;
    return p;
  }
  p.first = stream_bytes(events, events.size(), keep, true);
  p.close_after = !keep;
  return p;
}

response_plan plan_json_answer(std::string body, const chat_facts& facts,
                               std::optional<fault_kind> fault, const fault_rule* rule) {
  response_plan p;
  p.status = 200;
  bool keep = facts.keep_alive;
  if (fault == fault_kind::malformed_json) body = body.substr(0, body.size() / 2);
  if (fault == fault_kind::truncated_body) {
    auto full = http_response(200, json_type, body, false);
    p.first = full.substr(0, full.size() - body.size() / 2);
    p.close_after = true;
    return p;
  }
  auto full = http_response(200, json_type, body, keep);
  if (fault == fault_kind::trickle) {
    auto head_size = full.size() - body.size();
    auto cut = head_size + std::min(trickle_first_bytes, body.size() / 2);
    p.first = full.substr(0, cut);
    p.rest = full.substr(cut);
    p.pause_ms = rule->silence_ms;
  } else {
    p.first = std::move(full);
  }
  p.close_after = !keep;
  return p;
}

std::optional<response_plan> plan_failure(const chat_facts& facts, const fault_decision& decision,
                                          const fault_rule* rule, const answer_settings& settings) {
  assert(decision.answer.has_value() == (rule != nullptr));
  response_plan p;
  auto fault = decision.answer;
  if (fault == fault_kind::refuse || fault == fault_kind::reset) {
    p.reset = true;
    return p;
  }
  if (fault == fault_kind::silence) {
    p.silence = true;
    return p;
  }
  if (fault == fault_kind::unavailable) {
    p = whole(503, error_body("The server is temporarily unavailable. Please retry later.",
                              "server_error", "service_unavailable"),
              facts.keep_alive);
  } else if (fault == fault_kind::payload_too_large) {
    p = whole(413, error_body("Request too large: the body of " + std::to_string(facts.body_bytes) +
                                  " bytes exceeds the limit of " +
                                  std::to_string(rule->max_body_bytes) + " bytes.",
                              "invalid_request_error", "request_too_large"),
              facts.keep_alive);
  } else if (fault == fault_kind::long_context_429) {
    p = whole(429, long_context_429_body(), facts.keep_alive);
  } else if (fault == fault_kind::rate_limit_429) {
    p = whole(429, error_body("Rate limit reached for requests. Please try again later.",
                              "requests", "rate_limit_exceeded"),
              facts.keep_alive);
  } else if (fault == fault_kind::overflow_400) {
    p = whole(400, overflow_body(settings.window_tokens, facts.prompt_tokens), facts.keep_alive);
  } else if (fault == fault_kind::output_too_large_400) {
    p = whole(400,
              output_too_large_body(settings.window_tokens, facts.prompt_tokens,
                                    facts.max_tokens > 0 ? facts.max_tokens
                                                         : settings.window_tokens),
              facts.keep_alive);
  } else if (!fault && facts.prompt_tokens > settings.window_tokens) {
    p = whole(400, overflow_body(settings.window_tokens, facts.prompt_tokens), facts.keep_alive);
    p.window_overflow = true;
  } else {
    return std::nullopt;
  }
  if (rule && !rule->retry_after.empty())
    p.first = with_header(std::move(p.first), "Retry-After", rule->retry_after);
  p.delay_ms = decision.delay_ms;
  return p;
}

std::string answer_text(const chat_call& call, bool is_summary, const answer_settings& settings) {
  if (!is_summary) {
    if (auto quoted = quote_tool_results(call.messages)) return *quoted;
    return fake_chat_answer(call.messages, settings.answer_tokens);
  }
  auto target = find_summary_target(call.messages).value_or(settings.default_summary_tokens);
  return fake_summary(call.messages, std::max(target, min_summary_target_tokens));
}

completion build_completion(const chat_call& call, const chat_facts& facts,
                            std::optional<fault_kind> fault, const answer_settings& settings) {
  completion c;
  c.id = "chatcmpl-fake-" + std::to_string(facts.seq);
  c.model = call.model;
  c.created = facts.created_s;
  c.prompt_tokens = facts.prompt_tokens;
  c.report_usage = settings.report_usage;
  c.server_compacted = facts.server_compacted;
  c.compacted_tokens_before = facts.server_compacted ? facts.prompt_tokens : 0;
  c.compacted_tokens_after = facts.server_compacted_tokens_after;
  bool content_fault = fault == fault_kind::empty_content || fault == fault_kind::reasoning_only;
  if (!facts.is_summary && !content_fault)
    c.tool_calls = fake_tool_calls(
      call, tool_call_settings{settings.seed, settings.tool_call_fraction, settings.tool_rounds});
  auto text = c.tool_calls.empty() ? answer_text(call, facts.is_summary, settings) : std::string{};
  if (!facts.is_summary) c.stop_sequence = apply_stop_sequences(text, call.stop);
  if (fault == fault_kind::reasoning_only) c.reasoning_content = "Thinking it over. " + text;
  if (!content_fault) c.content = std::move(text);
  if (!c.tool_calls.empty()) c.finish_reason = "tool_calls";
  c.completion_tokens = estimate_text_tokens(c.content) + estimate_text_tokens(c.reasoning_content);
  for (const auto& tc : c.tool_calls)
    c.completion_tokens += estimate_text_tokens(tc.name) + estimate_text_tokens(tc.arguments);
  return c;
}

response_plan plan_chat_response(const chat_call& call, const chat_facts& facts,
                                 const fault_decision& decision, const fault_rule* rule,
                                 const answer_settings& settings) {
  if (auto failed = plan_failure(facts, decision, rule, settings)) return std::move(*failed);
  auto fault = decision.answer;
  auto c = build_completion(call, facts, fault, settings);
  response_plan p;
  if (call.stream) {
    auto events = completion_events(c, settings.stream_piece_bytes);
    if (fault == fault_kind::malformed_json)
      events.insert(events.begin() + 1, "data: {\"id\": \"" + c.id + "\", \"choices\": [{\n\n");
    p = plan_stream_answer(events, facts, fault, rule);
  } else {
    p = plan_json_answer(completion_body(c), facts, fault, rule);
  }
  p.delay_ms = decision.delay_ms;
  return p;
}

} // namespace mneme::fakellm
