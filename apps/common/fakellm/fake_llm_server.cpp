// Public API and request handling of the fake LLM server (see fake_llm_server.hpp):
// lifecycle, routing and the chat endpoint. The control API is in control_api.cpp,
// socket work in server_io.cpp.
#include "apps/common/fakellm/fake_llm_server.hpp"

#include <ctime>
#include <future>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "apps/common/fakellm/fake_answer.hpp"
#include "apps/common/fakellm/http_response.hpp"
#include "apps/common/fakellm/messages_responder.hpp"
#include "apps/common/fakellm/messages_wire.hpp"
#include "apps/common/fakellm/server_impl.hpp"
#include "apps/common/fakellm/wire_format.hpp"
#include "caf/make_message.hpp"  // messages/errc.hpp needs it for make_error with context
#include "messages/errc.hpp"
#include "policies/token_estimate.hpp"

namespace mneme::fakellm {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

constexpr auto sync_wait = std::chrono::seconds(2);

std::shared_ptr<spdlog::logger> null_logger() {
  return std::make_shared<spdlog::logger>("fakellm", std::make_shared<spdlog::sinks::null_sink_mt>());
}

} // namespace

response_plan json_plan(int status, std::string body, bool keep_alive) {
  response_plan p;
  p.status = status;
  p.first = http_response(status, "application/json", body, keep_alive);
  p.close_after = !keep_alive;
  return p;
}

// --- impl: shared state

fake_llm_server::impl::impl(fake_llm_options o) : opts(std::move(o)) {
  log = opts.log ? opts.log : null_logger();
}

answer_settings fake_llm_server::impl::settings_locked() const {
  auto settings = opts.answers;
  if (scn.window_tokens) settings.window_tokens = *scn.window_tokens;
  if (scn.answer_tokens) settings.answer_tokens = *scn.answer_tokens;
  if (scn.report_usage) settings.report_usage = *scn.report_usage;
  if (scn.native_compaction_models) settings.native_compaction_models = *scn.native_compaction_models;
  if (scn.tool_call_fraction) settings.tool_call_fraction = *scn.tool_call_fraction;
  if (scn.tool_rounds) settings.tool_rounds = *scn.tool_rounds;
  if (scn.embedding_mode) settings.embedding_mode = *scn.embedding_mode;
  settings.seed = scn.plan.seed;
  return settings;
}

double fake_llm_server::impl::elapsed_locked() const {
  return std::chrono::duration<double>(scenario_now() - scenario_start).count();
}

// --- routing, on the loop thread

response_plan fake_llm_server::impl::route(const http_request& req) {
  auto path = req.path();
  if (path == "/v1/chat/completions" || path == "/chat/completions") {
    if (req.method != "POST")
      return json_plan(405, error_body("use POST", "invalid_request_error", "method_not_allowed"),
                       req.keep_alive);
    return handle_chat(req);
  }
  if (path == "/v1/messages" || path == "/messages") {
    if (req.method != "POST")
      return messages_error_plan(405, "invalid_request_error", "use POST", req.keep_alive);
    return handle_messages(req);
  }
  if (path == "/v1/responses/compact" || path == "/responses/compact") {
    if (req.method != "POST")
      return json_plan(405, error_body("use POST", "invalid_request_error", "method_not_allowed"),
                       req.keep_alive);
    return handle_compaction(req);
  }
  if (path == "/v1/embeddings" || path == "/embeddings") {
    if (req.method != "POST")
      return json_plan(405, error_body("use POST", "invalid_request_error", "method_not_allowed"),
                       req.keep_alive);
    return handle_embeddings(req);
  }
  if (path == "/health" || path.substr(0, 9) == "/control/") {
    auto plan = handle_control(req);
    // A new scenario may start (or end) an outage now, not at the next tick.
    if (req.method == "POST" || req.method == "DELETE") sync_listener();
    return plan;
  }
  {
    std::lock_guard<std::mutex> guard{mtx};
    ++counters.bad_requests;
  }
  return json_plan(404, error_body("no such endpoint: " + std::string(path.substr(0, 200)),
                                   "invalid_request_error", "not_found"),
                   req.keep_alive);
}

fault_decision fake_llm_server::impl::decide_locked(const request_facts& rf,
                                                   std::optional<fault_rule>& rule) {
  auto decision = decide(scn.plan, rf, injected_per_rule);
  if (listener_refused(scn.plan, rf.elapsed_s)) {
    // A request on a connection opened before the outage: the outage resets it.
    decision.answer = fault_kind::refuse;
    decision.answer_rule = -1;
    ++counters.injected[static_cast<size_t>(fault_kind::refuse)];
  } else if (decision.answer) {
    rule = scn.plan.rules[static_cast<size_t>(decision.answer_rule)];
    ++injected_per_rule[static_cast<size_t>(decision.answer_rule)];
    ++counters.injected[static_cast<size_t>(*decision.answer)];
  }
  for (int i : decision.latency_rules)
    ++injected_per_rule[static_cast<size_t>(i)];
  if (!decision.latency_rules.empty())
    ++counters.injected[static_cast<size_t>(fault_kind::latency)];
  return decision;
}

void fake_llm_server::impl::count_orphans_locked(const soak::pairing_audit& audit, uint64_t seq) {
  if (audit.clean())
    return;
  counters.orphan_tool_calls += audit.orphan_calls;
  counters.orphan_tool_results += audit.orphan_results;
  ++counters.requests_with_orphans;
  log->warn("req={} event=tool_pairing_violation orphan_calls={} orphan_results={}", seq,
            audit.orphan_calls, audit.orphan_results);
}

response_plan fake_llm_server::impl::refuse_unreadable(const http_request& req,
                                                       const caf::error& why) {
  {
    std::lock_guard<std::mutex> guard{mtx};
    ++counters.bad_requests;
  }
  return json_plan(400, error_body(render_error(why), "invalid_request_error", "invalid_request"),
                   req.keep_alive);
}

response_plan fake_llm_server::impl::handle_chat(const http_request& req) {
  auto call = parse_chat_call(req.body);
  if (!call)
    return refuse_unreadable(req, call.error());
  return answer_call(req, *call, false);
}

response_plan fake_llm_server::impl::handle_messages(const http_request& req) {
  auto call = parse_messages_call(req.body);
  if (!call) {
    {
      std::lock_guard<std::mutex> guard{mtx};
      ++counters.bad_requests;
    }
    return messages_error_plan(400, "invalid_request_error", render_error(call.error()),
                               req.keep_alive);
  }
  return answer_call(req, *call, true);
}

response_plan fake_llm_server::impl::answer_call(const http_request& req, const chat_call& call_ref,
                                                 bool messages_api) {
  const auto* call = &call_ref;
  chat_facts facts;
  const auto* purpose = req.header("x-mneme-purpose");
  facts.is_summary = purpose != nullptr ? iequals(*purpose, "summary")
                                        : find_summary_target(call->messages).has_value();
  facts.prompt_tokens = estimate_messages_tokens(call->messages);
  for (const auto& t : call->tools) // a provider counts the tool schemas it was sent
    facts.prompt_tokens += t.schema_bytes / latin_chars_per_token;
  facts.body_bytes = static_cast<int64_t>(req.body.size());
  facts.created_s = static_cast<int64_t>(std::time(nullptr));
  facts.keep_alive = req.keep_alive;
  facts.max_tokens = call->max_tokens.value_or(0);
  auto pairing = soak::audit_tool_pairing(call->messages);

  fault_decision decision;
  std::optional<fault_rule> rule;
  answer_settings settings;
  {
    std::lock_guard<std::mutex> guard{mtx};
    facts.seq = next_seq++;
    (facts.is_summary ? counters.summary_requests : counters.chat_requests)++;
    if (messages_api) {
      ++counters.messages_requests;
      counters.last_messages_body = req.body;
      const auto* version = req.header("anthropic-version");
      const auto* beta = req.header("anthropic-beta");
      counters.last_anthropic_version = version ? *version : std::string{};
      counters.last_anthropic_beta = beta ? *beta : std::string{};
    }
    count_orphans_locked(pairing, facts.seq);
    if (!facts.is_summary)
      counters.max_chat_prompt_tokens =
        std::max(counters.max_chat_prompt_tokens, facts.prompt_tokens);
    settings = settings_locked();
    // Server-side compaction works on a scratch copy of this conversation's memory:
    // it only takes effect when the request is answered normally.
    compaction_memory scratch;
    auto key = conversation_key(call->messages);
    bool native = !facts.is_summary && call->compact_threshold &&
                  compacts_natively(call->model, settings.native_compaction_models);
    if (native)
      if (auto it = compacted.find(key); it != compacted.end()) scratch.insert(*it);
    auto step = apply_server_compaction(call->messages, facts.prompt_tokens,
                                        call->compact_threshold, native, scratch);
    facts.prompt_tokens = step.prompt_tokens;
    request_facts rf{facts.seq, call->model, facts.is_summary, facts.body_bytes,
                     facts.prompt_tokens, elapsed_locked()};
    decision = decide_locked(rf, rule);
    bool answered = !decision.answer && facts.prompt_tokens <= settings.window_tokens;
    if (native && answered) {
      if (auto it = scratch.find(key); it != scratch.end()) compacted[key] = it->second;
      else compacted.erase(key);
      if (step.compacted) {
        ++counters.server_compactions;
        facts.server_compacted = true;
        facts.server_compacted_tokens_after = step.tokens_after;
      }
    }
  }
  fault_rule refuse_rule;
  refuse_rule.kind = fault_kind::refuse;
  const fault_rule* rule_ptr = rule ? &*rule : (decision.answer ? &refuse_rule : nullptr);
  auto plan = messages_api ? plan_messages_response(*call, facts, decision, rule_ptr, settings)
                           : plan_chat_response(*call, facts, decision, rule_ptr, settings);
  if (plan.window_overflow) {
    std::lock_guard<std::mutex> guard{mtx};
    ++counters.window_overflows;
  }
  log->debug("req={} event=chat wire={} purpose={} model={} prompt_tokens={} fault={} delay_ms={} status={} "
             "server_compacted={}",
             facts.seq, messages_api ? "messages" : "chat_completions",
             facts.is_summary ? "summary" : "chat", call->model, facts.prompt_tokens,
             decision.answer ? to_string(*decision.answer) : "none", decision.delay_ms, plan.status,
             facts.server_compacted);
  return plan;
}

// --- public API

fake_llm_server::fake_llm_server(fake_llm_options options)
  : impl_(std::make_unique<impl>(std::move(options))) {
}

fake_llm_server::~fake_llm_server() {
  stop();
}

caf::expected<uint16_t> fake_llm_server::start() {
  auto& d = *impl_;
  {
    std::lock_guard<std::mutex> guard{d.mtx};
    if (d.started) return caf::make_error(errc::bad_request, "the fake LLM server was already started");
    if (!d.loop.valid()) return caf::make_error(errc::internal, "epoll/eventfd could not be created");
    d.started = true;
    d.scenario_start = d.scenario_now();
  }
  if (auto err = d.open_listener()) {
    std::lock_guard<std::mutex> guard{d.mtx};
    d.stopped = true;
    return err;
  }
  d.loop.schedule(std::chrono::milliseconds(0), [&d] { d.tick_listener(); });
  d.thread = std::thread([&d] { d.loop.run(); });
  d.log->info("port={} event=started host={}", d.bound_port.load(), d.opts.host);
  return d.bound_port.load();
}

void fake_llm_server::stop() {
  auto& d = *impl_;
  {
    std::lock_guard<std::mutex> guard{d.mtx};
    if (!d.started || d.stopped) return;
    d.stopped = true;
  }
  d.loop.stop();
  if (d.thread.joinable()) d.thread.join();
  // The loop thread is gone: its state is ours now.
  while (!d.conns.empty()) d.close_connection(*d.conns.begin()->second, false);
  d.close_listener();
  d.log->info("port={} event=stopped", d.bound_port.load());
}

uint16_t fake_llm_server::port() const {
  return impl_->bound_port.load();
}

std::string fake_llm_server::base_url() const {
  return "http://" + impl_->opts.host + ":" + std::to_string(impl_->bound_port.load());
}

void fake_llm_server::impl::sync_listener_from_outside() {
  {
    std::lock_guard<std::mutex> guard{mtx};
    if (!started || stopped) return;
  }
  auto done = std::make_shared<std::promise<void>>();
  auto applied = done->get_future();
  loop.post([this, done] {
    sync_listener();
    done->set_value();
  });
  applied.wait_for(sync_wait);  // bounded: a concurrent stop() may drop the post
}

caf::error fake_llm_server::set_scenario(scenario s) {
  for (size_t i = 0; i < s.plan.rules.size(); ++i)
    if (auto why = validate(s.plan.rules[i]); !why.empty())
      return caf::make_error(errc::config_invalid,
                             "scenario.faults[" + std::to_string(i) + "]: " + why);
  {
    std::lock_guard<std::mutex> guard{impl_->mtx};
    impl_->scn = std::move(s);
    impl_->injected_per_rule.assign(impl_->scn.plan.rules.size(), 0);
    impl_->scenario_start = impl_->scenario_now();
  }
  impl_->sync_listener_from_outside();
  return {};
}

void fake_llm_server::clear_faults() {
  {
    std::lock_guard<std::mutex> guard{impl_->mtx};
    impl_->scn.plan.rules.clear();
    impl_->injected_per_rule.clear();
    impl_->scenario_start = impl_->scenario_now();
  }
  impl_->sync_listener_from_outside();
}

scenario fake_llm_server::current_scenario() const {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  return impl_->scn;
}

fake_llm_stats fake_llm_server::stats() const {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  return impl_->counters;
}

int fake_llm_server::thread_count() const {
  std::lock_guard<std::mutex> guard{impl_->mtx};
  return impl_->started && !impl_->stopped ? 1 : 0;
}

} // namespace mneme::fakellm
