// The session behind a {key}; see session_lookup.hpp.
#include "apps/common/api/plumbing/session_lookup.hpp"

#include "apps/common/api/http_status.hpp"
#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/api_state.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "apps/common/api/plumbing/checks.hpp"
#include "policies/key_namespace.hpp"

namespace mneme::api {

std::optional<request_key> key_of_call(const call_ptr& c, const std::string& body_user) {
  request_key k;
  k.client = c->path[0];
  auto named = c->query.value_or("user", "");
  if (!named.empty() && !check_optional_user(c, "parameter 'user'", named))
    return std::nullopt;
  if (!named.empty() && !body_user.empty() && named != body_user) {
    send_error(c, 400, "bad_request",
               "parameter 'user' and field 'user' name different users");
    return std::nullopt;
  }
  k.user = namespace_user(c->who.is_admin() ? std::string{} : c->who.user,
                          named.empty() ? body_user : named, c->api->opt.default_user);
  k.stored = stored_key(k.user, k.client);
  return k;
}

void stored_session(const call_ptr& c, const request_key& k,
                    std::function<void(caf::expected<session_record>)> then) {
  const auto& key = k.client;
  // Decided on the record found, the one the caller then reads.
  auto reachable = [c, key, then](session_record rec) {
    if (!may_reach(c->who, rec.user_id))
      return then(caf::expected<session_record>{caf::make_error(
        errc::foreign_session, "the session under key '" + key + "' belongs to another user")});
    then(caf::expected<session_record>{std::move(rec)});
  };
  auto by_id = [c, key, then, reachable] {
    ask<session_record>(c, c->api->storage, c->api->opt.read_timeout, st_session_atom_v, key)
      .then([key, then, reachable](caf::expected<session_record> rec) {
        if (!rec && rec.error() == errc::not_found)
          return then(caf::expected<session_record>{
            caf::make_error(errc::not_found, unknown_key_message(key))});
        if (!rec)
          return then(std::move(rec));
        reachable(std::move(*rec));
      });
  };
  // The newest open session under `stored`, else `next`.
  auto open_under = [c, then, reachable](const std::string& stored, std::function<void()> next) {
    session_filter f;
    f.session_key = stored;
    f.open_only = true;
    f.limit = 1;
    ask<std::vector<session_record>>(c, c->api->storage, c->api->opt.read_timeout,
                                     st_list_atom_v, f)
      .then([then, reachable, next](caf::expected<std::vector<session_record>> found) {
        if (!found)
          return then(caf::expected<session_record>{found.error()});
        if (!found->empty())
          return reachable(std::move(found->front()));
        next();
      });
  };
  // The key in its namespace; then as sent (a session stored without a user keeps its key
  // outside every namespace); then a session with that id.
  open_under(k.stored, [k, open_under, by_id] {
    if (k.stored == k.client)
      return by_id();
    open_under(k.client, by_id);
  });
}

void stored_session_id(const call_ptr& c, const request_key& key,
                       std::function<void(caf::expected<std::string>)> then) {
  stored_session(c, key, [then](caf::expected<session_record> rec) {
    if (!rec)
      return then(caf::expected<std::string>{rec.error()});
    then(caf::expected<std::string>{rec->id});
  });
}

void read_stored_session(const call_ptr& c, std::function<void(const std::string& sid)> then) {
  if (!check_read_key(c, c->path[0]))
    return;
  auto key = key_of_call(c);
  if (!key)
    return;
  stored_session_id(c, *key, [c, then](caf::expected<std::string> id) {
    if (!id)
      return fail(c, id.error());
    then(*id);
  });
}

std::string owner_of_call(const call_ptr& c) { return reachable_owner(c->who); }

void answer_appended(const call_ptr& c, const std::string& key, int64_t id,
                     std::string fallback_sid, std::function<void(json&)> extra) {
  ask<session_snapshot>(c, c->api->gateway, c->api->opt.read_timeout, gw_state_atom_v, key,
                        owner_of_call(c))
    .then([c, id, fallback_sid, extra](caf::expected<session_snapshot> snap) {
      json body{{"id", id}};
      body["session_id"] = snap ? snap->record.id : fallback_sid;
      extra(body);
      send_json(c, 201, body);
    });
}

} // namespace mneme::api
