// The OpenAI door; see openai_door.hpp.
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
//     against the conversation across the sessions of the key (door_read_conversation);
//     a branch from before the continuation is matched against the new session alone.
#include "apps/common/api/doors/openai_chat/openai_door.hpp"

#include <cstdio>
#include <limits>
#include <random>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/null_sink.h>

#include "apps/common/api/http_status.hpp"
#include "apps/common/api/doors/openai_chat/openai_stream.hpp"
#include "apps/common/api/doors/openai_chat/openai_wire.hpp"
#include "policies/client_text.hpp"
#include "policies/openai_errors.hpp"
#include "policies/token_estimate.hpp"

namespace mneme::api {

using nlohmann::json;

struct openai_door::shared {
  openai_door_config cfg;
  std::shared_ptr<spdlog::logger> log;
  counters count;
  std::mutex prints_mu; // guards prints
  std::unordered_map<std::string, history_print> prints; // by session key
  std::atomic<uint64_t> next_id{0};
  uint64_t id_salt = std::random_device{}();
  int64_t started_s = 0; // `created` of GET /v1/models

  explicit shared(openai_door_config c)
    : cfg(std::move(c)),
      log(cfg.log ? cfg.log
                  : std::make_shared<spdlog::logger>(
                    "openai", std::make_shared<spdlog::sinks::null_sink_mt>())),
      started_s(cfg.clock() / 1000) {}

  std::optional<history_print> print_of(const std::string& key) {
    std::lock_guard lock{prints_mu};
    auto i = prints.find(key);
    if (i == prints.end())
      return std::nullopt;
    return i->second;
  }
  void keep_print(const std::string& key, history_print p) {
    std::lock_guard lock{prints_mu};
    if (prints.size() >= cfg.max_prints && !prints.count(key))
      prints.clear(); // rebuilt from the store on demand
    prints[key] = std::move(p);
  }
  void drop_print(const std::string& key) {
    std::lock_guard lock{prints_mu};
    prints.erase(key);
  }
  std::string completion_id() {
    char buf[40];
    std::snprintf(buf, sizeof buf, "chatcmpl-%016llx%08llx",
                  static_cast<unsigned long long>(id_salt),
                  static_cast<unsigned long long>(next_id.fetch_add(1) + 1));
    return buf;
  }
};

namespace {

using shared_ptr = std::shared_ptr<openai_door::shared>;
constexpr int64_t door_last_row = std::numeric_limits<int64_t>::max();
constexpr const char* door_branch_label = "openai-branch";

http_response door_json(int status, const json& body, header_list headers = {}) {
  return http_response{status, "application/json",
                       body.dump(-1, ' ', false, json::error_handler_t::replace),
                       std::move(headers), false};
}

// One chat-completions request on its way.
struct chat_call {
  shared_ptr door;
  door_request_ptr r;
  openai_chat_request in;
  std::string key;
  std::string user;
  std::string model;         // the upstream model name
  history_style style = history_style::stateful;
  std::string session_id;    // known before the turn ("" for a new key)
  std::string parent_id;     // of that session ("" for none)
  int64_t rebased = 0;
  std::shared_ptr<openai_chunk_relay> relay;

  caf::event_based_actor* self() const { return r->actor(); }
  const openai_door_config& cfg() const { return door->cfg; }

  header_list mneme_headers(const std::string& sid, int64_t compactions, bool with_count) const {
    header_list h;
    if (!sid.empty())
      h.emplace_back("X-Mneme-Session-Id", sid);
    if (with_count)
      h.emplace_back("X-Mneme-Compactions", std::to_string(compactions));
    if (rebased > 0)
      h.emplace_back("X-Mneme-Rebased", std::to_string(rebased));
    return h;
  }

  void error(int status, const std::string& code, const std::string& message) {
    door->count.errors.fetch_add(1);
    auto kind = openai_error_of(status, code);
    auto body = openai_error_json(message, kind.type, param_of(message), kind.code);
    if (relay && relay->fail(body)) {
      r->streamed();
      return;
    }
    r->answer(door_json(kind.status, body, mneme_headers(session_id, 0, false)));
  }

  void fail(const caf::error& err) {
    if (r->forward_elsewhere(err)) // refused at the open, before anything was relayed
      return;
    auto status = http_status_of(err);
    if (status >= 500)
      door->log->warn("key={} event=openai_error status={} error={}", log_quoted(key), status,
                      log_quoted(render_error(err)));
    error(status, error_code_of(err), error_message_of(err));
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
    r->answer(door_json(200, to_chat_completion(a), headers));
  }
};
using chat_ptr = std::shared_ptr<chat_call>;

// Runs f, turning an exception into a 500 (a continuation never ends without answering).
template <class F>
void door_guarded(const chat_ptr& c, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    c->door->log->error("key={} event=exception what={}", log_quoted(c->key), log_quoted(e.what()));
    c->error(500, "internal", "internal error");
  }
}

// request(...).then(ok, fail) from the request's actor; errors go to c->fail.
template <class T, class Handle, class F, class... Ts>
void door_ask(const chat_ptr& c, const Handle& h, std::chrono::milliseconds timeout, F ok,
              Ts&&... xs) {
  if (!h)
    return c->fail(caf::make_error(errc::shutting_down, "the runtime is stopped"));
  c->self()->request(h, timeout, std::forward<Ts>(xs)...)
    .then([c, ok](T& x) mutable { door_guarded(c, [&] { ok(x); }); },
          [c](caf::error& e) { door_guarded(c, [&] { c->fail(e); }); });
}

int64_t door_committed(const turn_reply& r) {
  int64_t n = 0;
  for (const auto& x : r.compactions)
    n += x.committed ? 1 : 0;
  return n;
}

void door_turn(const chat_ptr& c, new_messages fresh);

// The turn's answer.
void door_answer(const chat_ptr& c, turn_reply& reply) {
  auto a = c->head();
  a.content = reply.answer;
  a.tool_calls = reply.tool_calls;
  a.finish_reason = reply.finish_reason;
  a.usage.prompt_tokens = reply.prompt_tokens;
  a.usage.completion_tokens = estimate_text_tokens(reply.answer);
  for (const auto& call : reply.tool_calls)
    a.usage.completion_tokens += estimate_text_tokens(call.arguments);
  c->respond(std::move(a), c->mneme_headers(reply.session_id, door_committed(reply), true));
}

// Appends fresh.appended[i..], then runs the turn.
void door_append(const chat_ptr& c, std::shared_ptr<new_messages> fresh, size_t i) {
  if (i >= fresh->appended.size())
    return door_turn(c, std::move(*fresh));
  auto row = fresh->appended[i];
  door_ask<int64_t>(c, c->cfg().gateway, c->cfg().turn_timeout,
                    [c, fresh, i](int64_t) { door_append(c, fresh, i + 1); },
                    gw_append_atom_v, c->key, c->user, std::move(row));
}

void door_turn(const chat_ptr& c, new_messages fresh) {
  auto in = std::move(c->in.turn);
  if (fresh.tool_results.empty()) {
    in.content = std::move(fresh.user_content);
  } else {
    for (auto& t : fresh.tool_results)
      in.tool_results.push_back({std::move(t.tool_call_id), std::move(t.content), false});
  }
  if (c->model != c->cfg().model_name)
    in.options.model = c->model;
  if (c->relay)
    in.stream = c->relay;
  door_ask<turn_reply>(c, c->cfg().gateway, c->cfg().turn_timeout,
                       [c](turn_reply& reply) { door_answer(c, reply); }, gw_turn_atom_v, c->key,
                       c->user, std::move(in));
}

// The stored row answered again (plan.replay).
void door_replay(const chat_ptr& c, const message& row) {
  c->door->count.replayed.fetch_add(1);
  auto a = c->head();
  a.content = row.content;
  a.tool_calls = row.tool_calls;
  a.finish_reason = row.tool_calls.empty() ? "stop" : "tool_calls";
  a.usage.completion_tokens = row.token_estimate;
  if (c->relay) {
    c->relay->text(a.content);
    for (size_t i = 0; i < a.tool_calls.size(); ++i)
      c->relay->tool_call(i, a.tool_calls[i].id, a.tool_calls[i].name, a.tool_calls[i].arguments);
  }
  c->respond(std::move(a), c->mneme_headers(c->session_id, 0, true));
}

// After the plan's rollback (if any): the new messages, or the door_replay.
void door_carry_out(const chat_ptr& c, const history_plan& plan) {
  if (plan.replay)
    return door_replay(c, plan.replayed);
  std::string why;
  auto fresh = split_new_messages(c->in.messages, plan.known, why);
  if (!fresh)
    return c->error(400, "bad_request", "field 'messages': " + why);
  door_append(c, std::make_shared<new_messages>(std::move(*fresh)), 0);
}

void door_follow(const chat_ptr& c, const history_plan& plan) {
  if (!plan.roll_back)
    return door_carry_out(c, plan);
  c->rebased = plan.rebased_rows;
  if (c->relay)
    c->relay->add_header("X-Mneme-Rebased", std::to_string(plan.rebased_rows));
  c->door->count.rebased.fetch_add(1);
  c->door->drop_print(c->key); // the rollback changed rows before the print's end
  c->door->log->info("key={} session={} event=openai_rebase rows={} last_kept_id={}",
                     log_quoted(c->key), c->session_id, plan.rebased_rows, plan.last_kept_id);
  door_ask<std::vector<message>>(
    c, c->cfg().gateway, c->cfg().turn_timeout,
    [c, plan](std::vector<message>&) { door_carry_out(c, plan); }, gw_rollback_atom_v, c->key,
    plan.last_kept_id, std::string{door_branch_label});
}

// The conversation rows of a session (policies/openai_history.hpp, "Continuations").
struct door_conversation {
  std::vector<message> rows; // the conversation rows
  std::vector<message> own;  // every row of the newest session
  int64_t boundary_id = 0;   // rows above it are the newest session's own rows (0: all)
};
using conversation_fn = std::function<void(door_conversation&)>;

// Beyond this many continuations back, older sessions are left out of the conversation
// (their rows then match as a branch would).
constexpr int door_max_ancestors = 1000;

// Reads session `sid` and, while its parent is continued by it under the key, the
// parent's conversation before it; then `then`.
void door_read_conversation(const chat_ptr& c, const std::string& sid, std::string parent_id,
                            int depth, conversation_fn then) {
  door_ask<std::vector<message>>(
    c, c->cfg().storage, c->cfg().read_timeout,
    [c, parent_id, depth, then](std::vector<message>& rows) {
      auto own = std::make_shared<std::vector<message>>(std::move(rows));
      auto alone = [own, then] {
        door_conversation conv;
        conv.rows = *own;
        conv.own = std::move(*own);
        then(conv);
      };
      if (parent_id.empty() || depth >= door_max_ancestors)
        return alone();
      c->self()->request(c->cfg().storage, c->cfg().read_timeout, st_session_atom_v, parent_id)
        .then(
          [c, own, depth, then, alone](session_record& parent) {
            door_guarded(c, [&] {
              if (parent.session_key != c->key || !is_continuation_end(parent.end_reason))
                return alone();
              door_read_conversation(
                c, parent.id, parent.parent_id, depth + 1, [own, then](door_conversation& up) {
                  auto creation = creation_row_count(up.own, *own);
                  door_conversation conv;
                  conv.rows = std::move(up.rows);
                  conv.boundary_id = creation > 0 ? (*own)[creation - 1].id
                                     : up.own.empty() ? up.boundary_id
                                                      : up.own.back().id;
                  continue_conversation(conv.rows, *own, creation);
                  conv.own = std::move(*own);
                  then(conv);
                });
            });
          },
          [c, alone](caf::error&) { door_guarded(c, alone); }); // unreadable: this one alone
    },
    st_range_atom_v, sid, int64_t{1}, door_last_row);
}

// The slow path: every conversation row, matched one by one.
void door_plan_rows(const chat_ptr& c, const door_conversation& conv) {
  const auto& rules = c->cfg().visibility;
  int64_t leading = 0;
  auto visible = visible_rows(conv.rows, rules, &leading);
  // The print folded anew: one kept from before a rollback by another route would send
  // every later request here again. It never folds the creation rows.
  history_print fresh;
  fresh.session_id = c->session_id;
  fold_rows(fresh, conv.rows, rules);
  fresh.last_row_id = std::max(fresh.last_row_id, conv.boundary_id);
  c->door->keep_print(c->key, std::move(fresh));
  auto plan = plan_from_rows(c->in.messages, c->style, visible, leading);
  if (conv.boundary_id == 0)
    return door_follow(c, plan);
  if (auto fitted = fit_to_continuation(plan, visible, conv.boundary_id))
    return door_follow(c, *fitted);
  // The client's branch starts before the continuation: this session's rows alone.
  auto own_visible = visible_rows(conv.own, rules, &leading);
  door_follow(c, plan_from_rows(c->in.messages, c->style, own_visible, leading));
}

void door_read_rows(const chat_ptr& c) {
  c->door->count.history_reads.fetch_add(1);
  door_read_conversation(c, c->session_id, c->parent_id, 0,
                         [c](door_conversation& conv) { door_plan_rows(c, conv); });
}

void door_plan_print(const chat_ptr& c, const history_print& p) {
  auto plan = plan_from_print(c->in.messages, c->style, p);
  if (plan.need_rows)
    return door_read_rows(c);
  door_follow(c, plan);
}

// The key's print brought up to date with the rows stored since, then the plan.
void door_match(const chat_ptr& c) {
  if (c->session_id.empty()) // a new key: nothing stored
    return door_plan_print(c, history_print{});
  auto known = c->door->print_of(c->key);
  history_print p;
  if (known && known->session_id == c->session_id)
    p = std::move(*known);
  else if (!c->parent_id.empty()) // perhaps a continuation: its conversation
    return door_read_rows(c);
  else
    p.session_id = c->session_id;
  auto from = p.last_row_id + 1;
  door_ask<std::vector<message>>(
    c, c->cfg().storage, c->cfg().read_timeout,
    [c, p](std::vector<message>& rows) mutable {
      fold_rows(p, rows, c->cfg().visibility);
      c->door->keep_print(c->key, p);
      door_plan_print(c, p);
    },
    st_range_atom_v, c->session_id, from, door_last_row);
}

void door_session_chat(const chat_ptr& c) {
  c->style = style_of(c->in.messages);
  (c->style == history_style::stateful ? c->door->count.stateful : c->door->count.full_history)
    .fetch_add(1);
  c->self()->request(c->cfg().gateway, c->cfg().read_timeout, gw_state_atom_v, c->key)
    .then(
      [c](session_snapshot& snap) {
        door_guarded(c, [&] {
          if (!c->user.empty() && c->user != snap.record.user_id) {
            if (!c->r->scope().is_admin()) { // a user token: answered as an unknown key
              c->r->refused_for_scope();
              return c->error(404, "not_found", unknown_key_message(c->key));
            }
            return c->error(400, "bad_request",
                            "field 'user': session '" + c->key + "' belongs to another user");
          }
          c->session_id = snap.record.id;
          c->parent_id = snap.record.parent_id;
          if (c->relay) // the head goes with the first chunk: what is known before it
            c->relay->add_header("X-Mneme-Session-Id", c->session_id);
          door_match(c);
        });
      },
      [c](caf::error& err) {
        door_guarded(c, [&] {
          if (err != errc::not_found)
            return c->fail(err);
          door_match(c);
        });
      });
}

void door_stateless(const chat_ptr& c) {
  c->door->count.stateless.fetch_add(1);
  chat_request req;
  req.model = c->model;
  req.messages = std::move(c->in.messages);
  req.purpose = llm_purpose::chat;
  req.tools_json = c->in.turn.tools_json;
  const auto& opt = c->in.turn.options;
  req.extra_json = opt.extra_json;
  if (opt.has_max_tokens)
    req.max_tokens = opt.max_tokens;
  if (opt.has_temperature)
    req.temperature = opt.temperature;
  req.sink = c->relay;
  req.stream = c->relay != nullptr;
  door_ask<chat_answer>(
    c, c->cfg().chat, c->cfg().turn_timeout,
    [c](chat_answer& answer) {
      auto a = c->head();
      a.content = std::move(answer.content);
      a.tool_calls = std::move(answer.tool_calls);
      a.finish_reason = !a.tool_calls.empty() ? "tool_calls"
                        : answer.finish_reason.empty() ? "stop"
                                                       : answer.finish_reason;
      a.usage = {answer.prompt_tokens, answer.completion_tokens};
      c->respond(std::move(a), {});
    },
    llm_call_atom_v, std::move(req));
}

bool door_valid_name(const chat_ptr& c, std::string_view what, const std::string& text,
                size_t max_bytes) {
  auto v = check_name(text, max_bytes);
  if (v.ok())
    return true;
  c->error(400, "bad_request", describe_name_problem(v, what, max_bytes));
  return false;
}

} // namespace

http_response openai_error_response(int status, const std::string& code,
                                    const std::string& message) {
  auto kind = openai_error_of(status, code);
  return door_json(kind.status,
                     openai_error_json(message, kind.type, param_of(message), kind.code));
}

openai_door::openai_door(openai_door_config cfg)
  : s_(std::make_shared<shared>(std::move(cfg))) {}

void openai_door::chat(const door_request_ptr& r) {
  auto c = std::make_shared<chat_call>();
  c->door = s_;
  c->r = r;
  door_guarded(c, [&] {
    auto in = decode_openai_chat(r->request().body);
    if (!in)
      return c->fail(in.error());
    c->in = std::move(*in);
    c->key = door_session_key(r->request(), c->in.metadata_session_id);
    c->model = c->in.model.empty() || c->in.model == "mneme" ? s_->cfg.model_name : c->in.model;
    c->user = c->in.user;
    if (!c->user.empty() && !door_valid_name(c, "field 'user'", c->user, user_max_bytes))
      return;
    access_question q{route_access::user_named, r->scope(), c->user, std::nullopt};
    if (decide_access(q) != access_verdict::allow) {
      r->refused_for_scope();
      return c->error(403, "forbidden",
                      "field 'user': a token of " + to_string(r->scope())
                        + " may not act for another user");
    }
    c->user = acting_user(r->scope(), c->user);
    if (c->in.stream) {
      auto a = c->head();
      c->relay = std::make_shared<openai_chunk_relay>(r->reply_channel(), header_list{}, a,
                                                      c->in.include_usage,
                                                      s_->cfg.visibility.builtin_names);
    }
    if (c->key.empty())
      return door_stateless(c);
    if (!door_valid_name(c, "the session key", c->key, session_key_max_bytes))
      return;
    door_session_chat(c); // an empty user: the key's owner, or gateway.default_user
  });
}

void openai_door::models(const door_request_ptr& r) {
  r->answer(door_json(200, models_json(s_->cfg.model_name, s_->started_s)));
}

std::string openai_door::metrics_text() const {
  const auto& n = s_->count;
  std::string out =
    "# HELP mneme_openai_requests_total Requests of POST /v1/chat/completions by style\n"
    "# TYPE mneme_openai_requests_total counter\n";
  out += "mneme_openai_requests_total{style=\"stateless\"} " + std::to_string(n.stateless.load())
         + "\n";
  out += "mneme_openai_requests_total{style=\"stateful\"} " + std::to_string(n.stateful.load())
         + "\n";
  out += "mneme_openai_requests_total{style=\"full_history\"} "
         + std::to_string(n.full_history.load()) + "\n";
  auto counter = [&out](const char* name, const char* help, int64_t v) {
    out += std::string{"# HELP "} + name + " " + help + "\n# TYPE " + name + " counter\n" + name
           + " " + std::to_string(v) + "\n";
  };
  counter("mneme_openai_rebased_total",
          "Requests whose history contradicted the stored one (rolled back to the last common row)",
          n.rebased.load());
  counter("mneme_openai_replayed_total",
          "Requests answered with their stored answer again (a resent, answered transcript)",
          n.replayed.load());
  counter("mneme_openai_history_reads_total",
          "Requests that read every row of their session to match the history",
          n.history_reads.load());
  counter("mneme_openai_errors_total", "Requests answered with an error", n.errors.load());
  return out;
}

} // namespace mneme::api
