// POST /v1/responses/compact of the Responses door (docs/api.md "Responses door",
// "Compaction"): compacts a chain's session now and answers its new window as items
// (responses_compact_wire.hpp), mneme's readable summary in the compaction item.
//
//   session ─► previous_response_id: that response's session key (the chain); else a
//              session header (responses_header_key), else prompt_cache_key; none is a
//              400 naming the fields (there is no stateless compaction: the summary is
//              mneme's row)
//   input ───► when sent: matched and stored as on POST /v1/responses without a model
//              call (door_conversation's store_only): with previous_response_id only
//              what is new, else the whole transcript (instructions first), a resent
//              window included
//   compact ─► the key's session compacted (gw_command_atom, T12 as POST
//              /v1/sessions/{key}/compact), then its live context as the window
//              (policies/history_match.hpp client_window)
// Decisions where the issue is silent:
//   - a compaction with nothing to compact (too few rows) answers the window as it is,
//     without a compaction item;
//   - previous_response_id names the chain: rows after that response are not rolled back
//     (a branch is POST /v1/responses' to make);
//   - the answer's id is new and not stored (GET /v1/responses/{id} does not know it);
//     usage: input_tokens the live context before, output_tokens the summary written.
#include <nlohmann/json.hpp>

#include "apps/common/api/doors/openai_responses/responses_compact_wire.hpp"
#include "apps/common/api/doors/openai_responses/responses_door_state.hpp"
#include "apps/common/api/doors/openai_responses/responses_wire.hpp"
#include "apps/common/api/doors/openai_shape.hpp"
#include "apps/common/api/http_status.hpp"
#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "apps/common/api/plumbing/checks.hpp"
#include "apps/common/api/plumbing/request_decoder.hpp"
#include "messages/llm_errc.hpp"
#include "policies/client_text.hpp"
#include "policies/openai_errors.hpp"
#include "store/os_random.hpp"

namespace mneme::api {

using nlohmann::json;

namespace {

struct compact_request {
  std::vector<message> input; // empty when not sent
  std::string instructions;
  std::string previous_response_id;
  std::string prompt_cache_key;
  std::string user;
};

caf::expected<compact_request> decode_compact_request(std::string_view body) {
  compact_request out;
  auto parsed = parse_object(body);
  if (!parsed)
    return parsed.error();
  const json& j = *parsed;
  for (auto [name, field] : {std::pair{"instructions", &out.instructions},
                             std::pair{"previous_response_id", &out.previous_response_id},
                             std::pair{"prompt_cache_key", &out.prompt_cache_key},
                             std::pair{"user", &out.user}}) {
    auto it = j.find(name);
    if (it == j.end() || it->is_null())
      continue;
    if (!it->is_string())
      return caf::make_error(errc::bad_request, std::string{"field '"} + name
                                                  + "' must be a string, not " + it->type_name());
    *field = it->get<std::string>();
  }
  if (auto it = j.find("input"); it != j.end() && !it->is_null()) {
    auto items = decode_response_items(*it, "input");
    if (!items)
      return items.error();
    out.input = std::move(*items);
  }
  return out;
}

// One POST /v1/responses/compact on its way; the events of its input's conversation.
struct compact_call final : conversation_events, std::enable_shared_from_this<compact_call> {
  std::shared_ptr<responses_door::shared> door;
  door_request_ptr r;
  compact_request in;
  std::string key;
  compacted_answer out;

  const responses_door_config& cfg() const { return door->cfg; }

  // `upstream_wait`: the model provider's Retry-After (docs/api.md "Retry-After").
  void error(int status, const std::string& code, const std::string& message,
             std::optional<int64_t> upstream_wait = std::nullopt) {
    door->count.errors.fetch_add(1);
    header_list headers;
    add_upstream_retry_after(headers, upstream_wait, openai_error_of(status, code).status);
    r->answer(openai_error_response(status, code, message, std::move(headers)));
  }

  void fail(const caf::error& refusal) {
    if (r->forward_elsewhere(refusal))
      return;
    if (hidden_from(r->scope(), refusal))
      r->refused_for_scope();
    auto err = as_seen_by(r->scope(), refusal, key);
    auto status = http_status_of(err);
    if (status >= 500)
      door->log->warn("key={} event=responses_compact_error status={} error={}", log_quoted(key),
                      status, log_quoted(render_error(err)));
    error(status, error_code_of(err), error_message_of(err), upstream_retry_after_of(err));
  }

  caf::event_based_actor* actor() const override { return r->actor(); }
  void on_exception(const std::exception& e) override {
    door->log->error("key={} event=exception what={}", log_quoted(key), log_quoted(e.what()));
    error(500, "internal", "internal error");
  }
  void replay(const message&) override { compact_now(); }
  void answered(turn_reply&) override { compact_now(); }
  void failed(const caf::error& err) override { fail(err); }
  void stored() override { compact_now(); }

  void compact_now();
  void answer_window(const compaction_report& report);
};
using compact_ptr = std::shared_ptr<compact_call>;

void compact_call::compact_now() {
  auto c = shared_from_this();
  ask<compaction_report>(c, cfg().conversation.gateway, cfg().conversation.turn_timeout,
                         gw_command_atom_v, key, trigger::t12_manual_session, std::string{},
                         reachable_owner(r->scope()))
    .then([c](caf::expected<compaction_report> report) {
      if (!report)
        return c->fail(report.error());
      c->answer_window(*report);
    });
}

void compact_call::answer_window(const compaction_report& report) {
  auto c = shared_from_this();
  ask<std::vector<message>>(c, cfg().conversation.gateway, cfg().conversation.read_timeout,
                            gw_live_atom_v, key, reachable_owner(r->scope()))
    .then([c, report](caf::expected<std::vector<message>> live) {
      if (!live)
        return c->fail(live.error());
      c->out.window = client_window(*live, c->cfg().conversation.visibility);
      c->out.input_tokens = report.tokens_before;
      for (const auto& m : *live)
        if (report.committed && m.id == report.summary_id)
          c->out.output_tokens = m.token_estimate;
      c->door->count.compacted.fetch_add(1);
      c->door->log->info("key={} event=responses_compact committed={} summary_id={} "
                         "window_rows={} tokens_before={} tokens_after={}",
                         log_quoted(c->key), report.committed, report.summary_id,
                         c->out.window.size(), report.tokens_before, report.tokens_after);
      c->r->answer(openai_json_response(200, to_compacted_object(c->out)));
    });
}

// The input stored (store_only), then the compaction; without input, the compaction.
void compact_with_input(const compact_ptr& c, const std::string& user, bool continues) {
  if (c->in.input.empty())
    return c->compact_now();
  conversation_request rq;
  rq.key = c->key;
  rq.user = user;
  if (continues) {
    rq.sent = std::move(c->in.input);
    rq.style = history_style::stateful;
  } else {
    if (!c->in.instructions.empty()) {
      message sys;
      sys.role = msg_role::system;
      sys.content = c->in.instructions;
      rq.sent.push_back(std::move(sys));
    }
    for (auto& m : c->in.input)
      rq.sent.push_back(std::move(m));
    rq.style = history_style::full_history;
  }
  rq.store_only = true;
  rq.messages_field = "input";
  rq.results_hint = "function_call_output items";
  rq.branch_label = "responses-branch";
  c->door->conversations.run(c->r, c, std::move(rq));
}

} // namespace

void responses_door::compact(const door_request_ptr& r) {
  auto c = std::make_shared<compact_call>();
  c->door = s_;
  c->r = r;
  guarded(c, [&] {
    auto in = decode_compact_request(r->request().body);
    if (!in)
      return c->fail(in.error());
    c->in = std::move(*in);
    if (auto no = user_refusal(r->scope(), "field 'user'", c->in.user)) {
      if (no->status == 403)
        r->refused_for_scope();
      return c->error(no->status, no->code, no->message);
    }
    c->out.id = os_random_id("resp_");
    c->out.created_at = s_->cfg.clock() / 1000;
    if (c->in.previous_response_id.empty()) {
      c->key = responses_header_key(r->request());
      if (c->key.empty())
        c->key = c->in.prompt_cache_key;
      if (c->key.empty())
        return c->error(400, "bad_request",
                        "field 'previous_response_id': compaction needs a session: "
                        "previous_response_id, a session header (session-id, "
                        "X-Mneme-Session) or prompt_cache_key");
      std::string refused; // the key in its namespace (docs/api.md "Authentication")
      c->key = door_stored_key(r->scope(), c->in.user, s_->cfg.default_user, c->key, refused);
      if (!refused.empty())
        return c->error(400, "bad_request", refused);
      return compact_with_input(c, c->in.user, false);
    }
    const auto& conv = s_->cfg.conversation;
    ask<response_record>(c, conv.storage, conv.read_timeout, st_resp_get_atom_v,
                         c->in.previous_response_id)
      .then([c](caf::expected<response_record> prev) {
        if (!prev && prev.error() != errc::not_found)
          return c->fail(prev.error());
        if (!prev || prev->deleted_at_ms != 0
            || !response_visible_to(c->r->scope(), prev->user_id))
          return c->error(400, "previous_response_not_found",
                          "field 'previous_response_id': previous response with id '"
                            + c->in.previous_response_id + "' not found");
        c->key = prev->session_key;
        compact_with_input(c, prev->user_id, true);
      });
  });
}

} // namespace mneme::api
