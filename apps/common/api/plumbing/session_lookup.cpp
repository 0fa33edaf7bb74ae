// The session behind a {key}; see session_lookup.hpp.
#include "apps/common/api/plumbing/session_lookup.hpp"

#include "apps/common/api/http_status.hpp"
#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/api_state.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "apps/common/api/plumbing/checks.hpp"

namespace mneme::api {

void stored_session(const call_ptr& c, const std::string& key,
                    std::function<void(caf::expected<session_record>)> then) {
  session_filter f;
  f.session_key = key;
  f.open_only = true;
  f.limit = 1;
  auto& api = *c->api;
  ask<std::vector<session_record>>(c, api.storage, api.opt.read_timeout, st_list_atom_v, f)
    .then([c, key, then](caf::expected<std::vector<session_record>> found) {
      if (!found)
        return then(caf::expected<session_record>{found.error()});
      if (!found->empty())
        return then(caf::expected<session_record>{std::move(found->front())});
      ask<session_record>(c, c->api->storage, c->api->opt.read_timeout, st_session_atom_v, key)
        .then([key, then](caf::expected<session_record> rec) {
          if (!rec && rec.error() == errc::not_found)
            return then(caf::expected<session_record>{
              caf::make_error(errc::not_found, unknown_key_message(key))});
          then(std::move(rec));
        });
    });
}

void stored_session_id(const call_ptr& c, const std::string& key,
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
  stored_session_id(c, c->path[0], [c, then](caf::expected<std::string> id) {
    if (!id)
      return fail(c, id.error());
    then(*id);
  });
}

void with_owned_key(const call_ptr& c, const route_handler& route) {
  if (c->who.is_admin())
    return route(c);
  auto key = c->path[0];
  stored_session(c, key, [c, key, route](caf::expected<session_record> rec) {
    if (!rec && rec.error() != errc::not_found)
      return fail(c, rec.error());
    access_question q{route_access::key_owned, c->who, {}, std::nullopt};
    if (rec)
      q.key_owner = rec->user_id;
    if (decide_access(q) != access_verdict::allow) {
      c->refused_for_scope();
      return send_error(c, 404, "not_found", unknown_key_message(key));
    }
    route(c);
  });
}

void answer_appended(const call_ptr& c, const std::string& key, int64_t id,
                     std::string fallback_sid, std::function<void(json&)> extra) {
  ask<session_snapshot>(c, c->api->gateway, c->api->opt.read_timeout, gw_state_atom_v, key)
    .then([c, id, fallback_sid, extra](caf::expected<session_snapshot> snap) {
      json body{{"id", id}};
      body["session_id"] = snap ? snap->record.id : fallback_sid;
      extra(body);
      send_json(c, 201, body);
    });
}

} // namespace mneme::api
