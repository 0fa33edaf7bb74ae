// Facts, the semantic memory (docs/memory.md; docs/api.md "Facts"): a user's facts
// listed or searched, set and removed by key, and put into a session as a context row.
//
// Decisions where the SPEC is silent:
//   - {user} and {key} are path segments (percent-decoded after the split: a user may
//     hold an encoded '/', the fact key is the rest of the path); PUT answers the
//     active version, DELETE the tombstone (nothing is deleted), both 200; a remove of
//     a key without an active fact is 404;
//   - POST /v1/sessions/{key}/facts puts the facts of the session's own user into it (a
//     "user" naming someone else is refused: facts never cross tenants); a key that is
//     not open starts a session for "user" (or gateway.default_user) like an append.
#include <algorithm>

#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "apps/common/api/plumbing/checks.hpp"
#include "apps/common/api/plumbing/query_vector.hpp"
#include "apps/common/api/plumbing/request_decoder.hpp"
#include "apps/common/api/plumbing/session_lookup.hpp"
#include "apps/common/api/routes/route_groups.hpp"
#include "policies/client_text.hpp"
#include "policies/facts_context.hpp"
#include "policies/key_namespace.hpp"
#include "store/facts.hpp"

namespace mneme::api {

namespace {

void list_facts(const call_ptr& c) {
  fact_query q;
  q.user_id = c->path[0];
  q.text = c->query.value_or("q", "");
  if (!check(c, "the user", q.user_id, user_max_bytes) || !utf8_param(c, "q", q.text)
      || !int_param(c, "limit", 1, fact_query_max_limit, q.limit)
      || !bool_param(c, "include_inactive", q.include_inactive))
    return;
  auto text = q.text;
  with_query_vector(c, std::move(text), [c, q = std::move(q)](std::vector<float> v) mutable {
    q.query_vector = std::move(v);
    ask<std::vector<fact_record>>(c, c->api->storage, c->read_timeout(), st_facts_atom_v,
                                  std::move(q))
      .then([c](caf::expected<std::vector<fact_record>> found) {
        if (!found)
          return fail(c, found.error());
        send_json(c, 200, {{"facts", to_json(*found)}});
      });
  });
}

bool check_fact_path(const call_ptr& c) {
  return check(c, "the user", c->path[0], user_max_bytes)
         && check(c, "the fact key", c->path[1], fact_key_max_bytes);
}

void put_fact(const call_ptr& c) {
  if (!check_fact_path(c))
    return;
  auto in = decode_fact_put(c->req.body);
  if (!in)
    return fail(c, in.error());
  fact_record f;
  f.user_id = c->path[0];
  f.key = c->path[1];
  f.value = std::move(in->value);
  f.source_session = std::move(in->source_session);
  ask<fact_record>(c, c->api->storage, c->read_timeout(), st_fact_put_atom_v, std::move(f),
                   int64_t{c->api->clock()})
    .then([c](caf::expected<fact_record> stored) {
      if (!stored)
        return fail(c, stored.error());
      send_json(c, 200, to_json(*stored));
    });
}

void remove_fact(const call_ptr& c) {
  if (!check_fact_path(c))
    return;
  ask<fact_record>(c, c->api->storage, c->read_timeout(), st_fact_del_atom_v, c->path[0],
                   c->path[1], int64_t{c->api->clock()})
    .then([c](caf::expected<fact_record> retired) {
      if (!retired)
        return fail(c, retired.error());
      send_json(c, 200, to_json(*retired));
    });
}

void inject_found(const call_ptr& c, const std::string& key, const std::string& user,
                  const std::string& sid, fact_query q);

// Facts of `user` into the key's session (sid: its id when open, else empty): found by
// words, and by meaning too while embeddings are on.
void inject_for(const call_ptr& c, const std::string& key, const std::string& user,
                const std::string& sid, facts_inject_request in) {
  fact_query q;
  q.user_id = user;
  q.text = in.query;
  q.limit = in.limit;
  auto then = [c, key, user, sid, q = std::move(q)](std::vector<float> v) mutable {
    q.query_vector = std::move(v);
    inject_found(c, key, user, sid, std::move(q));
  };
  with_query_vector(c, in.query, std::move(then));
}

// inject_for's second step: the facts found for `q` into the key's session.
void inject_found(const call_ptr& c, const std::string& key, const std::string& user,
                  const std::string& sid, fact_query q) {
  ask<std::vector<fact_record>>(c, c->api->storage, c->read_timeout(), st_facts_atom_v,
                                std::move(q))
    .then([c, key, user, sid](caf::expected<std::vector<fact_record>> found) {
      if (!found)
        return fail(c, found.error());
      std::vector<remembered_fact> facts;
      for (auto& f : *found)
        facts.push_back({std::move(f.key), std::move(f.value)});
      auto row = facts_context_message(facts, sid, c->api->clock());
      auto shown = static_cast<int64_t>(std::min(facts.size(), facts_context_max_facts));
      auto content = row.content;
      ask<int64_t>(c, c->api->gateway, c->api->turn_timeout, gw_append_atom_v, key, user, row)
        .then([c, key, user, sid, shown, content](caf::expected<int64_t> id) {
          if (!id)
            return fail(c, id.error());
          answer_appended(c, key, *id, sid, [user, shown, content](json& body) {
            body["user"] = user;
            body["facts"] = shown;
            body["content"] = content;
          });
        });
    });
}

void inject_facts(const call_ptr& c) {
  auto in = keyed_body(
    c, [](std::string_view body) { return decode_facts_inject(body, fact_query_max_limit); });
  if (!in || !check_optional_user(c, "field 'user'", in->user))
    return;
  auto k = key_of_call(c, in->user);
  if (!k)
    return;
  auto key = k->stored;
  in->user = k->user;
  ask<session_snapshot>(c, c->api->gateway, c->read_timeout(), gw_state_atom_v, key,
                        owner_of_call(c))
    .then([c, key, in = std::move(*in)](caf::expected<session_snapshot> hosted) {
      std::string user = in.user;
      std::string sid;
      if (hosted) {
        if (!user.empty() && user != hosted->record.user_id) // a session stored unscoped
          return send_error(c, 400, "bad_request",
                            "field 'user': session '" + visible_key(key)
                              + "' belongs to another user");
        user = hosted->record.user_id;
        sid = hosted->record.id;
      } else if (hosted.error() != errc::not_found) {
        return fail(c, hosted.error());
      }
      if (user.empty())
        user = c->api->opt.default_user;
      inject_for(c, key, user, sid, in);
    });
}

} // namespace

void add_fact_routes(route_registry& r, const api_state&) {
  r.add("POST", "/v1/sessions/{}/facts", inject_facts, route_access::key_owned);
  r.add("GET", "/v1/users/{}/facts", list_facts, route_access::user_named);
  r.add("PUT", "/v1/users/{}/facts/{*}", put_fact, route_access::user_named);
  r.add("DELETE", "/v1/users/{}/facts/{*}", remove_fact, route_access::user_named);
}

} // namespace mneme::api
