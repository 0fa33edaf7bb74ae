// The Responses door; see responses_door.hpp.
//
// Decisions where the issue is silent:
//   - `model` "" or "mneme" is model.name; any other name goes upstream for this request
//     only, as on the chat door;
//   - usage: input_tokens as the upstream reported them, output_tokens the upstream's in
//     the pass-through, else mneme's estimate of the answer;
//   - instructions are the leading system message of a whole transcript (so a client
//     resending them with its transcript matches its stored system row); a request that
//     continues a response or a conversation sends only what is new, and its
//     instructions are not stored (the session keeps the ones it began with);
//   - a header names the session before `conversation`, which names it before
//     `prompt_cache_key`;
//   - `user` names the tenant as on the chat door;
//   - the last row a response answered is its answer's row: the newest row of the
//     session that is not a summary once the turn is answered (a concurrent request on
//     the same key may move it: one key, one request at a time, as on the chat door);
//   - a `previous_response_id` unknown, deleted or of another user is a 400
//     previous_response_not_found (OpenAI's answer); continuing a response whose session
//     was continued in a child or reset continues the key's newest session (a branch
//     from before such a continuation is not rolled back);
//   - a whole transcript that names no session but holds back the output items of a
//     stored response (their ids name it) continues that response's session: the Agents
//     SDK's default loop sends its run's transcript so, without previous_response_id;
//   - a record that cannot be written does not fail the answer (the turn is stored):
//     it is logged, counted as an error, and the id cannot be continued.

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "apps/common/api/doors/door_answer.hpp"
#include "apps/common/api/doors/door_passthrough.hpp"
#include "apps/common/api/doors/openai_responses/responses_door_state.hpp"
#include "apps/common/api/doors/openai_responses/responses_stream.hpp"
#include "apps/common/api/doors/openai_responses/responses_wire.hpp"
#include "apps/common/api/doors/openai_shape.hpp"
#include "apps/common/api/http_status.hpp"
#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "apps/common/api/plumbing/checks.hpp"
#include "apps/common/api/plumbing/idempotency_header.hpp"
#include "messages/llm_errc.hpp"
#include "policies/client_text.hpp"
#include "policies/idempotency.hpp"
#include "policies/key_namespace.hpp"
#include "policies/openai_errors.hpp"
#include "policies/token_estimate.hpp"
#include "store/os_random.hpp"
#include "store/response_records.hpp"

namespace mneme::api {

using nlohmann::json;

namespace {

using responses_shared = std::shared_ptr<responses_door::shared>;
constexpr const char* responses_branch_label = "responses-branch";

// "resp_" and 128 random bits in hex, from the kernel (store/os_random.hpp).
std::string new_response_id() { return os_random_id("resp_"); }

// One POST /v1/responses on its way; the events of its conversation.
struct response_call final : conversation_events,
                             std::enable_shared_from_this<response_call> {
  responses_shared door;
  door_request_ptr r;
  responses_request in;
  std::string key;
  std::string user;
  std::string model;         // the upstream model name
  std::string session_id;    // known before the turn ("" for a new key)
  int64_t rebased = 0;
  responses_answer head;     // id, created_at, model, echo
  std::string owner;         // the session's user, for the record
  std::shared_ptr<responses_event_relay> relay; // `stream: true`
  std::string idem;          // the Idempotency-Key ("" = none)
  std::string idem_refused;  // why the header is not usable ("" = it is, or none)
  idempotency_hold_ptr idem_held; // its mark, when checked before a branch's rollback
  bool replayed_by_key = false;   // the first answer under the key, sent again

  const responses_door_config& cfg() const { return door->cfg; }

  header_list mneme_headers(const std::string& sid, int64_t compactions, bool with_count) const {
    auto h = mneme_answer_headers(sid, compactions, with_count, rebased);
    add_idempotency_headers(h, replayed_by_key, "");
    return h;
  }

  bool cancel_ending = false; // the cancelled end is on its way (see error())

  // `upstream_wait`: the model provider's Retry-After (docs/api.md "Retry-After").
  void error(int status, const std::string& code, const std::string& message,
             std::optional<int64_t> upstream_wait = std::nullopt) {
    if (relay && relay->cancelled() && !cancel_ending)
      return end_cancelled(); // the turn failed because its model call was aborted
    if (relay)
      door->inflight.remove(head.id);
    door->count.errors.fetch_add(1);
    auto headers = mneme_headers(session_id, 0, false);
    add_upstream_retry_after(headers, upstream_wait, openai_error_of(status, code).status);
    add_idempotency_headers(headers, false, code);
    auto res = openai_error_response(status, code, message, std::move(headers));
    if (relay && relay->fail(openai_error_of(status, code).code, message)) {
      r->streamed();
      return;
    }
    r->answer(std::move(res));
  }

  void fail(const caf::error& refusal) {
    if (r->forward_elsewhere(refusal)) // refused at the open, before anything was answered
      return;
    if (hidden_from(r->scope(), refusal)) // another user's session: an unknown key
      r->refused_for_scope();
    auto err = as_seen_by(r->scope(), refusal, key);
    auto status = http_status_of(err);
    if (status >= 500)
      door->log->warn("key={} event=responses_error status={} error={}", log_quoted(key), status,
                      log_quoted(render_error(err)));
    error(status, error_code_of(err), error_message_of(err), upstream_retry_after_of(err));
  }

  // The answer of the request: the `response` object, or the end of the stream.
  void respond(const responses_answer& a, const header_list& headers) {
    if (relay) {
      door->inflight.remove(head.id);
      relay->finish(a);
      r->streamed();
      return;
    }
    r->answer(openai_json_response(200, to_response_object(a), headers));
  }

  // The answer of a session's turn: recorded (unless `store: false`), then answered.
  // `row_id`: the answer's row when known (0: the session's newest row that is not a
  // summary).
  void finish(responses_answer a, header_list headers, std::string sid, int64_t row_id);

  // A stream stopped (POST /v1/responses/{id}/cancel, or its client gone): recorded
  // (status cancelled, the items it began as streamed, incomplete; its last row the
  // question) unless `store: false` or no session was opened, then the stream ends with
  // those items' closing events and response.incomplete (responses_stream.hpp).
  void end_cancelled() {
    cancel_ending = true;
    door->count.cancelled.fetch_add(1);
    door->log->info("key={} session={} event=response_cancelled response={}", log_quoted(key),
                    session_id, head.id);
    auto a = head;
    a.status = "cancelled";
    a.partial_output = relay->stopped_output();
    if (!in.store || key.empty())
      return respond(a, {});
    if (!session_id.empty())
      return finish(std::move(a), mneme_headers(session_id, 0, false), session_id, 0);
    auto c = shared_from_this(); // a new key: its session was opened by this request
    const auto& conv = cfg().conversation;
    ask<session_snapshot>(c, conv.gateway, conv.read_timeout, gw_state_atom_v, key,
                          reachable_owner(r->scope()))
      .then([c, a](caf::expected<session_snapshot> snap) {
        if (!snap)
          return c->respond(a, {});
        c->session_id = snap->record.id;
        c->owner = snap->record.user_id;
        c->finish(a, c->mneme_headers(c->session_id, 0, false), c->session_id, 0);
      });
  }

  responses_answer answer_of(std::string content, std::vector<tool_call> calls,
                             const std::string& finish_reason) const {
    auto a = head;
    a.content = std::move(content);
    a.tool_calls = std::move(calls);
    if (finish_reason == "length") {
      a.status = "incomplete";
      a.incomplete_by_length = true;
    }
    return a;
  }

  // --- conversation_events (doors/door_conversation.hpp)

  caf::event_based_actor* actor() const override { return r->actor(); }

  void on_exception(const std::exception& e) override {
    door->log->error("key={} event=exception what={}", log_quoted(key), log_quoted(e.what()));
    error(500, "internal", "internal error");
  }

  void opened(const session_record& s) override {
    session_id = s.id;
    owner = s.user_id;
    if (relay) // the head goes with the first event: what is known before it
      relay->add_header("X-Mneme-Session-Id", session_id);
  }

  void rebasing(const history_plan& plan) override {
    rebased = plan.rebased_rows;
    if (relay)
      relay->add_header("X-Mneme-Rebased", std::to_string(plan.rebased_rows));
    door->log->info("key={} session={} event=responses_rebase rows={} last_kept_id={}",
                    log_quoted(key), session_id, plan.rebased_rows, plan.last_kept_id);
  }

  // The stored answer again (a resent, answered transcript).
  void replay(const message& row) override {
    if (relay && !row.content.empty()) // a stream's reader adds up its deltas
      relay->text(row.content);
    auto a = answer_of(row.content, row.tool_calls, "stop");
    a.usage.output_tokens = row.token_estimate;
    finish(std::move(a), mneme_headers(session_id, 0, true), session_id, row.id);
  }

  // The record of the answer sent again names its row's session (the key's may have
  // moved on since: a reset, a child).
  void replay_by_key(const message& row) override {
    replayed_by_key = true;
    session_id = row.session_id;
    head_replay_by_key(relay, session_id, row);
    replay(row);
  }

  void answered(turn_reply& reply) override {
    auto a = answer_of(reply.answer, reply.tool_calls, reply.finish_reason);
    a.usage.input_tokens = reply.prompt_tokens;
    a.usage.output_tokens = estimate_text_tokens(reply.answer);
    for (const auto& call : reply.tool_calls)
      a.usage.output_tokens += estimate_text_tokens(call.arguments);
    finish(std::move(a), mneme_headers(reply.session_id, committed_compactions(reply), true),
           reply.session_id, 0);
  }

  void failed(const caf::error& err) override { fail(err); }
};
using response_ptr = std::shared_ptr<response_call>;

// How many rows before a session's newest one are searched for its answer row.
constexpr int64_t answer_row_window = 64;

void record_response(const response_ptr& c, responses_answer a, header_list headers,
                     const std::string& sid, int64_t row_id) {
  response_record rec;
  rec.id = a.id;
  rec.user_id = !c->owner.empty() ? c->owner : !c->user.empty() ? c->user : c->cfg().default_user;
  rec.session_key = c->key;
  rec.session_id = sid;
  rec.last_row_id = row_id;
  rec.previous_id = c->in.previous_response_id;
  rec.created_at_ms = a.created_at * 1000;
  rec.body = to_response_object(a).dump(-1, ' ', false, json::error_handler_t::replace);
  auto storage = c->cfg().conversation.storage;
  ask<caf::ok_atom>(c, storage, c->cfg().conversation.turn_timeout, st_resp_put_atom_v,
                    std::move(rec))
    .then([c, a = std::move(a), headers = std::move(headers)](caf::expected<caf::ok_atom> ok) {
      if (!ok) {
        c->door->count.errors.fetch_add(1);
        c->door->log->warn("key={} session={} event=response_not_recorded response={} error={}",
                           log_quoted(c->key), c->session_id, a.id,
                           log_quoted(render_error(ok.error())));
      }
      c->respond(a, headers);
    });
}

void response_call::finish(responses_answer a, header_list headers, std::string sid,
                           int64_t row_id) {
  if (!in.store)
    return respond(std::move(a), headers);
  auto c = shared_from_this();
  if (row_id > 0)
    return record_response(c, std::move(a), std::move(headers), sid, row_id);
  const auto& conv = cfg().conversation;
  ask<session_stats>(c, conv.storage, conv.read_timeout, st_stats_atom_v, sid)
    .then([c, a = std::move(a), headers = std::move(headers),
           sid](caf::expected<session_stats> stats) {
      if (!stats)
        return c->fail(stats.error());
      auto last = stats->last_id;
      const auto& conv = c->cfg().conversation;
      ask<std::vector<message>>(c, conv.storage, conv.read_timeout, st_range_atom_v, sid,
                                std::max<int64_t>(1, last - answer_row_window), last)
        .then([c, a, headers, sid,
               last](caf::expected<std::vector<message>> rows) {
          if (!rows)
            return c->fail(rows.error());
          int64_t row = last;
          for (auto it = rows->rbegin(); it != rows->rend(); ++it)
            if (!it->is_summary) {
              row = it->id;
              break;
            }
          record_response(c, a, headers, sid, row);
        });
    });
}

// The messages sent upstream or matched: the instructions first, then the input.
std::vector<message> transcript_of(responses_request& in) {
  std::vector<message> out;
  out.reserve(in.input.size() + 1);
  if (!in.instructions.empty()) {
    message sys;
    sys.role = msg_role::system;
    sys.content = in.instructions;
    out.push_back(std::move(sys));
  }
  for (auto& m : in.input)
    out.push_back(std::move(m));
  in.input.clear();
  return out;
}

void responses_stateless(const response_ptr& c) {
  c->door->count.stateless.fetch_add(1);
  auto req = passthrough_request(c->model, transcript_of(c->in), c->in.turn, c->relay);
  ask<chat_answer>(c, c->cfg().chat, c->cfg().turn_timeout, llm_call_atom_v, std::move(req))
    .then([c](caf::expected<chat_answer> answer) {
      if (!answer)
        return c->fail(answer.error());
      auto a = c->answer_of(std::move(answer->content), std::move(answer->tool_calls),
                            passthrough_finish_reason(*answer));
      a.usage = {answer->prompt_tokens, answer->completion_tokens};
      c->respond(std::move(a), {});
    });
}

// The session's conversation: the input matched (a whole transcript) or appended (a
// continuation), the new messages run as a turn.
void responses_session(const response_ptr& c) {
  bool continues = !c->in.previous_response_id.empty() || !c->in.conversation.empty();
  conversation_request rq;
  rq.key = c->key;
  rq.user = c->user;
  if (continues) {
    rq.sent = std::move(c->in.input);
    rq.style = history_style::stateful;
  } else {
    rq.sent = transcript_of(c->in);
    rq.style = history_style::full_history;
  }
  rq.turn = std::move(c->in.turn);
  if (c->model != c->cfg().model_name)
    rq.turn.options.model = c->model;
  if (c->relay)
    rq.turn.stream = c->relay;
  rq.messages_field = "input";
  rq.results_hint = "function_call_output items";
  rq.branch_label = responses_branch_label;
  rq.idempotency_key = c->idem;
  rq.idempotency_held = std::move(c->idem_held);
  c->door->conversations.run(c->r, c, std::move(rq));
}

// The rows of `rec`'s session after its answer that a client continuing from it has not
// seen (rolled-back rows and summaries are not the conversation's).
int64_t rows_after_answer(const std::vector<message>& rows) {
  int64_t n = 0;
  for (const auto& m : rows)
    n += !m.is_summary && m.state() != row_state::rolled_back ? 1 : 0;
  return n;
}

// Rolls back the rows after the previous response's answer (a branch from an older
// response of the chain), then the conversation.
void responses_branch(const response_ptr& c, const response_record& prev) {
  const auto& conv = c->cfg().conversation;
  ask<std::vector<message>>(c, conv.storage, conv.read_timeout, st_range_atom_v,
                            prev.session_id, prev.last_row_id + 1,
                            std::numeric_limits<int64_t>::max())
    .then([c, prev](caf::expected<std::vector<message>> rows) {
      if (!rows)
        return c->fail(rows.error());
      auto later = rows_after_answer(*rows);
      if (later == 0)
        return responses_session(c);
      const auto& conv = c->cfg().conversation;
      ask<std::vector<message>>(c, conv.gateway, conv.turn_timeout, gw_rollback_atom_v, c->key,
                                prev.last_row_id, std::string{responses_branch_label},
                                reachable_owner(c->r->scope()))
        .then([c, later, prev](caf::expected<std::vector<message>> live) {
          if (!live)
            return c->fail(live.error());
          c->rebased = later;
          if (c->relay)
            c->relay->add_header("X-Mneme-Rebased", std::to_string(later));
          c->door->count.branched.fetch_add(1);
          c->door->log->info("key={} session={} event=responses_branch rows={} from={}",
                             log_quoted(c->key), prev.session_id, later, prev.id);
          responses_session(c);
        });
    });
}

// previous_response_id: the session of that response; a branch when later rows follow.
void responses_continue(const response_ptr& c) {
  const auto& conv = c->cfg().conversation;
  const auto& id = c->in.previous_response_id;
  ask<response_record>(c, conv.storage, conv.read_timeout, st_resp_get_atom_v, id)
    .then([c](caf::expected<response_record> prev) {
      const auto& id = c->in.previous_response_id;
      if (!prev && prev.error() != errc::not_found)
        return c->fail(prev.error());
      if (!prev || prev->deleted_at_ms != 0 || is_conversation_record_id(prev->id)
          || !response_visible_to(c->r->scope(), prev->user_id))
        return c->error(400, "previous_response_not_found",
                        "field 'previous_response_id': previous response with id '" + id
                          + "' not found");
      c->key = prev->session_key;
      c->owner = prev->user_id;
      const auto& conv = c->cfg().conversation;
      ask<session_snapshot>(c, conv.gateway, conv.read_timeout, gw_state_atom_v, c->key,
                            reachable_owner(c->r->scope()))
        .then([c, prev = *prev](caf::expected<session_snapshot> snap) {
          if (!snap && snap.error() != errc::not_found)
            return c->fail(snap.error());
          if (!snap || snap->record.id != prev.session_id)
            return responses_session(c); // continued in a newer session of the key
          if (c->idem.empty())
            return responses_branch(c, prev);
          // The key before the branch's rollback: a re-sent request rolls nothing back.
          conversation_request probe;
          probe.key = c->key;
          probe.idempotency_key = c->idem;
          if (!c->in.input.empty())
            probe.sent.push_back(c->in.input.back());
          c->door->conversations.check_key(c->r, c, std::move(probe),
                                           [c, prev](idempotency_hold_ptr hold) {
                                             if (!hold)
                                               c->idem.clear(); // writes no row of its own
                                             c->idem_held = std::move(hold);
                                             responses_branch(c, prev);
                                           });
        });
    });
}

// A whole transcript naming no session that holds back the output of a stored
// response (as the Agents SDK's default loop sends it): that response's session, matched
// as a whole transcript; else a new chain keyed by this response's id.
void responses_resume(const response_ptr& c) {
  const auto& conv = c->cfg().conversation;
  ask<response_record>(c, conv.storage, conv.read_timeout, st_resp_get_atom_v,
                       c->in.referenced_response)
    .then([c](caf::expected<response_record> rec) {
      if (!rec && rec.error() != errc::not_found)
        return c->fail(rec.error());
      if (rec && rec->deleted_at_ms == 0 && response_visible_to(c->r->scope(), rec->user_id)) {
        c->key = rec->session_key;
        c->owner = rec->user_id;
      } else {
        std::string refused; // a response id is always a valid key
        c->key = door_stored_key(c->r->scope(), c->user, c->cfg().default_user, c->head.id,
                                 refused);
      }
      responses_session(c);
    });
}

// The request's way once its session key is known.
void responses_route(const response_ptr& c) {
  bool stateless = c->in.previous_response_id.empty() && c->key.empty() && !c->in.store;
  if (!stateless && !c->idem_refused.empty())
    return c->error(400, "bad_request", c->idem_refused);
  if (!c->in.previous_response_id.empty())
    return responses_continue(c);
  if (c->key.empty() && !c->in.store)
    return responses_stateless(c);
  if (c->key.empty() && !c->in.referenced_response.empty())
    return responses_resume(c);
  if (c->key.empty()) {
    std::string refused; // a response id is always a key a client may name
    c->key = door_stored_key(c->r->scope(), c->user, c->door->cfg.default_user, c->head.id,
                             refused); // a new chain: its first response's id is its key
  }
  responses_session(c);
}

// `conversation` naming a conversation of POST /v1/conversations (a "conv_" id,
// conversations_door.hpp): refused as unknown without its record, once deleted, or when
// another user's; its session opens for the conversation's owner.
void responses_in_conversation(const response_ptr& c) {
  const auto& conv = c->cfg().conversation;
  ask<response_record>(c, conv.storage, conv.read_timeout, st_resp_get_atom_v,
                       c->in.conversation)
    .then([c](caf::expected<response_record> rec) {
      if (!rec && rec.error() != errc::not_found)
        return c->fail(rec.error());
      if (!rec || rec->deleted_at_ms != 0 || !may_reach(c->r->scope(), rec->user_id)) {
        if (rec && rec->deleted_at_ms == 0)
          c->r->refused_for_scope();
        return c->error(404, "not_found",
                        "field 'conversation': no conversation found with id '"
                          + c->in.conversation + "'");
      }
      if (c->user.empty())
        c->user = rec->user_id;
      c->key = stored_key(rec->user_id, c->in.conversation); // its owner's namespace
      responses_route(c);
    });
}

} // namespace

std::string responses_header_key(const http_request& req) {
  auto key = door_session_key(req, "");
  for (const char* name : {"session-id", "session_id"})
    if (key.empty())
      key = req.header(name);
  return key;
}

responses_door::responses_door(responses_door_config cfg)
  : s_(std::make_shared<shared>(std::move(cfg))) {}

void responses_door::create(const door_request_ptr& r) {
  auto c = std::make_shared<response_call>();
  c->door = s_;
  c->r = r;
  guarded(c, [&] {
    auto in = decode_responses_request(r->request().body);
    if (!in)
      return c->fail(in.error());
    c->in = std::move(*in);
    c->model = c->in.model.empty() || c->in.model == "mneme" ? s_->cfg.model_name : c->in.model;
    c->user = c->in.user;
    if (auto no = user_refusal(r->scope(), "field 'user'", c->user)) {
      if (no->status == 403)
        r->refused_for_scope();
      return c->error(no->status, no->code, no->message);
    }
    c->head.id = new_response_id();
    if (auto idem = idempotency_key_in(r->request(), c->idem_refused))
      c->idem = std::move(*idem); // refused only on a session's way: stateless ignores it
    c->key = responses_header_key(r->request());
    if (c->key.empty())
      c->key = !c->in.conversation.empty() ? c->in.conversation : c->in.prompt_cache_key;
    std::string refused;
    c->key = door_stored_key(r->scope(), c->user, s_->cfg.default_user, c->key, refused);
    if (!refused.empty())
      return c->error(400, "bad_request", refused);
    c->head.created_at = s_->cfg.clock() / 1000;
    c->head.model = c->model;
    c->head.conversation = c->in.conversation;
    c->head.previous_response_id = c->in.previous_response_id;
    c->head.echo = c->in.echo;
    if (c->in.stream) {
      c->relay = std::make_shared<responses_event_relay>(
        r->reply_channel(), c->head, s_->cfg.conversation.visibility.builtin_names);
      s_->inflight.add(c->head.id,
                       {c->relay, r->scope().is_admin() ? std::string{} : r->scope().user,
                        c->head});
    }
    if (is_conversation_record_id(c->in.conversation)
        && visible_key(c->key) == c->in.conversation)
      return responses_in_conversation(c);
    responses_route(c);
  });
}

door_conversations responses_door::conversations() const { return s_->conversations; }

std::string responses_door::metrics_text() const {
  const auto& n = s_->count;
  const auto& h = s_->conversations.counts();
  std::string out =
    "# HELP mneme_responses_requests_total Requests of POST /v1/responses by style\n"
    "# TYPE mneme_responses_requests_total counter\n";
  auto by_style = [&out](const char* style, int64_t v) {
    out += std::string{"mneme_responses_requests_total{style=\""} + style + "\"} "
           + std::to_string(v) + "\n";
  };
  by_style("stateless", n.stateless.load());
  by_style("stateful", h.stateful.load());
  by_style("full_history", h.full_history.load());
  auto counter = [&out](const char* name, const char* help, int64_t v) {
    out += std::string{"# HELP "} + name + " " + help + "\n# TYPE " + name + " counter\n" + name
           + " " + std::to_string(v) + "\n";
  };
  counter("mneme_responses_rebased_total",
          "Responses requests whose transcript or previous response rolled back later rows",
          h.rebased.load());
  counter("mneme_responses_branched_total",
          "Responses requests continuing an older response (later rows rolled back)",
          n.branched.load());
  counter("mneme_responses_errors_total", "Responses requests answered with an error",
          n.errors.load());
  counter("mneme_responses_compacted_total",
          "POST /v1/responses/compact requests answered with the compacted window",
          n.compacted.load());
  counter("mneme_responses_cancelled_total",
          "Streamed responses stopped by POST /v1/responses/{id}/cancel or by their client "
          "leaving",
          n.cancelled.load());
  out += door_label_metrics_text("responses", n.stateless.load(), n.errors.load(), h);
  return out;
}

} // namespace mneme::api
