// The fake LLM's embeddings endpoint, POST /v1/embeddings (embeddings_wire.hpp for the
// shape, policies/fake_embedding.hpp for the vectors). Runs on the loop thread; counts
// and decides faults under the server's mutex as the chat endpoint does, with purpose
// `embedding`: every fault of the plan applies (transport, status, body faults; an
// empty_content or reasoning_only fault answers "data": []).
#include <ctime>
#include <limits>

#include <spdlog/spdlog.h>

#include "apps/common/fakellm/embeddings_wire.hpp"
#include "apps/common/fakellm/server_impl.hpp"
#include "apps/common/fakellm/wire_format.hpp"
#include "caf/make_message.hpp"  // messages/errc.hpp needs it for make_error with context
#include "messages/errc.hpp"
#include "policies/token_estimate.hpp"

namespace mneme::fakellm {

response_plan fake_llm_server::impl::handle_embeddings(const http_request& req) {
  auto call = parse_embeddings_call(req.body);
  if (!call)
    return refuse_unreadable(req, call.error());
  chat_facts facts;
  for (const auto& text : call->input)
    facts.prompt_tokens += estimate_text_tokens(text);
  facts.body_bytes = static_cast<int64_t>(req.body.size());
  facts.created_s = static_cast<int64_t>(std::time(nullptr));
  facts.keep_alive = req.keep_alive;
  fault_decision decision;
  std::optional<fault_rule> rule;
  answer_settings settings;
  {
    std::lock_guard<std::mutex> guard{mtx};
    facts.seq = next_seq++;
    ++counters.embedding_requests;
    counters.embedded_inputs += static_cast<int64_t>(call->input.size());
    settings = settings_locked();
    request_facts rf{facts.seq, call->model, false, facts.body_bytes, facts.prompt_tokens,
                     elapsed_locked()};
    rf.is_embedding = true;
    decision = decide_locked(rf, rule);
  }
  fault_rule refuse_rule;
  refuse_rule.kind = fault_kind::refuse;
  const fault_rule* rule_ptr = rule ? &*rule : (decision.answer ? &refuse_rule : nullptr);
  // The window bounds chat prompts, not embedding inputs: only faults fail this call.
  settings.window_tokens = std::numeric_limits<int64_t>::max();
  response_plan plan;
  if (auto failed = plan_failure(facts, decision, rule_ptr, settings)) {
    plan = std::move(*failed);
  } else {
    const bool empty = decision.answer == fault_kind::empty_content ||
                       decision.answer == fault_kind::reasoning_only;
    plan = plan_json_answer(embeddings_body(*call, settings.embedding_mode, empty), facts,
                            decision.answer, rule_ptr);
    plan.delay_ms = decision.delay_ms;
  }
  log->debug("req={} event=embeddings model={} inputs={} dims={} fault={} delay_ms={} status={}",
             facts.seq, call->model, call->input.size(), call->dimensions,
             decision.answer ? to_string(*decision.answer) : "none", decision.delay_ms,
             plan.status);
  return plan;
}

} // namespace mneme::fakellm
