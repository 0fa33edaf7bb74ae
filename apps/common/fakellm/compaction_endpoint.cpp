// The fake LLM's compaction endpoint, POST /v1/responses/compact (see
// compaction_wire.hpp for the shape, compaction_responder.hpp for the answer).
// Runs on the loop thread; counts and decides faults under the server's mutex
// exactly as the chat endpoint does, with purpose `compaction`.
#include <ctime>

#include <spdlog/spdlog.h>

#include "apps/common/fakellm/compaction_responder.hpp"
#include "apps/common/fakellm/server_impl.hpp"
#include "apps/common/fakellm/wire_format.hpp"
#include "caf/make_message.hpp"  // messages/errc.hpp needs it for make_error with context
#include "messages/errc.hpp"
#include "policies/token_estimate.hpp"

namespace mneme::fakellm {

response_plan fake_llm_server::impl::handle_compaction(const http_request& req) {
  auto call = parse_compaction_call(req.body);
  if (!call)
    return refuse_unreadable(req, call.error());
  chat_facts facts;
  facts.prompt_tokens = estimate_messages_tokens(call->input);
  facts.body_bytes = static_cast<int64_t>(req.body.size());
  facts.created_s = static_cast<int64_t>(std::time(nullptr));
  facts.keep_alive = req.keep_alive;
  fault_decision decision;
  std::optional<fault_rule> rule;
  answer_settings settings;
  {
    std::lock_guard<std::mutex> guard{mtx};
    facts.seq = next_seq++;
    ++counters.compaction_requests;
    settings = settings_locked();
    request_facts rf{facts.seq, call->model, false, facts.body_bytes, facts.prompt_tokens,
                     elapsed_locked()};
    rf.is_compaction = true;
    decision = decide_locked(rf, rule);
  }
  fault_rule refuse_rule;
  refuse_rule.kind = fault_kind::refuse;
  const fault_rule* rule_ptr = rule ? &*rule : (decision.answer ? &refuse_rule : nullptr);
  auto plan = plan_compaction_response(*call, facts, decision, rule_ptr, settings);
  if (plan.window_overflow) {
    std::lock_guard<std::mutex> guard{mtx};
    ++counters.window_overflows;
  }
  log->debug("req={} event=compaction model={} input_tokens={} fault={} delay_ms={} status={}",
             facts.seq, call->model, facts.prompt_tokens,
             decision.answer ? to_string(*decision.answer) : "none", decision.delay_ms, plan.status);
  return plan;
}

} // namespace mneme::fakellm
