// The compaction endpoint's response plans; see compaction_responder.hpp.
#include "apps/common/fakellm/compaction_responder.hpp"

#include <algorithm>

#include "apps/common/fakellm/fake_answer.hpp"
#include "policies/token_estimate.hpp"

namespace mneme::fakellm {

std::string compaction_text(const compaction_call& call, const answer_settings& settings) {
  auto target = find_summary_target(call.instructions)
                  .value_or(settings.default_summary_tokens);
  return fake_summary(call.input, std::max(target, min_summary_target_tokens));
}

response_plan plan_compaction_response(const compaction_call& call, const chat_facts& facts,
                                       const fault_decision& decision, const fault_rule* rule,
                                       const answer_settings& settings) {
  if (auto failed = plan_failure(facts, decision, rule, settings)) return std::move(*failed);
  auto fault = decision.answer;
  compaction_result r;
  r.id = "resp-fake-" + std::to_string(facts.seq);
  r.model = call.model;
  r.created = facts.created_s;
  r.input_tokens = facts.prompt_tokens;
  if (fault != fault_kind::empty_content && fault != fault_kind::reasoning_only)
    r.summary = compaction_text(call, settings);
  r.output_tokens = estimate_text_tokens(r.summary);
  auto p = plan_json_answer(compaction_body(r), facts, fault, rule);
  p.delay_ms = decision.delay_ms;
  return p;
}

} // namespace mneme::fakellm
