// The chat-completions door; see openai_door.hpp.
//
// Decisions where the issue is silent:
//   - `model` "" or "mneme" is model.name; any other name is sent upstream for this
//     request only (the session's compactions keep the summarizer's model);
//   - the answer's usage: prompt_tokens as the upstream reported it, completion_tokens
//     the upstream's in the stateless pass-through, else mneme's estimate of the answer;
//   - a sent transcript that is all stored and ends with an assistant message is
//     answered with that stored message again (an SDK retry after a lost answer), no
//     model call; one ending with user or tool messages that have no answer rolls them
//     back and runs them again (an SDK retry after a failed call);
//   - `user` names the tenant as in the turns API (a user token's own user wins; naming
//     another user is 403); an empty one is the key's owner (gateway.default_user for a new key);
//     a user token on another user's key gets the 404 of an unknown key (no existence oracle);
//   - `developer` messages are system messages; content parts are joined as text (other
//     parts are not stored).
//   - after a continuation (child session or reset) a full-history transcript is matched
//     against the conversation across the sessions of the key (door_conversation.hpp);
//     a branch from before the continuation is matched against the new session alone.
#include "apps/common/api/doors/openai_chat/openai_door.hpp"


#include <nlohmann/json.hpp>
#include <spdlog/sinks/null_sink.h>

#include "apps/common/api/doors/door_answer.hpp"
#include "apps/common/api/doors/door_passthrough.hpp"
#include "apps/common/api/doors/openai_chat/openai_stream.hpp"
#include "apps/common/api/doors/openai_chat/openai_wire.hpp"
#include "apps/common/api/http_status.hpp"
#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "apps/common/api/plumbing/checks.hpp"
#include "apps/common/api/plumbing/idempotency_header.hpp"
#include "messages/llm_errc.hpp"
#include "policies/client_text.hpp"
#include "policies/idempotency.hpp"
#include "policies/openai_errors.hpp"
#include "policies/token_estimate.hpp"
#include "store/os_random.hpp"

namespace mneme::api {

using nlohmann::json;

struct openai_door::shared {
  openai_door_config cfg;
  std::shared_ptr<spdlog::logger> log;
  counters count;
  door_conversations conversations;
  int64_t started_s = 0; // `created` of GET /v1/models

  explicit shared(openai_door_config c)
    : cfg(std::move(c)),
      log(cfg.log ? cfg.log
                  : std::make_shared<spdlog::logger>(
                    "openai", std::make_shared<spdlog::sinks::null_sink_mt>())),
      conversations(cfg.conversation),
      started_s(cfg.clock() / 1000) {}

  // "chatcmpl-" and 128 random bits from the kernel: never repeated, never guessable.
  std::string completion_id() const { return os_random_id("chatcmpl-"); }
};

namespace {

using shared_ptr = std::shared_ptr<openai_door::shared>;
constexpr const char* openai_branch_label = "openai-branch";

// One chat-completions request on its way; the events of its conversation.
struct chat_call final : conversation_events {
  shared_ptr door;
  door_request_ptr r;
  openai_chat_request in;
  std::string key;
  std::string user;
  std::string model;         // the upstream model name
  std::string session_id;    // known before the turn ("" for a new key)
  int64_t rebased = 0;
  bool replayed_by_key = false; // the first answer under the request's Idempotency-Key
  std::shared_ptr<openai_chunk_relay> relay;

  const openai_door_config& cfg() const { return door->cfg; }

  header_list mneme_headers(const std::string& sid, int64_t compactions, bool with_count) const {
    auto h = mneme_answer_headers(sid, compactions, with_count, rebased);
    add_idempotency_headers(h, replayed_by_key, "");
    return h;
  }

  // `upstream_wait`: the model provider's Retry-After (docs/api.md "Retry-After").
  void error(int status, const std::string& code, const std::string& message,
             std::optional<int64_t> upstream_wait = std::nullopt) {
    door->count.errors.fetch_add(1);
    auto kind = openai_error_of(status, code);
    auto body = openai_error_json(message, kind.type, param_of(message), kind.code);
    if (relay && relay->fail(body)) {
      r->streamed();
      return;
    }
    auto headers = mneme_headers(session_id, 0, false);
    add_upstream_retry_after(headers, upstream_wait, kind.status);
    add_idempotency_headers(headers, false, code);
    r->answer(openai_json_response(kind.status, body, std::move(headers)));
  }

  void fail(const caf::error& err) {
    if (r->forward_elsewhere(err)) // refused at the open, before anything was relayed
      return;
    auto status = http_status_of(err);
    if (status >= 500)
      door->log->warn("key={} event=openai_error status={} error={}", log_quoted(key), status,
                      log_quoted(render_error(err)));
    error(status, error_code_of(err), error_message_of(err), upstream_retry_after_of(err));
  }

  openai_answer head() const {
    openai_answer a;
    a.id = door->completion_id();
    a.created = cfg().clock() / 1000;
    a.model = model;
    return a;
  }

  // The answer of the request: a chat.completion, or the end of the stream.
  void respond(openai_answer a, const header_list& headers) {
    if (relay) {
      relay->finish(a);
      r->streamed();
      return;
    }
    r->answer(openai_json_response(200, to_chat_completion(a), headers));
  }

  // --- conversation_events (doors/door_conversation.hpp)

  caf::event_based_actor* actor() const override { return r->actor(); }

  void on_exception(const std::exception& e) override {
    door->log->error("key={} event=exception what={}", log_quoted(key), log_quoted(e.what()));
    error(500, "internal", "internal error");
  }

  void opened(const session_record& s) override {
    session_id = s.id;
    if (relay) // the head goes with the first chunk: what is known before it
      relay->add_header("X-Mneme-Session-Id", session_id);
  }

  void rebasing(const history_plan& plan) override {
    rebased = plan.rebased_rows;
    if (relay)
      relay->add_header("X-Mneme-Rebased", std::to_string(plan.rebased_rows));
    door->log->info("key={} session={} event=openai_rebase rows={} last_kept_id={}",
                    log_quoted(key), session_id, plan.rebased_rows, plan.last_kept_id);
  }

  // The stored answer again (a resent, answered transcript).
  void replay(const message& row) override {
    auto a = head();
    a.content = row.content;
    a.tool_calls = row.tool_calls;
    a.finish_reason = row.tool_calls.empty() ? "stop" : "tool_calls";
    a.usage.completion_tokens = row.token_estimate;
    if (relay) {
      relay->text(a.content);
      for (size_t i = 0; i < a.tool_calls.size(); ++i)
        relay->tool_call(i, a.tool_calls[i].id, a.tool_calls[i].name, a.tool_calls[i].arguments);
    }
    respond(std::move(a), mneme_headers(session_id, 0, true));
  }

  void replay_by_key(const message& row) override {
    replayed_by_key = true;
    head_replay_by_key(relay, session_id, row);
    replay(row);
  }

  void answered(turn_reply& reply) override {
    auto a = head();
    a.content = reply.answer;
    a.tool_calls = reply.tool_calls;
    a.finish_reason = reply.finish_reason;
    a.usage.prompt_tokens = reply.prompt_tokens;
    a.usage.completion_tokens = estimate_text_tokens(reply.answer);
    for (const auto& call : reply.tool_calls)
      a.usage.completion_tokens += estimate_text_tokens(call.arguments);
    respond(std::move(a), mneme_headers(reply.session_id, committed_compactions(reply), true));
  }

  void failed(const caf::error& err) override { fail(err); }
};
using chat_ptr = std::shared_ptr<chat_call>;

void door_stateless(const chat_ptr& c) {
  c->door->count.stateless.fetch_add(1);
  auto req = passthrough_request(c->model, std::move(c->in.messages), c->in.turn, c->relay);
  ask<chat_answer>(c, c->cfg().chat, c->cfg().turn_timeout, llm_call_atom_v, std::move(req))
    .then([c](caf::expected<chat_answer> answer) {
      if (!answer)
        return c->fail(answer.error());
      auto a = c->head();
      a.content = std::move(answer->content);
      a.tool_calls = std::move(answer->tool_calls);
      a.finish_reason = passthrough_finish_reason(*answer);
      a.usage = {answer->prompt_tokens, answer->completion_tokens};
      c->respond(std::move(a), {});
    });
}

// The session's conversation: the sent messages matched, the new ones run as a turn.
void door_session_chat(const chat_ptr& c) {
  conversation_request rq;
  rq.key = c->key;
  rq.user = c->user; // empty: the key's owner, or gateway.default_user
  rq.sent = std::move(c->in.messages);
  rq.turn = std::move(c->in.turn);
  if (c->model != c->cfg().model_name)
    rq.turn.options.model = c->model;
  if (c->relay)
    rq.turn.stream = c->relay;
  rq.messages_field = "messages";
  rq.results_hint = "messages with role 'tool'";
  rq.branch_label = openai_branch_label;
  std::string refused;
  auto idem = idempotency_key_in(c->r->request(), refused);
  if (!idem)
    return c->error(400, "bad_request", refused);
  rq.idempotency_key = std::move(*idem);
  c->door->conversations.run(c->r, c, std::move(rq));
}

} // namespace

openai_door::openai_door(openai_door_config cfg)
  : s_(std::make_shared<shared>(std::move(cfg))) {}

void openai_door::chat(const door_request_ptr& r) {
  auto c = std::make_shared<chat_call>();
  c->door = s_;
  c->r = r;
  guarded(c, [&] {
    auto in = decode_openai_chat(r->request().body);
    if (!in)
      return c->fail(in.error());
    c->in = std::move(*in);
    c->key = door_session_key(r->request(), c->in.metadata_session_id);
    c->model = c->in.model.empty() || c->in.model == "mneme" ? s_->cfg.model_name : c->in.model;
    c->user = c->in.user;
    if (auto no = user_refusal(r->scope(), "field 'user'", c->user)) {
      if (no->status == 403)
        r->refused_for_scope();
      return c->error(no->status, no->code, no->message);
    }
    std::string refused;
    c->key = door_stored_key(r->scope(), c->user, s_->cfg.conversation.default_user, c->key,
                             refused);
    if (!refused.empty())
      return c->error(400, "bad_request", refused);
    if (c->in.stream) {
      auto a = c->head();
      c->relay = std::make_shared<openai_chunk_relay>(
        r->reply_channel(), header_list{}, a, c->in.include_usage,
        s_->cfg.conversation.visibility.builtin_names);
    }
    if (c->key.empty())
      return door_stateless(c);
    door_session_chat(c);
  });
}

void openai_door::models(const door_request_ptr& r) {
  r->answer(openai_json_response(200, models_json(s_->cfg.model_name, s_->started_s)));
}

std::string openai_door::metrics_text() const {
  return door_metrics_text("openai", "POST /v1/chat/completions", s_->count.stateless.load(),
                           s_->count.errors.load(), s_->conversations.counts())
         + door_label_metrics_text("chat", s_->count.stateless.load(), s_->count.errors.load(),
                                   s_->conversations.counts());
}

} // namespace mneme::api
