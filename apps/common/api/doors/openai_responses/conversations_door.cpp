// The conversation objects of the Conversations API (create, fetch, update, delete) and
// what every request of it shares; see conversations_door.hpp.
//
// Decisions where the issue is silent:
//   - the owner of a conversation is the user token's user, else gateway.default_user
//     (OpenAI's API names no user here);
//   - POST /v1/conversations/{id} replaces the metadata object as OpenAI does (the
//     record's body is the one thing of it rewritten: store/conversation_rewrite.hpp);
//     a plain session key has no record to keep metadata in: the object again for `{}`,
//     a 400 for any other metadata;
//   - initial items that the session refuses (e.g. a function_call_output without its
//     call) answer the refusal and mark the new conversation deleted: its id is never
//     handed out half made (the rows appended before the refused one stay, as every row).
#include <limits>

#include "apps/common/api/doors/openai_responses/conversations_state.hpp"
#include "apps/common/api/doors/openai_responses/conversations_wire.hpp"
#include "apps/common/api/plumbing/checks.hpp"
#include "apps/common/api/plumbing/route_table.hpp"
#include "policies/key_namespace.hpp"
#include "store/os_random.hpp"

namespace mneme::api {

using nlohmann::json;

void with_conversation(const conversation_call_ptr& c,
                       std::function<void(conversation_view&)> then) {
  auto on_session = [c, then](conversation_view v) {
    ask<session_snapshot>(c, c->conv().gateway, c->conv().read_timeout, gw_state_atom_v,
                          v.stored_key, reachable_owner(c->r->scope()))
      .then([c, then, known = std::move(v)](caf::expected<session_snapshot> snap) {
        auto v = known;
        if (!snap) {
          if (snap.error() != errc::not_found || !v.has_record)
            return c->fail(snap.error());
          return then(v); // a conversation without items yet
        }
        v.session_id = snap->record.id;
        v.parent_id = snap->record.parent_id;
        if (!v.has_record) {
          v.owner = snap->record.user_id;
          v.created_at_s = snap->record.started_at_ms / 1000;
        }
        then(v);
      });
  };
  conversation_view v;
  v.id = c->id;
  if (!is_conversation_record_id(c->id)) {
    // A plain key: the request's namespace (docs/api.md "Authentication"); an admin
    // names the user with ?user=, as on the sessions routes.
    auto named = parse_query(c->r->request().target).value_or("user", "");
    if (auto no = user_refusal(c->r->scope(), "parameter 'user'", named)) {
      if (no->status == 403)
        c->r->refused_for_scope();
      return c->refuse(no->status, no->code, no->message);
    }
    std::string refused;
    v.stored_key = door_stored_key(c->r->scope(), named, c->door->cfg.default_user, c->id,
                                   refused);
    if (!refused.empty())
      return c->refuse(400, "bad_request", refused);
    return on_session(v);
  }
  ask<response_record>(c, c->conv().storage, c->conv().read_timeout, st_resp_get_atom_v, c->id)
    .then([c, known = v, on_session](caf::expected<response_record> rec) {
      auto v = known;
      if (!rec && rec.error() != errc::not_found)
        return c->fail(rec.error());
      if (!rec || rec->deleted_at_ms != 0) // conv_ ids are this API's: no record, unknown
        return c->unknown();
      if (!may_reach(c->r->scope(), rec->user_id)) {
        c->r->refused_for_scope();
        return c->unknown();
      }
      v.has_record = true;
      v.record = *rec;
      v.owner = rec->user_id;
      v.stored_key = stored_key(rec->user_id, v.id); // its owner's, whoever asks
      v.created_at_s = rec->created_at_ms / 1000;
      auto body = json::parse(rec->body, nullptr, false);
      if (body.is_object() && body.contains("metadata") && body["metadata"].is_object())
        v.metadata = body["metadata"];
      on_session(v);
    });
}

void with_conversation_rows(const conversation_call_ptr& c, const conversation_view& v,
                            std::function<void(conversation_rows&)> then) {
  if (v.session_id.empty()) {
    auto none = conversation_of({});
    return then(none);
  }
  read_key_conversation(c, c->conv().storage, c->conv().read_timeout, v.stored_key,
                        v.session_id, v.parent_id, std::move(then),
                        [c](const caf::error& err) { c->fail(err); });
}

namespace {

struct append_state {
  std::vector<message> rows;
  std::vector<int64_t> ids;
  std::function<void(std::vector<int64_t>&)> then;
  std::function<void(const caf::error&)> failed;
};

void append_next(const conversation_call_ptr& c, const conversation_view& v,
                 const std::shared_ptr<append_state>& st) {
  if (st->ids.size() == st->rows.size())
    return st->then(st->ids);
  auto row = st->rows[st->ids.size()];
  ask<int64_t>(c, c->conv().gateway, c->conv().turn_timeout, gw_append_atom_v, v.stored_key,
               v.owner,
               std::move(row))
    .then([c, v, st](caf::expected<int64_t> id) {
      if (!id)
        return st->failed ? st->failed(id.error()) : c->fail(id.error());
      st->ids.push_back(*id);
      append_next(c, v, st);
    });
}

} // namespace

void append_rows(const conversation_call_ptr& c, const conversation_view& v,
                 std::vector<message> rows, std::function<void(std::vector<int64_t>&)> then,
                 std::function<void(const caf::error&)> failed) {
  auto st = std::make_shared<append_state>();
  st->rows = std::move(rows);
  st->then = std::move(then);
  st->failed = std::move(failed);
  append_next(c, v, st);
}

conversations_door::conversations_door(conversations_config cfg)
  : s_(std::make_shared<shared>(std::move(cfg))) {}

std::string conversations_door::metrics_text() const {
  static constexpr const char* op_names[op_count] = {
    "create",   "get",      "update",      "delete",     "items_list",
    "items_add", "item_get", "item_delete", "input_items"};
  std::string out;
  auto family = [&](const char* name, const char* help,
                    const std::array<std::atomic<int64_t>, op_count>& n) {
    out += std::string{"# HELP "} + name + " " + help + "\n# TYPE " + name + " counter\n";
    for (size_t i = 0; i < op_count; ++i)
      out += std::string{name} + "{door=\"responses\",op=\"" + op_names[i] + "\"} "
             + std::to_string(n[i].load()) + "\n";
  };
  family("mneme_door_conversation_requests_total",
         "Requests of the Conversations API routes by route", s_->requests);
  family("mneme_door_conversation_errors_total",
         "Conversations API requests answered with an error, by route", s_->errors);
  return out;
}

void conversations_door::create(const door_request_ptr& r) {
  auto c = conversation_call_of(s_, r, os_random_id("conv_"), op::create);
  guarded(c, [&] {
    auto in = decode_conversation_create(r->request().body);
    if (!in)
      return c->refuse(400, "bad_request", error_message_of(in.error()));
    conversation_view v;
    v.id = c->id;
    v.has_record = true;
    v.owner = r->scope().is_admin() ? s_->cfg.default_user : r->scope().user;
    v.stored_key = stored_key(v.owner, v.id);
    auto now = s_->cfg.clock();
    v.created_at_s = now / 1000;
    v.metadata = in->metadata;
    response_record rec;
    rec.id = v.id;
    rec.user_id = v.owner;
    rec.session_key = v.stored_key;
    rec.created_at_ms = now;
    auto object = conversation_object(v.id, v.created_at_s, v.metadata);
    rec.body = object.dump(-1, ' ', false, json::error_handler_t::replace);
    ask<caf::ok_atom>(c, s_->conv().storage, s_->conv().turn_timeout, st_resp_put_atom_v,
                      std::move(rec))
      .then([c, v, object, items = std::move(in->items)](caf::expected<caf::ok_atom> put) {
        if (!put)
          return c->fail(put.error());
        c->door->log->info("conversation={} event=conversation_created items={}", c->id,
                           items.size());
        append_rows(
          c, v, items, [c, object](std::vector<int64_t>&) { c->ok(object); },
          [c](const caf::error& refused) { // the id is never handed out half made
            ask<response_record>(c, c->conv().storage, c->conv().turn_timeout,
                                 st_resp_del_atom_v, c->id, int64_t{c->door->cfg.clock()})
              .then([c, refused](caf::expected<response_record>) { c->fail(refused); });
          });
      });
  });
}

void conversations_door::fetch(const door_request_ptr& r, const std::string& id) {
  auto c = conversation_call_of(s_, r, id, op::get);
  guarded(c, [&] {
    with_conversation(c, [c](conversation_view& v) {
      c->ok(conversation_object(v.id, v.created_at_s, v.metadata));
    });
  });
}

void conversations_door::update(const door_request_ptr& r, const std::string& id) {
  auto c = conversation_call_of(s_, r, id, op::update);
  guarded(c, [&] {
    auto md = decode_conversation_update(r->request().body);
    if (!md)
      return c->refuse(400, "bad_request", error_message_of(md.error()));
    with_conversation(c, [c, md = std::move(*md)](conversation_view& v) {
      auto object = conversation_object(v.id, v.created_at_s, md);
      if (md == v.metadata)
        return c->ok(object);
      if (!v.has_record)
        return c->refuse(400, "bad_request",
                         "field 'metadata': conversation '" + v.id
                           + "' is a session key not made by POST /v1/conversations: it has "
                             "no record to keep metadata in");
      auto rec = v.record;
      rec.body = object.dump(-1, ' ', false, json::error_handler_t::replace);
      ask<caf::ok_atom>(c, c->conv().storage, c->conv().turn_timeout, st_resp_put_atom_v,
                        std::move(rec))
        .then([c, object, pairs = md.size()](caf::expected<caf::ok_atom> put) {
          if (!put)
            return c->fail(put.error());
          c->door->log->info("conversation={} event=conversation_metadata_updated pairs={}",
                             log_quoted(c->id), pairs);
          c->ok(object);
        });
    });
  });
}

void conversations_door::remove(const door_request_ptr& r, const std::string& id) {
  auto c = conversation_call_of(s_, r, id, op::remove);
  guarded(c, [&] {
    with_conversation(c, [c](conversation_view& v) {
      if (!v.has_record)
        return c->refuse(400, "bad_request",
                         "conversation '" + v.id
                           + "' is a session key not made by POST /v1/conversations: it has "
                             "no record to delete (the sessions API reaches its session)");
      ask<response_record>(c, c->conv().storage, c->conv().turn_timeout, st_resp_del_atom_v,
                           c->id, int64_t{c->door->cfg.clock()})
        .then([c, v](caf::expected<response_record> rec) {
          if (!rec)
            return c->fail(rec.error());
          c->door->log->info("conversation={} session={} event=conversation_deleted",
                             log_quoted(c->id),
                             v.session_id);
          c->ok(conversation_deleted_object(c->id));
        });
    });
  });
}

} // namespace mneme::api
