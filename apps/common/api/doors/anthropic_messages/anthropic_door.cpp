// The Anthropic Messages door; see anthropic_door.hpp.
//
// Decisions where the issue is silent:
//   - `model` "", "mneme" or a Claude model name ("claude-...": what Anthropic's clients
//     send by default) is model.name; any other name is sent upstream for this request
//     only, as on the chat door; the answer names the model that answered;
//   - the tenant is the token's user (a user token) or the key's owner
//     (gateway.default_user for a new key); metadata.user_id is Anthropic's end-user id
//     for abuse reports, passed to the upstream as OpenAI's `user`, never a tenant;
//   - usage: input_tokens as the upstream reported them (mneme's estimate of what it
//     sent when the upstream reports none), output_tokens mneme's estimate of the answer
//     (the upstream's in the stateless pass-through);
//   - a resent transcript that is all stored and ends with an assistant message is
//     answered with that stored message again (an SDK retry after a lost answer), as on
//     the chat door;
//   - count_tokens estimates what mneme would send for the request: with a session key
//     naming a session, the session's live context plus the sent messages it does not
//     hold yet (as the history matching plans them from the session's rows: all of a
//     stateful request, the unseen suffix of a full history), plus the tools; else the
//     request's own messages and tools.
#include "apps/common/api/doors/anthropic_messages/anthropic_door.hpp"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/null_sink.h>

#include "apps/common/api/doors/anthropic_messages/anthropic_stream.hpp"
#include "apps/common/api/doors/door_answer.hpp"
#include "apps/common/api/doors/door_passthrough.hpp"
#include "apps/common/api/doors/anthropic_messages/anthropic_wire.hpp"
#include "apps/common/api/http_status.hpp"
#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "apps/common/api/plumbing/checks.hpp"
#include "apps/common/api/plumbing/idempotency_header.hpp"
#include "messages/llm_errc.hpp"
#include "policies/anthropic_errors.hpp"
#include "policies/client_text.hpp"
#include "policies/idempotency.hpp"
#include "policies/key_namespace.hpp"
#include "policies/token_estimate.hpp"
#include "store/os_random.hpp"

namespace mneme::api {

using nlohmann::json;

struct anthropic_door::shared {
  anthropic_door_config cfg;
  std::shared_ptr<spdlog::logger> log;
  counters count;
  door_conversations conversations;

  explicit shared(anthropic_door_config c)
    : cfg(std::move(c)),
      log(cfg.log ? cfg.log
                  : std::make_shared<spdlog::logger>(
                    "anthropic", std::make_shared<spdlog::sinks::null_sink_mt>())),
      conversations(cfg.conversation) {}

  // "msg_" and 128 random bits from the kernel: never repeated, never guessable.
  std::string message_id() const { return os_random_id("msg_"); }

  std::string upstream_model(const std::string& asked) const {
    if (asked.empty() || asked == "mneme" || asked.rfind("claude", 0) == 0)
      return cfg.model_name;
    return asked;
  }
};

namespace {

using anthropic_shared = std::shared_ptr<anthropic_door::shared>;
constexpr const char* anthropic_branch_label = "anthropic-branch";

http_response anthropic_json(int status, const std::string& body, header_list headers = {}) {
  return http_response{status, "application/json", body, std::move(headers), false};
}

std::string anthropic_dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

int64_t anthropic_output_tokens(const std::string& text, const std::vector<tool_call>& calls) {
  int64_t n = estimate_text_tokens(text);
  for (const auto& call : calls)
    n += estimate_text_tokens(call.arguments);
  return n;
}

// What the request named and mneme did not use: its ignored fields, the anthropic-beta
// header (unless an upstream speaking the Messages API gets it), the beta query
// parameter ("" = nothing).
std::string ignored_of(const http_request& req, const std::vector<std::string>& fields,
                       bool beta_passed) {
  std::string out;
  auto add = [&out](const std::string& name) { out += (out.empty() ? "" : ", ") + name; };
  for (const auto& f : fields)
    add(f);
  if (!beta_passed && !req.header("anthropic-beta").empty())
    add("anthropic-beta");
  auto q = req.target.find('?');
  if (q != std::string::npos) {
    auto query = "&" + req.target.substr(q + 1);
    if (query.find("&beta=") != std::string::npos)
      add("beta");
  }
  return out;
}

// One Messages request on its way; the events of its conversation.
struct messages_call final : conversation_events {
  anthropic_shared door;
  door_request_ptr r;
  anthropic_request in;
  std::string key;
  std::string user;
  std::string model;      // the upstream model name
  std::string session_id; // known before the turn ("" for a new key)
  std::string ignored;    // X-Mneme-Ignored
  int64_t sent_tokens = 0; // mneme's estimate of the sent messages (usage fallback)
  int64_t rebased = 0;
  bool replayed_by_key = false; // the first answer under the request's Idempotency-Key
  std::shared_ptr<anthropic_event_relay> relay;

  header_list mneme_headers(const std::string& sid, int64_t compactions, bool with_count) const {
    auto h = mneme_answer_headers(sid, compactions, with_count, rebased);
    if (!ignored.empty())
      h.emplace_back("X-Mneme-Ignored", ignored);
    add_idempotency_headers(h, replayed_by_key, "");
    return h;
  }

  // `upstream_wait`: the model provider's Retry-After (docs/api.md "Retry-After").
  void error(int status, const std::string& code, const std::string& message,
             std::optional<int64_t> upstream_wait = std::nullopt) {
    door->count.errors.fetch_add(1);
    auto kind = anthropic_error_of(status, code);
    auto text = kind.prompt_too_long ? "prompt is too long: " + message : message;
    auto body = anthropic_error_json(kind.type, text);
    if (relay && relay->fail(body)) {
      r->streamed();
      return;
    }
    auto headers = mneme_headers(session_id, 0, false);
    add_upstream_retry_after(headers, upstream_wait, kind.status);
    add_idempotency_headers(headers, false, code);
    r->answer(anthropic_json(kind.status, anthropic_dump(body), std::move(headers)));
  }

  void fail(const caf::error& err) {
    if (r->forward_elsewhere(err))
      return;
    auto status = http_status_of(err);
    if (status >= 500)
      door->log->warn("key={} event=anthropic_error status={} error={}", log_quoted(key), status,
                      log_quoted(render_error(err)));
    error(status, error_code_of(err), error_message_of(err), upstream_retry_after_of(err));
  }

  anthropic_answer head() const {
    anthropic_answer a;
    a.id = door->message_id();
    a.model = model;
    return a;
  }

  void respond(const anthropic_answer& a, const header_list& headers) {
    if (relay) {
      relay->finish(a);
      r->streamed();
      return;
    }
    r->answer(anthropic_json(200, to_anthropic_message(a).dump(-1, ' ', false,
                                                               json::error_handler_t::replace),
                             headers));
  }

  // --- conversation_events (doors/door_conversation.hpp)

  caf::event_based_actor* actor() const override { return r->actor(); }

  void on_exception(const std::exception& e) override {
    door->log->error("key={} event=exception what={}", log_quoted(key), log_quoted(e.what()));
    error(500, "internal", "internal error");
  }

  void opened(const session_record& s) override {
    session_id = s.id;
    if (relay)
      relay->add_header("X-Mneme-Session-Id", session_id);
  }

  void rebasing(const history_plan& plan) override {
    rebased = plan.rebased_rows;
    if (relay)
      relay->add_header("X-Mneme-Rebased", std::to_string(plan.rebased_rows));
    door->log->info("key={} session={} event=anthropic_rebase rows={} last_kept_id={}",
                    log_quoted(key), session_id, plan.rebased_rows, plan.last_kept_id);
  }

  void replay(const message& row) override {
    auto a = head();
    a.text = row.content;
    a.tool_calls = row.tool_calls;
    a.stop_reason = row.tool_calls.empty() ? "end_turn" : "tool_use";
    a.usage.input_tokens = sent_tokens;
    a.usage.output_tokens = row.token_estimate;
    respond(a, mneme_headers(session_id, 0, true));
  }

  void replay_by_key(const message& row) override {
    replayed_by_key = true;
    head_replay_by_key(relay, session_id, row);
    replay(row);
  }

  void answered(turn_reply& reply) override {
    auto a = head();
    a.text = reply.answer;
    a.tool_calls = reply.tool_calls;
    a.stop_reason = anthropic_stop_reason(reply.finish_reason, reply.stop_sequence);
    a.stop_sequence = reply.stop_sequence;
    a.usage.input_tokens = reply.prompt_tokens > 0 ? reply.prompt_tokens : reply.live_tokens;
    a.usage.output_tokens = anthropic_output_tokens(reply.answer, reply.tool_calls);
    respond(a, mneme_headers(reply.session_id, committed_compactions(reply), true));
  }

  void failed(const caf::error& err) override { fail(err); }
};
using messages_ptr = std::shared_ptr<messages_call>;

void anthropic_stateless(const messages_ptr& c) {
  c->door->count.stateless.fetch_add(1);
  auto req = passthrough_request(c->model, std::move(c->in.messages), c->in.turn, c->relay);
  ask<chat_answer>(c, c->door->cfg.chat, c->door->cfg.turn_timeout, llm_call_atom_v,
                   std::move(req))
    .then([c](caf::expected<chat_answer> answer) {
      if (!answer)
        return c->fail(answer.error());
      auto a = c->head();
      a.text = std::move(answer->content);
      a.tool_calls = std::move(answer->tool_calls);
      a.stop_reason = anthropic_stop_reason(!a.tool_calls.empty() ? "tool_calls"
                                                                   : answer->finish_reason,
                                            answer->stop_sequence);
      a.stop_sequence = answer->stop_sequence;
      a.usage.input_tokens = answer->prompt_tokens > 0 ? answer->prompt_tokens : c->sent_tokens;
      a.usage.output_tokens = answer->completion_tokens > 0
                                ? answer->completion_tokens
                                : anthropic_output_tokens(a.text, a.tool_calls);
      c->respond(a, c->mneme_headers("", 0, false));
    });
}

void anthropic_session_messages(const messages_ptr& c) {
  conversation_request rq;
  rq.key = c->key;
  rq.user = c->user;
  rq.sent = std::move(c->in.messages);
  rq.turn = std::move(c->in.turn);
  if (c->model != c->door->cfg.model_name)
    rq.turn.options.model = c->model;
  if (c->relay)
    rq.turn.stream = c->relay;
  rq.messages_field = "messages";
  rq.results_hint = "tool_result blocks in a user message";
  rq.branch_label = anthropic_branch_label;
  std::string refused;
  auto idem = idempotency_key_in(c->r->request(), refused);
  if (!idem)
    return c->error(400, "bad_request", refused);
  rq.idempotency_key = std::move(*idem);
  c->door->conversations.run(c->r, c, std::move(rq));
}

// The request decoded, its user checked against the token; false when refused (answered).
bool anthropic_admit(const messages_ptr& c, anthropic_body kind) {
  auto in = decode_anthropic_request(c->r->request().body, kind,
                                     c->door->cfg.upstream_messages_api);
  if (!in) {
    c->fail(in.error());
    return false;
  }
  c->in = std::move(*in);
  bool messages_api = c->door->cfg.upstream_messages_api;
  if (messages_api)
    add_upstream_passthrough(c->in, c->r->request().header("anthropic-version"),
                             c->r->request().header("anthropic-beta"));
  c->ignored = ignored_of(c->r->request(), c->in.ignored, messages_api);
  c->key = door_session_key(c->r->request(), "");
  c->model = c->door->upstream_model(c->in.model);
  c->sent_tokens = estimate_messages_tokens(c->in.messages);
  if (auto no = user_refusal(c->r->scope(), "the token's user", c->user)) {
    if (no->status == 403)
      c->r->refused_for_scope();
    c->error(no->status, no->code, no->message);
    return false;
  }
  std::string refused;
  c->key = door_stored_key(c->r->scope(), c->user, c->door->cfg.conversation.default_user,
                           c->key, refused);
  if (!refused.empty()) {
    c->error(400, "bad_request", refused);
    return false;
  }
  return true;
}

// count_tokens of a key's session: `base` (its live context and the tools) plus the sent
// messages a conversation would add — those the plan from the session's rows
// (policies/history_match.hpp) finds new.
template <class Answer>
void anthropic_count_fresh(const messages_ptr& c, int64_t base, Answer answer) {
  const auto& conv = c->door->cfg.conversation;
  ask<std::vector<message>>(c, conv.storage, conv.read_timeout, st_range_atom_v, c->session_id,
                            int64_t{1}, std::numeric_limits<int64_t>::max())
    .then([c, base, answer](caf::expected<std::vector<message>> rows) {
      if (!rows)
        return c->fail(rows.error());
      int64_t hidden = 0;
      const auto& sent = c->in.messages;
      auto visible = visible_rows(*rows, c->door->cfg.conversation.visibility, &hidden);
      auto plan = plan_from_rows(sent, style_of(sent), visible, hidden);
      int64_t fresh = 0;
      for (size_t i = std::min(plan.known, sent.size()); i < sent.size(); ++i)
        fresh += estimate_message_tokens(sent[i]);
      answer(base + fresh);
    });
}

} // namespace

http_response anthropic_error_response(int status, const std::string& code,
                                       const std::string& message) {
  auto kind = anthropic_error_of(status, code);
  auto text = kind.prompt_too_long ? "prompt is too long: " + message : message;
  return anthropic_json(kind.status, anthropic_dump(anthropic_error_json(kind.type, text)));
}

anthropic_door::anthropic_door(anthropic_door_config cfg)
  : s_(std::make_shared<shared>(std::move(cfg))) {}

void anthropic_door::messages(const door_request_ptr& r) {
  auto c = std::make_shared<messages_call>();
  c->door = s_;
  c->r = r;
  guarded(c, [&] {
    if (!anthropic_admit(c, anthropic_body::messages))
      return;
    if (c->in.stream) {
      c->relay = std::make_shared<anthropic_event_relay>(
        r->reply_channel(), c->head(), s_->cfg.conversation.visibility.builtin_names);
      if (!c->ignored.empty())
        c->relay->add_header("X-Mneme-Ignored", c->ignored);
    }
    if (c->key.empty())
      return anthropic_stateless(c);
    anthropic_session_messages(c);
  });
}

void anthropic_door::count_tokens(const door_request_ptr& r) {
  auto c = std::make_shared<messages_call>();
  c->door = s_;
  c->r = r;
  guarded(c, [&] {
    if (!anthropic_admit(c, anthropic_body::count_tokens))
      return;
    s_->count.counted.fetch_add(1);
    auto tools = c->in.turn.set_tools ? estimate_text_tokens(c->in.turn.tools_json) : 0;
    auto request_tokens = c->sent_tokens + tools;
    auto answer = [c](int64_t n) {
      c->r->answer(anthropic_json(200, anthropic_dump(json{{"input_tokens", n}}),
                                  c->mneme_headers(c->session_id, 0, false)));
    };
    if (c->key.empty())
      return answer(request_tokens);
    ask<session_snapshot>(c, s_->cfg.conversation.gateway, s_->cfg.conversation.read_timeout,
                          gw_state_atom_v, c->key, reachable_owner(c->r->scope()))
      .then([c, answer, tools, request_tokens](caf::expected<session_snapshot> snap) {
        if (!snap) {
          if (snap.error() == errc::not_found) // no session yet: the request is all of it
            return answer(request_tokens);
          if (!hidden_from(c->r->scope(), snap.error()))
            return c->fail(snap.error());
        }
        if (!snap || (!c->user.empty() && c->user != snap->record.user_id)) {
          c->r->refused_for_scope(); // a user token on another user's key: unknown
          return c->error(404, "not_found", "no session '" + visible_key(c->key) + "'");
        }
        c->session_id = snap->record.id;
        anthropic_count_fresh(c, snap->live_tokens + tools, answer);
      });
  });
}

std::string anthropic_door::metrics_text() const {
  auto out = door_metrics_text("anthropic", "POST /v1/messages", s_->count.stateless.load(),
                               s_->count.errors.load(), s_->conversations.counts());
  out += "# HELP mneme_anthropic_count_tokens_total Requests of POST /v1/messages/count_tokens\n"
         "# TYPE mneme_anthropic_count_tokens_total counter\n"
         "mneme_anthropic_count_tokens_total "
         + std::to_string(s_->count.counted.load()) + "\n";
  out += door_label_metrics_text("anthropic", s_->count.stateless.load(), s_->count.errors.load(),
                                 s_->conversations.counts());
  return out;
}

} // namespace mneme::api
