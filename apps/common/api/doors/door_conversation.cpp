// The wire-neutral half of every door; see door_conversation.hpp.
#include "apps/common/api/doors/door_conversation.hpp"

#include <limits>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "apps/common/api/http_status.hpp"
#include "apps/common/api/plumbing/api_state.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "policies/builtin_tools.hpp"
#include "policies/client_text.hpp"
#include "policies/idempotency.hpp"
#include "policies/key_namespace.hpp"
#include "policies/tool_loop.hpp"

namespace mneme::api {

struct door_conversations::shared {
  conversation_config cfg;
  counters count;
  std::mutex prints_mu; // guards prints and busy
  std::unordered_map<std::string, history_print> prints; // by session key
  std::unordered_set<std::string> busy; // the keys of the conversations on their way

  explicit shared(conversation_config c) : cfg(std::move(c)) {}

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
  // One conversation per key at a time: false while another holds `key`.
  bool claim(const std::string& key) {
    std::lock_guard lock{prints_mu};
    return busy.insert(key).second;
  }
  void release(const std::string& key) {
    std::lock_guard lock{prints_mu};
    busy.erase(key);
  }
};

namespace {

using conversations_ptr = std::shared_ptr<door_conversations::shared>;
constexpr int64_t conversation_last_row = std::numeric_limits<int64_t>::max();

// One conversation on its way (the context of its asks, plumbing/ask.hpp).
struct conversation_call {
  conversations_ptr conv;
  door_request_ptr r;
  std::shared_ptr<conversation_events> events;
  conversation_request rq;
  history_style style = history_style::stateful;
  std::string session_id; // "" for a new key
  std::string parent_id;  // of that session ("" for none)
  bool claimed = false;   // holds rq.key in conv->busy until the end event (release())

  conversation_call() = default;
  conversation_call(const conversation_call&) = delete;
  conversation_call& operator=(const conversation_call&) = delete;
  ~conversation_call() { release(); }
  // Frees the key for the next request: at the conversation's end event (the request's
  // actor and its continuations may outlive the answer), or when the last is gone.
  void release() {
    if (claimed)
      conv->release(rq.key);
    claimed = false;
    rq.idempotency_held.reset(); // the Idempotency-Key's mark with it
  }

  caf::event_based_actor* actor() const { return r->actor(); }
  void on_exception(const std::exception& e) { events->on_exception(e); }
  const conversation_config& cfg() const { return conv->cfg; }
  const visibility_rules& rules() const { return conv->cfg.visibility; }
};
using conversation_ptr = std::shared_ptr<conversation_call>;

// A turn refused for pending tool calls names the session's own fields (/turns); a door
// client is told its wire's results and the door's header instead.
caf::error in_door_terms(const caf::error& err, const conversation_request& rq) {
  if (err != errc::tool_results_pending)
    return err;
  auto text = error_message_of(err);
  if (auto cut = text.rfind(pending_calls_way_out); cut != std::string::npos)
    text.resize(cut);
  return caf::make_error(errc::tool_results_pending,
                         text + "; send their results as " + rq.results_hint + ", or the header "
                           + std::string{abandon_pending_header}
                           + ": 1 to answer them with a stub and go on");
}

// Ends the conversation with `err` as the request's token sees it: another user's
// session, found where the gateway opened it, is the 404 of an unknown key to a user
// token (http_status.hpp as_seen_by).
void failed(const conversation_ptr& c, const caf::error& err) {
  if (hidden_from(c->r->scope(), err))
    c->r->refused_for_scope();
  c->release();
  c->events->failed(as_seen_by(c->r->scope(), err, visible_key(c->rq.key)));
}

void converse_turn(const conversation_ptr& c, new_messages fresh) {
  auto in = std::move(c->rq.turn);
  if (c->rq.idempotency_held) { // checked under the mark this request holds
    in.idempotency_key = c->rq.idempotency_key;
    in.idempotency_checked = true;
  }
  if (fresh.tool_results.empty()) {
    in.content = std::move(fresh.user_content);
  } else {
    for (auto& t : fresh.tool_results)
      in.tool_results.push_back({std::move(t.tool_call_id), std::move(t.content), false});
  }
  ask<turn_reply>(c, c->cfg().gateway, c->cfg().turn_timeout, gw_turn_atom_v, c->rq.key,
                  c->rq.user, std::move(in))
    .then([c](caf::expected<turn_reply> reply) {
      if (!reply)
        return failed(c, in_door_terms(reply.error(), c->rq));
      c->release();
      c->events->answered(*reply);
    });
}

// Appends fresh.appended[i..], then runs the turn.
void converse_append(const conversation_ptr& c, std::shared_ptr<new_messages> fresh, size_t i) {
  if (i >= fresh->appended.size())
    return converse_turn(c, std::move(*fresh));
  auto row = fresh->appended[i];
  ask<int64_t>(c, c->cfg().gateway, c->cfg().turn_timeout, gw_append_atom_v, c->rq.key,
               c->rq.user, std::move(row))
    .then([c, fresh, i](caf::expected<int64_t> id) {
      if (!id)
        return failed(c, id.error());
      converse_append(c, fresh, i + 1);
    });
}

// store_only: appends sent[i..] as they are, then stored().
void store_rest(const conversation_ptr& c, size_t i) {
  if (i >= c->rq.sent.size()) {
    c->release();
    return c->events->stored();
  }
  ask<int64_t>(c, c->cfg().gateway, c->cfg().turn_timeout, gw_append_atom_v, c->rq.key,
               c->rq.user, c->rq.sent[i])
    .then([c, i](caf::expected<int64_t> id) {
      if (!id)
        return failed(c, id.error());
      store_rest(c, i + 1);
    });
}

void carry_out_store_only(const conversation_ptr& c, const history_plan& plan) {
  store_rest(c, plan.replay ? c->rq.sent.size() : plan.known);
}

// After the plan's rollback (if any): the replay, or the new messages and the turn.
void carry_out(const conversation_ptr& c, const history_plan& plan) {
  if (c->rq.store_only)
    return carry_out_store_only(c, plan);
  if (plan.replay) {
    c->conv->count.replayed.fetch_add(1);
    c->release();
    return c->events->replay(plan.replayed);
  }
  std::string why;
  auto fresh = split_new_messages(c->rq.sent, plan.known, why, c->rq.turn.abandon_pending);
  if (!fresh)
    return failed(c, caf::make_error(errc::bad_request,
                                     "field '" + c->rq.messages_field + "': " + why));
  converse_append(c, std::make_shared<new_messages>(std::move(*fresh)), 0);
}

void follow(const conversation_ptr& c, const history_plan& plan) {
  if (auto refused = unmatched_summary(c->rq.sent, plan.replay ? c->rq.sent.size() : plan.known))
    return failed(c, caf::make_error(errc::bad_request,
                                     "field '" + c->rq.messages_field + "': " + *refused));
  if (!plan.roll_back)
    return carry_out(c, plan);
  c->conv->count.rebased.fetch_add(1);
  c->events->rebasing(plan);
  c->conv->drop_print(c->rq.key); // the rollback changes rows before the print's end
  ask<std::vector<message>>(c, c->cfg().gateway, c->cfg().turn_timeout, gw_rollback_atom_v,
                            c->rq.key, plan.last_kept_id, c->rq.branch_label,
                            reachable_owner(c->r->scope()))
    .then([c, plan](caf::expected<std::vector<message>> live) {
      if (!live)
        return failed(c, live.error());
      carry_out(c, plan);
    });
}

using conversation_then = std::function<void(conversation_rows&)>;

// The conversation rows of the request's session and the parents it continues.
void read_conversation(const conversation_ptr& c, conversation_then then) {
  read_key_conversation(c, c->cfg().storage, c->cfg().read_timeout, c->rq.key, c->session_id,
                        c->parent_id, std::move(then),
                        [c](const caf::error& err) { failed(c, err); });
}

// The slow path: every conversation row, matched one by one.
void match_rows(const conversation_ptr& c) {
  c->conv->count.history_reads.fetch_add(1);
  read_conversation(c, [c](conversation_rows& conv) {
    // The print folded anew: one kept from before a rollback by another route would send
    // every later request here again.
    c->conv->keep_print(c->rq.key, print_of_conversation(conv, c->rules(), c->session_id));
    follow(c, plan_from_conversation(c->rq.sent, c->style, conv, c->rules()));
  });
}

void match_print(const conversation_ptr& c, const history_print& p) {
  auto plan = plan_from_print(c->rq.sent, c->style, p);
  if (plan.need_rows)
    return match_rows(c);
  follow(c, plan);
}

// The key's print brought up to date with the rows stored since, then the plan.
void match(const conversation_ptr& c) {
  if (c->session_id.empty()) // a new key: nothing stored
    return match_print(c, history_print{});
  auto known = c->conv->print_of(c->rq.key);
  history_print p;
  if (known && known->session_id == c->session_id)
    p = std::move(*known);
  else if (!c->parent_id.empty()) // perhaps a continuation: its conversation
    return match_rows(c);
  else
    p.session_id = c->session_id;
  auto from = p.last_row_id + 1;
  ask<std::vector<message>>(c, c->cfg().storage, c->cfg().read_timeout, st_range_atom_v,
                            c->session_id, from, conversation_last_row)
    .then([c, known = std::move(p)](caf::expected<std::vector<message>> rows) {
      if (!rows)
        return failed(c, rows.error());
      auto p = known;
      fold_rows(p, *rows, c->rules());
      c->conv->keep_print(c->rq.key, p);
      match_print(c, p);
    });
}

// Bounds the rows read for a key's first answer (as the turns' replay does).
constexpr int64_t door_idempotent_rows = 512;

caf::error idempotency_refusal(idempotency_verdict v, const conversation_ptr& c) {
  auto text = idempotency_refusal_text(v, visible_key(c->rq.key), c->rq.idempotency_key);
  auto code = v == idempotency_verdict::mismatch     ? errc::idempotency_key_reused
              : v == idempotency_verdict::unanswered ? errc::idempotency_unanswered
                                                     : errc::idempotency_in_flight;
  return caf::make_error(code, std::move(text));
}

// The request's Idempotency-Key, before anything is matched or written: the gateway's
// in-flight mark taken and the rows stored under the key read; the first answer again,
// a refusal, or `fresh` with the mark (nullptr: the request writes no row of its own,
// policies/idempotency.hpp door_keyed_row).
void check_idempotency(const conversation_ptr& c, std::function<void(idempotency_hold_ptr)> fresh) {
  auto keyed = door_keyed_row(c->rq.sent);
  if (!keyed)
    return fresh(nullptr);
  ask<std::vector<message>>(c, c->cfg().gateway, c->cfg().read_timeout, gw_idem_atom_v,
                            c->rq.key, c->rq.idempotency_key, door_idempotent_rows)
    .then([c, keyed = std::move(*keyed), fresh](caf::expected<std::vector<message>> rows) {
      if (!rows) {
        if (rows.error() == caf::sec::request_timeout) // it may have marked after all
          caf::anon_send(c->cfg().gateway, gw_idem_atom_v, c->rq.key, c->rq.idempotency_key);
        return failed(c, rows.error());
      }
      auto hold = std::make_shared<idempotency_hold>(c->cfg().gateway, c->rq.key,
                                                     c->rq.idempotency_key);
      auto v = decide_door_idempotent(*rows, keyed);
      if (v == idempotency_verdict::fresh)
        return fresh(std::move(hold));
      if (v != idempotency_verdict::replay)
        return failed(c, idempotency_refusal(v, c));
      auto answer = *turn_answer(turn_answer_rows(*rows));
      c->conv->count.replayed.fetch_add(1);
      c->release();
      hold.reset();
      c->events->replay_by_key(answer);
    });
}

// After the ownership check (so that a foreign key answers as unknown, busy or not):
// the key claimed for this conversation, then matched.
void claim_and_match(const conversation_ptr& c) {
  if (!c->rq.idempotency_key.empty() && !c->rq.idempotency_held)
    return check_idempotency(c, [c](idempotency_hold_ptr hold) {
      if (!hold) // the request writes no row of its own: its key is not kept
        c->rq.idempotency_key.clear();
      c->rq.idempotency_held = std::move(hold);
      claim_and_match(c);
    });
  if (!c->conv->claim(c->rq.key)) // two transcripts matched at once would both be stored
    return failed(c, caf::make_error(
      errc::session_busy, "session '" + visible_key(c->rq.key)
                            + "' is answering another request of this key; retry when it "
                              "has been answered"));
  c->claimed = true;
  match(c);
}

void open_session(const conversation_ptr& c) {
  ask<session_snapshot>(c, c->cfg().gateway, c->cfg().read_timeout, gw_state_atom_v, c->rq.key,
                        reachable_owner(c->r->scope()))
    .then([c](caf::expected<session_snapshot> snap) {
      if (!snap) {
        if (snap.error() != errc::not_found)
          return failed(c, snap.error());
        return claim_and_match(c);
      }
      const auto& owner = snap->record.user_id;
      if (!c->rq.user.empty() && c->rq.user != owner) {
        if (!c->r->scope().is_admin()) { // a user token: answered as an unknown key
          c->r->refused_for_scope();
          return failed(c, caf::make_error(errc::not_found, unknown_key_message(visible_key(c->rq.key))));
        }
        return failed(c, caf::make_error(
          errc::bad_request, "field 'user': session '" + visible_key(c->rq.key) + "' belongs to another user"));
      }
      c->session_id = snap->record.id;
      c->parent_id = snap->record.parent_id;
      c->events->opened(snap->record);
      claim_and_match(c);
    });
}

} // namespace

namespace {

bool same_letters(std::string_view v, std::string_view lower) {
  if (v.size() != lower.size())
    return false;
  for (size_t i = 0; i < v.size(); ++i)
    if ((v[i] | 0x20) != lower[i])
      return false;
  return true;
}

} // namespace

bool is_true_flag(std::string_view v) { return v == "1" || same_letters(v, "true"); }

bool is_off_flag(std::string_view v) {
  return v == "0" || same_letters(v, "false") || same_letters(v, "off");
}

conversation_config conversation_config_of(const api_state& s) {
  conversation_config c;
  c.gateway = s.gateway;
  c.storage = s.storage;
  c.turn_timeout = s.turn_timeout;
  c.read_timeout = s.opt.read_timeout;
  c.default_user = s.opt.default_user;
  const auto& g = s.rt.config().gateway;
  c.visibility.daemon_system_prompt = !g.system_prompt.empty() || !g.skills_dir.empty();
  for (auto t : {builtin_tool::session_search, builtin_tool::memory, builtin_tool::skill_view})
    c.visibility.builtin_names.emplace_back(tool_name_of(t));
  return c;
}

door_conversations::door_conversations(conversation_config cfg)
  : s_(std::make_shared<shared>(std::move(cfg))) {}

void door_conversations::run(const door_request_ptr& r,
                             std::shared_ptr<conversation_events> events,
                             conversation_request rq) {
  auto c = std::make_shared<conversation_call>();
  c->conv = s_;
  c->r = r;
  c->events = std::move(events);
  c->rq = std::move(rq);
  guarded(c, [&] {
    if (auto why = key_refusal(visible_key(c->rq.key), session_key_max_bytes); !why.empty())
      return failed(c, caf::make_error(errc::bad_request, why));
    if (is_true_flag(r->request().header(abandon_pending_header)))
      c->rq.turn.abandon_pending = true;
    if (auto b = r->request().header(builtin_tools_header); !b.empty()) {
      if (!is_off_flag(b) && !is_true_flag(b) && !same_letters(b, "on"))
        return failed(c, caf::make_error(
          errc::bad_request, "header '" + std::string{builtin_tools_header}
                               + "' must be on, off, 1, 0, true or false"));
      c->rq.turn.options.builtin_tools = !is_off_flag(b);
    }
    c->style = c->rq.style ? *c->rq.style : style_of(c->rq.sent);
    (c->style == history_style::stateful ? s_->count.stateful : s_->count.full_history)
      .fetch_add(1);
    open_session(c);
  });
}

void door_conversations::check_key(const door_request_ptr& r,
                                   std::shared_ptr<conversation_events> events,
                                   conversation_request rq,
                                   std::function<void(idempotency_hold_ptr)> fresh) {
  auto c = std::make_shared<conversation_call>();
  c->conv = s_;
  c->r = r;
  c->events = std::move(events);
  c->rq = std::move(rq);
  guarded(c, [&] { check_idempotency(c, std::move(fresh)); });
}

const door_conversations::counters& door_conversations::counts() const { return s_->count; }

bool door_conversations::hold_key(const std::string& key) { return s_->claim(key); }

void door_conversations::release_key(const std::string& key) {
  s_->drop_print(key); // the hold may have rolled back rows before the print's end
  s_->release(key);
}

} // namespace mneme::api
