// A turn (docs/api.md "POST /v1/sessions/{key}/turns"): the user's message or the
// results of the pending tool calls, answered by the model through the session; with
// "stream": true the answer goes out as server-sent events (routes/turn_stream.hpp).
#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "apps/common/api/plumbing/checks.hpp"
#include "apps/common/api/plumbing/idempotency_header.hpp"
#include "apps/common/api/plumbing/request_decoder.hpp"
#include "apps/common/api/plumbing/session_lookup.hpp"
#include "apps/common/api/routes/route_groups.hpp"
#include "apps/common/api/routes/turn_stream.hpp"
#include "messages/llm_errc.hpp"

namespace mneme::api {

namespace {

void run_turn(const call_ptr& c) {
  auto in = keyed_body(c, decode_turn);
  if (!in || !check_optional_user(c, "field 'user'", in->user))
    return;
  auto k = key_of_call(c, in->user);
  if (!k)
    return;
  auto key = k->stored;
  in->user = k->user;
  auto idem = idempotency_key_of(c);
  if (!idem)
    return;
  in->input.idempotency_key = std::move(*idem);
  std::shared_ptr<turn_event_relay> relay;
  if (in->stream) {
    relay = std::make_shared<turn_event_relay>(c->reply);
    in->input.stream = relay;
  }
  ask<turn_reply>(c, c->api->gateway, c->api->turn_timeout, gw_turn_atom_v, key,
                  std::move(in->user), std::move(in->input))
    .then([c, relay](caf::expected<turn_reply> reply) {
      if (!relay) {
        if (!reply)
          return fail(c, reply.error());
        return send_json_replayable(c, 200, to_json(*reply), reply->replayed);
      }
      if (reply) {
        relay->finish(to_json(*reply));
      } else {
        if (c->forward_elsewhere(reply.error())) // refused before any piece was relayed
          return;
        auto [status, body] = error_answer(c, reply.error());
        if (!relay->fail(body)) { // nothing streamed yet: a plain HTTP error
          auto res = json_response(status, body);
          add_upstream_retry_after(res.headers, upstream_retry_after_of(reply.error()), status);
          return c->finish(std::move(res));
        }
      }
      c->streamed(); // the stream completed the request
    });
}

} // namespace

void add_turn_routes(route_registry& r, const api_state&) {
  r.add("POST", "/v1/sessions/{}/turns", run_turn, route_access::key_owned);
}

} // namespace mneme::api
