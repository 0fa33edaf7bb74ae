// The items of the Conversations API (list, add, fetch, delete) and the input items of a
// stored response; see conversations_door.hpp and policies/conversation_items.hpp.
//
// Decisions where the issue is silent:
//   - a list reads every row of the conversation: the key's current session and the
//     sessions it continues (a child session, an exhaustion reset; not a reset that began
//     anew), each row once (policies/history_match.hpp "Continuations"); only an item of
//     the current session's own rows can be deleted (an earlier session's is a 400);
//   - an unknown `after` is a 400 naming it; an item id that names no item of the
//     conversation is a 404;
//   - a delete or an add while a response on the conversation is on its way is refused
//     at once with that door's own busy refusal (session_busy, 429 + Retry-After), not
//     queued: the rule of the door's concurrent requests, which the SDKs retry; reads
//     (list, fetch) are never held;
//   - the input items of a response: the rows after its previous response's answer (a
//     chain), after the conversation's last answer before it (`conversation`), or its
//     whole transcript (neither), up to its own answer (policies/conversation_items.hpp).
#include <limits>

#include "apps/common/api/doors/openai_responses/conversations_state.hpp"
#include "apps/common/api/doors/openai_responses/conversations_wire.hpp"
#include "apps/common/api/plumbing/route_table.hpp"
#include "policies/history_match.hpp"

namespace mneme::api {

using nlohmann::json;

namespace {

constexpr const char* item_delete_label = "conversation-item-delete";

// The page the request's query asks for of `list`, answered; or the 400 of its query.
void answer_page(const conversation_call_ptr& c, const item_list& list) {
  auto rq = decode_item_page(parse_query(c->r->request().target));
  if (!rq)
    return c->refuse(400, "bad_request", error_message_of(rq.error()));
  auto page = page_of_items(list.ids, *rq);
  if (!page.after_found)
    return c->refuse(400, "bad_request",
                     "query parameter 'after': no item '" + rq->after + "' in this list");
  c->ok(item_list_page(list, page));
}

std::vector<message> item_rows(const conversation_call_ptr& c, const std::vector<message>& rows) {
  return visible_rows(rows, c->conv().visibility, nullptr);
}

// The item `item_id` of the conversation's rows, then `then(list, index, conv)`; else 404.
// `hold`: the rows are read under the key's hold (conversation_call::hold), refused busy
// while a response has it.
void with_item(const conversation_call_ptr& c, const std::string& item_id, bool hold,
               std::function<void(const conversation_view&, const item_list&, size_t,
                                  conversation_rows&)> then) {
  auto missing = [c, item_id] {
    c->refuse(404, "not_found",
              "No item found with id '" + item_id + "' in conversation '" + c->id + "'.");
  };
  if (!parse_conversation_item_id(item_id))
    return with_conversation(c, [missing](conversation_view&) { missing(); });
  with_conversation(c, [c, item_id, hold, then, missing](conversation_view& v) {
    if (hold && !c->hold(v.stored_key))
      return c->busy();
    with_conversation_rows(c, v, [c, v, item_id, then, missing](conversation_rows& conv) {
      auto list = items_of_rows(item_rows(c, conv.rows));
      for (size_t i = 0; i < list.ids.size(); ++i)
        if (list.ids[i] == item_id)
          return then(v, list, i, conv);
      missing();
    });
  });
}

} // namespace

void conversations_door::list_items(const door_request_ptr& r, const std::string& id) {
  auto c = conversation_call_of(s_, r, id, op::items_list);
  guarded(c, [&] {
    with_conversation(c, [c](conversation_view& v) {
      with_conversation_rows(c, v, [c](conversation_rows& conv) {
        answer_page(c, items_of_rows(item_rows(c, conv.rows)));
      });
    });
  });
}

void conversations_door::add_items(const door_request_ptr& r, const std::string& id) {
  auto c = conversation_call_of(s_, r, id, op::items_add);
  guarded(c, [&] {
    auto items = decode_conversation_items(r->request().body);
    if (!items)
      return c->refuse(400, "bad_request", error_message_of(items.error()));
    with_conversation(c, [c, items = std::move(*items)](conversation_view& v) {
      if (!c->hold(v.stored_key)) // never appended between a response's question and answer
        return c->busy();
      append_rows(c, v, items, [c, items](std::vector<int64_t>& ids) {
        auto rows = items;
        for (size_t i = 0; i < rows.size(); ++i)
          rows[i].id = ids[i];
        auto list = items_of_rows(rows);
        item_page all;
        for (size_t i = 0; i < list.ids.size(); ++i)
          all.indexes.push_back(i);
        c->door->log->info("conversation={} event=conversation_items_added rows={}",
                           log_quoted(c->id),
                           rows.size());
        c->ok(item_list_page(list, all));
      });
    });
  });
}

void conversations_door::fetch_item(const door_request_ptr& r, const std::string& id,
                                    const std::string& item) {
  auto c = conversation_call_of(s_, r, id, op::item_get);
  guarded(c, [&] {
    with_item(c, item, false,
              [c](const conversation_view&, const item_list& list, size_t i,
                  conversation_rows&) { c->ok(list.items[i]); });
  });
}

void conversations_door::remove_item(const door_request_ptr& r, const std::string& id,
                                     const std::string& item) {
  auto c = conversation_call_of(s_, r, id, op::item_delete);
  guarded(c, [&] {
    auto ref = parse_conversation_item_id(item);
    with_item(c, item, true, [c, ref](const conversation_view& v, const item_list&, size_t,
                                      conversation_rows& conv) {
      if (ref->row_id <= conv.boundary_id)
        return c->refuse(400, "bad_request",
                         "item '" + conversation_item_id(*ref)
                           + "' cannot be deleted: it is of an earlier session of this "
                             "conversation (before a continuation); only the current "
                             "session's items can be");
      std::vector<message> from;
      for (auto& m : conv.own)
        if (m.id >= ref->row_id)
          from.push_back(std::move(m));
      auto plan = plan_item_deletion(from);
      if (!plan.refusal.empty())
        return c->refuse(400, "bad_request", "item '" + conversation_item_id(*ref)
                                               + "' cannot be deleted: " + plan.refusal);
      ask<std::vector<message>>(c, c->conv().gateway, c->conv().turn_timeout,
                                gw_rollback_atom_v, v.stored_key, plan.rollback_mark,
                                std::string{item_delete_label}, reachable_owner(c->r->scope()))
        .then([c, v, plan](caf::expected<std::vector<message>> live) {
          if (!live)
            return c->fail(live.error());
          c->door->log->info(
            "conversation={} session={} event=conversation_item_deleted row={} reappended={}",
            log_quoted(c->id), v.session_id, plan.rollback_mark + 1, plan.reappend.size());
          append_rows(c, v, plan.reappend, [c, v](std::vector<int64_t>&) {
            c->ok(conversation_object(v.id, v.created_at_s, v.metadata));
          });
        });
    });
  });
}

void conversations_door::input_items(const door_request_ptr& r, const std::string& response_id) {
  auto c = conversation_call_of(s_, r, response_id, op::input_items);
  guarded(c, [&] {
    auto unknown = [c] {
      c->refuse(404, "not_found", "No response found with id '" + c->id + "'.");
    };
    ask<response_record>(c, c->conv().storage, c->conv().read_timeout, st_resp_get_atom_v, c->id)
      .then([c, unknown](caf::expected<response_record> rec) {
        if (!rec && rec.error() != errc::not_found)
          return c->fail(rec.error());
        if (!rec || rec->deleted_at_ms != 0 || is_conversation_record_id(rec->id))
          return unknown();
        if (!may_reach(c->r->scope(), rec->user_id)) {
          c->r->refused_for_scope();
          return unknown();
        }
        auto body = json::parse(rec->body, nullptr, false);
        auto given = [&body](const char* name) {
          return body.is_object() && body.contains(name) && !body[name].is_null();
        };
        bool continued_conversation = given("conversation");
        std::string previous =
          given("previous_response_id") && body["previous_response_id"].is_string()
            ? body["previous_response_id"].get<std::string>()
            : std::string{};
        auto answer = [c, rec = *rec, continued_conversation](int64_t previous_answer) {
          if (rec.last_row_id <= 1)
            return answer_page(c, item_list{});
          ask<std::vector<message>>(c, c->conv().storage, c->conv().read_timeout,
                                    st_range_atom_v, rec.session_id, int64_t{1},
                                    rec.last_row_id - 1)
            .then([c, previous_answer, continued_conversation](
                    caf::expected<std::vector<message>> rows) {
              if (!rows)
                return c->fail(rows.error());
              auto visible = visible_rows(*rows, c->conv().visibility, nullptr);
              answer_page(c, items_of_rows(response_input_rows(visible, previous_answer,
                                                               continued_conversation)));
            });
        };
        if (previous.empty())
          return answer(0);
        ask<response_record>(c, c->conv().storage, c->conv().read_timeout, st_resp_get_atom_v,
                             previous)
          .then([answer, sid = rec->session_id](caf::expected<response_record> prev) {
            // a previous response of another session (continued in a child): none here
            answer(prev && prev->session_id == sid ? prev->last_row_id : 0);
          });
      });
  });
}

} // namespace mneme::api
