// The fake LLM's answers in Anthropic's Messages format; see messages_responder.hpp.
#include "apps/common/fakellm/messages_responder.hpp"

#include <cassert>
#include <string>

#include "apps/common/fakellm/http_response.hpp"
#include "apps/common/fakellm/messages_wire.hpp"

namespace mneme::fakellm {

namespace {

std::string prompt_too_long_message(int64_t prompt_tokens, int64_t window_tokens) {
  return "prompt is too long: " + std::to_string(prompt_tokens) + " tokens > "
         + std::to_string(window_tokens) + " maximum";
}

// The failure a fault (or the window) dictates, nullopt = answer with a body.
std::optional<response_plan> messages_failure(const chat_facts& facts,
                                              const fault_decision& decision,
                                              const fault_rule* rule,
                                              const answer_settings& settings) {
  assert(decision.answer.has_value() == (rule != nullptr));
  auto fault = decision.answer;
  bool keep = facts.keep_alive;
  response_plan p;
  if (fault == fault_kind::refuse || fault == fault_kind::reset) {
    p.reset = true;
    return p;
  }
  if (fault == fault_kind::silence) {
    p.silence = true;
    return p;
  }
  if (fault == fault_kind::unavailable) {
    p = messages_error_plan(529, "overloaded_error", "Overloaded", keep);
  } else if (fault == fault_kind::payload_too_large) {
    p = messages_error_plan(413, "request_too_large",
                            "Request exceeds the maximum allowed number of bytes ("
                              + std::to_string(rule->max_body_bytes) + ").",
                            keep);
  } else if (fault == fault_kind::long_context_429) {
    p = messages_error_plan(429, "rate_limit_error",
                            "Extra usage is required for long context requests.", keep);
  } else if (fault == fault_kind::rate_limit_429) {
    p = messages_error_plan(429, "rate_limit_error",
                            "This request would exceed the rate limit for your organization "
                            "of 50 requests per minute.",
                            keep);
  } else if (fault == fault_kind::overflow_400) {
    p = messages_error_plan(400, "invalid_request_error",
                            prompt_too_long_message(facts.prompt_tokens, settings.window_tokens), keep);
  } else if (fault == fault_kind::output_too_large_400) {
    auto max = facts.max_tokens > 0 ? facts.max_tokens : settings.window_tokens;
    p = messages_error_plan(400, "invalid_request_error",
                            "input length and `max_tokens` exceed context limit: "
                              + std::to_string(facts.prompt_tokens) + " + " + std::to_string(max)
                              + " > " + std::to_string(settings.window_tokens)
                              + ", decrease input length or `max_tokens` and try again",
                            keep);
  } else if (!fault && facts.prompt_tokens > settings.window_tokens) {
    p = messages_error_plan(400, "invalid_request_error",
                            prompt_too_long_message(facts.prompt_tokens, settings.window_tokens), keep);
    p.window_overflow = true;
  } else {
    return std::nullopt;
  }
  if (rule && !rule->retry_after.empty())
    p.first = with_header(std::move(p.first), "Retry-After", rule->retry_after);
  p.delay_ms = decision.delay_ms;
  return p;
}

} // namespace

response_plan messages_error_plan(int status, std::string_view type, std::string_view message,
                                  bool keep_alive) {
  response_plan p;
  p.status = status;
  p.first = http_response(status, "application/json", messages_error_body(type, message),
                          keep_alive);
  p.close_after = !keep_alive;
  return p;
}

response_plan plan_messages_response(const chat_call& call, const chat_facts& facts,
                                     const fault_decision& decision, const fault_rule* rule,
                                     const answer_settings& settings) {
  if (auto failed = messages_failure(facts, decision, rule, settings))
    return std::move(*failed);
  auto fault = decision.answer;
  auto c = build_completion(call, facts, fault, settings);
  c.id = "fake_" + std::to_string(facts.seq);
  response_plan p;
  if (call.stream) {
    auto events = messages_events(c, settings.stream_piece_bytes);
    if (fault == fault_kind::malformed_json)
      events.insert(events.begin() + 1, "event: content_block_start\ndata: {\"type\": \n\n");
    p = plan_stream_answer(events, facts, fault, rule);
  } else {
    p = plan_json_answer(messages_body(c), facts, fault, rule);
  }
  p.delay_ms = decision.delay_ms;
  return p;
}

} // namespace mneme::fakellm
