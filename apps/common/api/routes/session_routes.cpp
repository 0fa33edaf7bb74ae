// The sessions (docs/api.md "Endpoints"): list, state, append, compact, compactions,
// checkpoints, rollback, export.
//
// Decisions where the SPEC is silent:
//   - a read by {key} first asks the gateway (open session under the key, rehydrated if
//     needed), then takes {key} as a stored session id (any state, ended included);
//   - GET /v1/sessions/{key} of a session that is not open answers a snapshot built
//     from the store (record, live rows and their token sum) instead of a session
//     actor's;
//   - checkpoints and export resolve {key} in the store only (plumbing/session_lookup.hpp)
//     and never start a session actor;
//   - POST /compact without around_id is T12 (whole session), with it T13;
//   - GET /compactions lists the session's compaction summaries (is_compaction_summary:
//     compactions and micro-compaction folds, not tool-output replacements) in id
//     order, whatever their state, read from its rows (st_range), each with the fields
//     of its compaction log row when it has one (store/compaction_log.hpp; a summary
//     written before the log existed, or a micro-compaction fold, has none:
//     "logged": false), and every log row (committed or not) as `attempts`;
//   - the session id of an append's answer comes from the gateway's state after the
//     append (a reset in between names the new session);
//   - POST /checkpoints with a name the session already has (active or undone by a
//     rollback) is 409 checkpoint_exists unless "replace":true; the check reads the
//     store's list first, so two simultaneous creates of a new name both succeed;
//   - GET /rows reads at most `limit` + 1 rows of the id range from the store (the one
//     beyond the page says where the next starts), whatever the range's size;
//   - GET /v1/sessions with a user token lists that user's sessions (?user=another is
//     403). Two users racing to open the same new key: the loser is refused where the
//     session is opened or read (the gateway, or the record read from the store): 404
//     as for an unknown key for a user token, 400 for an admin naming the other user.
#include <limits>
#include <numeric>
#include <optional>

#include "apps/common/api/http_status.hpp"
#include "apps/common/api/compactions_json.hpp"
#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "apps/common/api/plumbing/checks.hpp"
#include "apps/common/api/plumbing/idempotency_header.hpp"
#include "apps/common/api/plumbing/request_decoder.hpp"
#include "apps/common/api/plumbing/session_lookup.hpp"
#include "apps/common/api/routes/route_groups.hpp"
#include "policies/client_text.hpp"
#include "policies/key_namespace.hpp"
#include "store/compaction_log.hpp"

namespace mneme::api {

namespace {

void list_sessions(const call_ptr& c) {
  session_filter f;
  f.user_id = c->query.value_or("user", "");
  f.session_key = c->query.value_or("key", "");
  f.limit = session_list_default_limit;
  if (!check_optional_user(c, "parameter 'user'", f.user_id)
      || !check_read_key(c, f.session_key) || !bool_param(c, "open_only", f.open_only)
      || !int_param(c, "limit", 1, session_list_max_limit, f.limit))
    return;
  if (!f.session_key.empty()) { // in the namespace of the listed user (an admin: named or default)
    if (f.session_key.find(key_namespace_separator) != std::string::npos)
      return send_error(c, 400, "bad_request",
                        key_refusal(f.session_key, session_key_max_bytes));
    f.session_key = stored_key(namespace_user(c->who.is_admin() ? std::string{} : c->who.user,
                                              f.user_id, c->api->opt.default_user),
                               f.session_key);
  }
  ask<std::vector<session_record>>(c, c->api->storage, c->read_timeout(), st_list_atom_v, f)
    .then([c](caf::expected<std::vector<session_record>> found) {
      if (!found)
        return fail(c, found.error());
      auto list = json::array();
      for (const auto& s : *found)
        list.push_back(to_json(s));
      send_json(c, 200, {{"sessions", std::move(list)}});
    });
}

json checkpoints_json(const std::vector<checkpoint_record>& cs) {
  auto out = json::array();
  for (const auto& cp : cs)
    out.push_back(to_json(cp));
  return out;
}

// The state answer: snapshot + live rows (when asked) + the session's checkpoints.
void answer_state(const call_ptr& c, session_snapshot snap,
                  std::optional<std::vector<message>> live) {
  auto sid = snap.record.id;
  ask<std::vector<checkpoint_record>>(c, c->api->storage, c->read_timeout(),
                                      st_checkpoints_atom_v, sid)
    .then([c, snap = std::move(snap), live = std::move(live)](
            caf::expected<std::vector<checkpoint_record>> cps) {
      if (!cps)
        return fail(c, cps.error());
      auto body = to_json(snap);
      if (live)
        body["live"] = to_json(*live);
      body["checkpoints"] = checkpoints_json(*cps);
      send_json(c, 200, body);
    });
}

// GET /v1/sessions/{key} of a key the gateway does not hold: the stored session
// stored_session() finds (a key stored without a user, or an id: an ended session stays
// readable), decided on the record read there.
void stored_state(const call_ptr& c, const request_key& key, bool with_live) {
  stored_session(c, key, [c, with_live](caf::expected<session_record> rec) {
    if (!rec)
      return fail(c, rec.error());
    auto id = rec->id;
    ask<std::vector<message>>(c, c->api->storage, c->read_timeout(), st_live_atom_v, id)
      .then([c, rec = std::move(*rec), with_live](caf::expected<std::vector<message>> rows) {
        if (!rows)
          return fail(c, rows.error());
        session_snapshot snap;
        snap.record = rec;
        snap.live_messages = static_cast<int64_t>(rows->size());
        snap.live_tokens = std::accumulate(rows->begin(), rows->end(), int64_t{0},
                                           [](int64_t n, const message& m) {
                                             return n + m.token_estimate;
                                           });
        std::optional<std::vector<message>> live;
        if (with_live)
          live = std::move(*rows);
        answer_state(c, std::move(snap), std::move(live));
      });
  });
}

void session_state(const call_ptr& c) {
  bool with_live = true;
  if (!check_read_key(c, c->path[0]) || !bool_param(c, "live", with_live))
    return;
  auto k = key_of_call(c);
  if (!k)
    return;
  ask<session_snapshot>(c, c->api->gateway, c->read_timeout(), gw_state_atom_v, k->stored,
                        owner_of_call(c))
    .then([c, k = *k, with_live](caf::expected<session_snapshot> hosted) {
      if (!hosted) {
        if (hosted.error() == errc::not_found)
          return stored_state(c, k, with_live);
        return fail(c, hosted.error());
      }
      if (!with_live)
        return answer_state(c, std::move(*hosted), std::nullopt);
      ask<std::vector<message>>(c, c->api->gateway, c->read_timeout(), gw_live_atom_v, k.stored,
                                owner_of_call(c))
        .then([c, snap = std::move(*hosted)](caf::expected<std::vector<message>> rows) {
          if (!rows)
            return fail(c, rows.error());
          answer_state(c, snap, std::move(*rows));
        });
    });
}

void append_message(const call_ptr& c) {
  auto in = keyed_body(c, decode_append);
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
  if (!idem->empty()) {
    ask<idempotent_append>(c, c->api->gateway, c->api->turn_timeout, gw_idem_atom_v, key,
                           std::move(in->user), std::move(in->row), *idem)
      .then([c](caf::expected<idempotent_append> a) {
        if (!a)
          return fail(c, a.error());
        send_json_replayable(c, 201, json{{"id", a->id}, {"session_id", a->session_id}},
                             a->replayed);
      });
    return;
  }
  ask<int64_t>(c, c->api->gateway, c->api->turn_timeout, gw_append_atom_v, key,
               std::move(in->user), std::move(in->row))
    .then([c, key](caf::expected<int64_t> id) {
      if (!id)
        return fail(c, id.error());
      answer_appended(c, key, *id, std::string{}, [](json&) {});
    });
}

void compact_session(const call_ptr& c) {
  auto in = keyed_body(c, decode_compact);
  auto k = in ? key_of_call(c) : std::nullopt;
  if (!k)
    return;
  auto key = k->stored;
  auto done = [c](caf::expected<compaction_report> report) {
    if (!report)
      return fail(c, report.error());
    send_json(c, 200, to_json(*report));
  };
  if (in->around_id)
    ask<compaction_report>(c, c->api->gateway, c->api->turn_timeout, gw_local_atom_v, key,
                           *in->around_id, in->radius, owner_of_call(c))
      .then(done);
  else
    ask<compaction_report>(c, c->api->gateway, c->api->turn_timeout, gw_command_atom_v, key,
                           trigger::t12_manual_session, std::move(in->focus), owner_of_call(c))
      .then(done);
}

void list_compactions(const call_ptr& c) {
  read_stored_session(c, [c](const std::string& sid) {
    ask<std::vector<compaction_log_entry>>(c, c->api->storage, c->read_timeout(),
                                           st_clog_atom_v, sid, compaction_log_max_rows)
      .then([c, sid](caf::expected<std::vector<compaction_log_entry>> log) {
        if (!log)
          return fail(c, log.error());
        ask<std::vector<message>>(c, c->api->storage, c->read_timeout(), st_range_atom_v, sid,
                                  int64_t{1}, std::numeric_limits<int64_t>::max())
          .then([c, sid, log = std::move(*log)](caf::expected<std::vector<message>> rows) {
            if (!rows)
              return fail(c, rows.error());
            send_json(c, 200, compactions_to_json(sid, *rows, log));
          });
      });
  });
}

// GET /v1/sessions/{key}/rows: the session's rows of ids from..to (inclusive), whatever
// their state, oldest first, at most `limit`; next_from is the id to continue from
// (null at the end). The web console pages a transcript and opens a summary's
// originals (replaced_first_id..replaced_last_id) with it.
void list_rows(const call_ptr& c) {
  int64_t from = 1, to = std::numeric_limits<int64_t>::max(), limit = rows_page_default;
  if (!int_param(c, "from", 1, std::numeric_limits<int64_t>::max(), from)
      || !int_param(c, "to", 1, std::numeric_limits<int64_t>::max(), to)
      || !int_param(c, "limit", 1, rows_page_max, limit))
    return;
  if (to < from)
    return send_error(c, 400, "bad_request", "parameter 'to' is below 'from'");
  read_stored_session(c, [c, from, to, limit](const std::string& sid) {
    ask<std::vector<message>>(c, c->api->storage, c->read_timeout(), st_range_atom_v, sid, from,
                              to, limit + 1)
      .then([c, sid, limit](caf::expected<std::vector<message>> rows) {
        if (!rows)
          return fail(c, rows.error());
        json next = nullptr;
        if (static_cast<int64_t>(rows->size()) > limit) {
          next = (*rows)[static_cast<size_t>(limit)].id;
          rows->resize(static_cast<size_t>(limit));
        }
        send_json(c, 200, {{"session_id", sid}, {"rows", to_json(*rows)}, {"next_from", next}});
      });
  });
}

void make_checkpoint(const call_ptr& c, const std::string& key, const std::string& name) {
  ask<checkpoint_record>(c, c->api->gateway, c->read_timeout(), gw_checkpoint_atom_v, key, name,
                        owner_of_call(c))
    .then([c](caf::expected<checkpoint_record> cp) {
      if (!cp)
        return fail(c, cp.error());
      send_json(c, 201, to_json(*cp));
    });
}

void create_checkpoint(const call_ptr& c) {
  auto in = keyed_body(c, decode_checkpoint);
  if (!in || !check(c, "field 'name'", in->name, checkpoint_name_max_bytes))
    return;
  auto k = key_of_call(c);
  if (!k)
    return;
  auto key = k->stored;
  if (in->replace)
    return make_checkpoint(c, key, in->name);
  auto name = in->name;
  stored_session_id(c, *k, [c, key, name](caf::expected<std::string> id) {
    if (!id && id.error() == errc::not_found) // the gateway answers 404 (or a session
      return make_checkpoint(c, key, name);    // opened meanwhile, checked there)
    if (!id)
      return fail(c, id.error());
    ask<std::vector<checkpoint_record>>(c, c->api->storage, c->read_timeout(),
                                        st_checkpoints_atom_v, *id)
      .then([c, key, name](caf::expected<std::vector<checkpoint_record>> cps) {
        if (!cps)
          return fail(c, cps.error());
        for (const auto& cp : *cps)
          if (cp.name == name)
            return send_error(c, 409, "checkpoint_exists",
                              "checkpoint '" + name + "' exists (after #"
                                + std::to_string(cp.last_message_id)
                                + "); send \"replace\":true to move it to now");
        make_checkpoint(c, key, name);
      });
  });
}

void list_checkpoints(const call_ptr& c) {
  read_stored_session(c, [c](const std::string& sid) {
    ask<std::vector<checkpoint_record>>(c, c->api->storage, c->read_timeout(),
                                        st_checkpoints_atom_v, sid)
      .then([c](caf::expected<std::vector<checkpoint_record>> cps) {
        if (!cps)
          return fail(c, cps.error());
        send_json(c, 200, {{"checkpoints", checkpoints_json(*cps)}});
      });
  });
}

void roll_back_session(const call_ptr& c) {
  auto in = keyed_body(c, decode_name);
  auto k = in ? key_of_call(c) : std::nullopt;
  if (!k)
    return;
  auto key = k->stored;
  ask<std::vector<message>>(c, c->api->gateway, c->api->turn_timeout, gw_rollback_atom_v, key,
                            std::move(in->name), owner_of_call(c))
    .then([c, k = *k](caf::expected<std::vector<message>> live) {
      if (!live)
        return fail(c, live.error());
      if (!live->empty())
        return send_json(c, 200,
                         {{"session_id", live->front().session_id}, {"live", to_json(*live)}});
      stored_session_id(c, k, [c](caf::expected<std::string> id) {
        send_json(c, 200, {{"session_id", id ? *id : std::string{}}, {"live", json::array()}});
      });
    });
}

void export_jsonl(const call_ptr& c) {
  read_stored_session(c, [c](const std::string& sid) {
    ask<std::string>(c, c->api->storage, c->read_timeout(), st_export_atom_v, sid)
      .then([c](caf::expected<std::string> text) {
        if (!text)
          return fail(c, text.error());
        c->finish(http_response{200, "application/x-ndjson", std::move(*text), {}, false});
      });
  });
}

} // namespace

void add_session_routes(route_registry& r, const api_state&) {
  r.add("GET", "/v1/sessions", list_sessions, route_access::user_named);
  r.add("GET", "/v1/sessions/{}", session_state, route_access::key_owned);
  r.add("POST", "/v1/sessions/{}/messages", append_message, route_access::key_owned);
  r.add("POST", "/v1/sessions/{}/compact", compact_session, route_access::key_owned);
  r.add("GET", "/v1/sessions/{}/compactions", list_compactions, route_access::key_owned);
  r.add("POST", "/v1/sessions/{}/checkpoints", create_checkpoint, route_access::key_owned);
  r.add("GET", "/v1/sessions/{}/checkpoints", list_checkpoints, route_access::key_owned);
  r.add("POST", "/v1/sessions/{}/rollback", roll_back_session, route_access::key_owned);
  r.add("GET", "/v1/sessions/{}/export", export_jsonl, route_access::key_owned);
  r.add("GET", "/v1/sessions/{}/rows", list_rows, route_access::key_owned);
}

} // namespace mneme::api
