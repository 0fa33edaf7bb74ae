// GET and DELETE /v1/responses/{id} of the Responses door (docs/api.md "Responses
// door"): a stored response answered again as it was, or marked deleted — no longer
// fetched nor continued; the session's rows stay (nothing is erased). POST
// /v1/responses/{id}/cancel: a stream in flight is stopped (responses_inflight.hpp) and
// answered as a `cancelled` response at once, its output the items the stream began,
// each `incomplete` as streamed (the stream ends with the same, and the record keeps
// them); a stored one
// that was cancelled is answered again; a stored one that finished is a 400 (OpenAI
// cancels only background responses; mneme has none).
#include <nlohmann/json.hpp>

#include "apps/common/api/doors/openai_responses/responses_door_state.hpp"
#include "apps/common/api/doors/openai_responses/responses_wire.hpp"
#include "apps/common/api/doors/openai_shape.hpp"
#include "apps/common/api/http_status.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "policies/client_text.hpp"
#include "store/response_records.hpp"

namespace mneme::api {

namespace {

// One GET or DELETE on its way (the context of its asks, plumbing/ask.hpp).
struct response_lookup {
  std::shared_ptr<responses_door::shared> door;
  door_request_ptr r;
  std::string id;

  caf::event_based_actor* actor() const { return r->actor(); }
  void on_exception(const std::exception& e) {
    door->log->error("response={} event=exception what={}", log_quoted(id),
                     log_quoted(e.what()));
    r->answer(openai_error_response(500, "internal", "internal error"));
  }
  void fail(const caf::error& err) {
    door->count.errors.fetch_add(1);
    if (err == errc::not_found)
      return r->answer(openai_error_response(404, "not_found", unknown_response_message(id)));
    r->answer(openai_error_response(http_status_of(err), error_code_of(err),
                                    error_message_of(err)));
  }
};
using lookup_ptr = std::shared_ptr<response_lookup>;

// The record of the id when the request may see it and it is not deleted, then `then`.
template <class F>
void with_record(const lookup_ptr& c, F then) {
  ask<response_record>(c, c->door->cfg.conversation.storage,
                       c->door->cfg.conversation.read_timeout, st_resp_get_atom_v, c->id)
    .then([c, then](caf::expected<response_record> rec) {
      if (!rec)
        return c->fail(rec.error());
      if (rec->deleted_at_ms != 0 || is_conversation_record_id(rec->id) // a conversation's
          || !response_visible_to(c->r->scope(), rec->user_id))
        return c->fail(caf::make_error(errc::not_found));
      then(*rec);
    });
}

lookup_ptr lookup_of(const std::shared_ptr<responses_door::shared>& door,
                     const door_request_ptr& r, const std::string& id) {
  auto c = std::make_shared<response_lookup>();
  c->door = door;
  c->r = r;
  c->id = id;
  return c;
}

} // namespace

void responses_door::fetch(const door_request_ptr& r, const std::string& id) {
  auto c = lookup_of(s_, r, id);
  guarded(c, [&] {
    with_record(c, [c](const response_record& rec) {
      c->r->answer(http_response{200, "application/json", rec.body, {}, false});
    });
  });
}

void responses_door::remove(const door_request_ptr& r, const std::string& id) {
  auto c = lookup_of(s_, r, id);
  guarded(c, [&] {
    with_record(c, [c](const response_record&) {
      ask<response_record>(c, c->door->cfg.conversation.storage,
                           c->door->cfg.conversation.turn_timeout, st_resp_del_atom_v, c->id,
                           int64_t{c->door->cfg.clock()})
        .then([c](caf::expected<response_record> rec) {
          if (!rec)
            return c->fail(rec.error());
          c->door->log->info("response={} session={} event=response_deleted", log_quoted(c->id),
                             rec->session_id);
          nlohmann::json body = {{"id", c->id}, {"object", "response"}, {"deleted", true}};
          c->r->answer(openai_json_response(200, body));
        });
    });
  });
}

void responses_door::cancel(const door_request_ptr& r, const std::string& id) {
  auto c = lookup_of(s_, r, id);
  guarded(c, [&] {
    responses_answer head;
    if (s_->inflight.cancel(id, r->scope(), head)) {
      head.status = "cancelled";
      c->door->log->info("response={} event=response_cancel_asked", log_quoted(id));
      return r->answer(openai_json_response(200, to_response_object(head)));
    }
    with_record(c, [c](const response_record& rec) {
      auto body = nlohmann::json::parse(rec.body, nullptr, false);
      auto status = body.is_object() ? body.value("status", std::string{"finished"})
                                     : std::string{"finished"};
      if (status == "cancelled")
        return c->r->answer(http_response{200, "application/json", rec.body, {}, false});
      c->door->count.errors.fetch_add(1);
      c->r->answer(openai_error_response(
        400, "bad_request",
        "Response '" + c->id + "' is " + status
          + ": only a streamed response in flight can be cancelled (mneme has no background "
            "responses)."));
    });
  });
}

} // namespace mneme::api
