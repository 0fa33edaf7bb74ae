// The gateway's channel commands (gateway_state.hpp): `/compress [focus]` (T14),
// `/rollback NAME` and `/search QUERY`, answered as a turn reply with a notice.
#include "actors/gateway/gateway_state.hpp"

#include <cassert>

#include "policies/client_text.hpp"

namespace mneme::gateway_detail {

namespace {

std::string trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos)
    return {};
  auto end = s.find_last_not_of(" \t\r\n");
  return std::string{s.substr(b, end - b + 1)};
}

} // namespace

std::optional<std::string> command_arg(std::string_view text, std::string_view name) {
  if (text.substr(0, name.size()) != name)
    return std::nullopt;
  auto rest = text.substr(name.size());
  if (!rest.empty() && rest.front() != ' ' && rest.front() != '\t' && rest.front() != '\n')
    return std::nullopt;
  return trim(rest);
}

void channel_compress(gateway_ptr self, const std::string& key, std::string focus,
                      reply_promise rp) {
  auto& st = self->state;
  auto handle = st.keys[key].handle;
  request_session<compaction_report>(
    self, key, st.cfg.turn_timeout,
    [self, key, handle, rp](compaction_report& r) mutable {
      auto& e = self->state.keys[key];
      e.live_messages = r.messages_after;
      e.live_tokens = r.tokens_after;
      with_current_id(self, key, handle, e.session_id,
                      [self, key, r, rp](std::string compacted) mutable {
        auto& e = self->state.keys[key];
        turn_reply out;
        out.session_id = std::move(compacted);
        out.notice = r.committed ? "Compacted: " + std::to_string(r.tokens_before) + " -> "
                                     + std::to_string(r.tokens_after) + " tokens, "
                                     + std::to_string(r.archived_rows) + " messages archived"
                                 : std::string{"Nothing to compact."};
        out.compactions.push_back(r);
        out.live_messages = e.live_messages;
        out.live_tokens = e.live_tokens;
        rp.deliver(std::move(out));
      });
    },
    [rp](caf::error& err) mutable { rp.deliver(std::move(err)); },
    ss_compact_atom_v, trigger::t14_channel_command, std::move(focus));
}

namespace {

// The storage actor's answer to a rollback: the session actor's transcript is stale, so
// it is restarted from the store; `done` gets the restored live rows.
template <class Request>
void restart_after_rollback(gateway_ptr self, const std::string& key, Request req,
                            std::function<void(std::vector<message>)> done, on_error fail) {
  then_forgetting(self, std::move(req),
      [self, key, done](std::vector<message>& live) {
        auto& e = self->state.keys[key];
        if (e.handle)
          self->send_exit(e.handle, caf::exit_reason::user_shutdown);
        e.handle = nullptr;
        e.live_messages = static_cast<int64_t>(live.size());
        done(std::move(live));
      },
      [fail](caf::error& err) { fail(std::move(err)); });
}

} // namespace

void rollback(gateway_ptr self, const std::string& key, std::string name,
              std::function<void(std::vector<message>)> done, on_error fail) {
  auto& st = self->state;
  auto id = st.keys[key].session_id;
  assert(!id.empty());
  restart_after_rollback(
    self, key,
    self->request(st.storage, st.cfg.storage_timeout, st_rollback_atom_v, id, std::move(name)),
    std::move(done), std::move(fail));
}

void rollback_after_row(gateway_ptr self, const std::string& key, int64_t last_kept_id,
                        std::string label, std::function<void(std::vector<message>)> done,
                        on_error fail) {
  auto& st = self->state;
  auto id = st.keys[key].session_id;
  assert(!id.empty());
  restart_after_rollback(self, key,
                         self->request(st.storage, st.cfg.storage_timeout, st_rollback_atom_v,
                                       id, last_kept_id, std::move(label)),
                         std::move(done), std::move(fail));
}

void channel_rollback(gateway_ptr self, const std::string& key, std::string name,
                      reply_promise rp) {
  rollback(
    self, key, name,
    [self, key, name, rp](std::vector<message> live) mutable {
      turn_reply out;
      out.session_id = self->state.keys[key].session_id;
      out.notice = "Rolled back to checkpoint '" + name + "'.";
      out.live_messages = static_cast<int64_t>(live.size());
      rp.deliver(std::move(out));
    },
    [rp](caf::error err) mutable { rp.deliver(std::move(err)); });
}

// `/search QUERY`: recall over the user's own sessions (SPEC §4), answered as a notice
// listing one line per session found; the session's transcript is not touched.
void channel_search(gateway_ptr self, const std::string& key, const std::string& user,
                    const std::string& query, reply_promise rp) {
  auto& st = self->state;
  if (!st.cfg.recall) {
    rp.deliver(caf::make_error(errc::not_found,
                               "/search: recall is unavailable (in-memory database)"));
    return;
  }
  if (query.empty()) {
    rp.deliver(caf::make_error(errc::bad_request,
                               "/search: give a query, e.g. /search deploy plan"));
    return;
  }
  turn_reply reply;
  recall_request req;
  req.user_id = user;
  if (auto i = st.keys.find(key); i != st.keys.end()) {
    reply.session_id = i->second.session_id;
    if (req.user_id.empty())
      req.user_id = i->second.user_id; // the user of the key's session
  }
  if (req.user_id.empty())
    req.user_id = st.cfg.gateway.default_user;
  req.query = query;
  auto started = std::chrono::steady_clock::now();
  auto observe = [metrics = st.cfg.metrics, started] {
    if (metrics)
      metrics->search_latency.observe_us(std::chrono::duration_cast<std::chrono::microseconds>(
                                           std::chrono::steady_clock::now() - started)
                                           .count());
  };
  then_forgetting(self,
      self->request(st.cfg.recall, st.cfg.search_timeout, rc_search_atom_v, std::move(req)),
      [rp, reply, query, observe](const recall_result& res) mutable {
        observe();
        reply.notice = "Found " + std::to_string(res.hits.size())
                       + (res.hits.size() == 1 ? " session" : " sessions") + " for \""
                       + query + "\"";
        for (const auto& h : res.hits)
          reply.notice += "\n- session " + h.hit.session_id + " (" + std::string{to_string(h.kind)}
                          + ", " + h.route + "): " + h.snippet;
        rp.deliver(std::move(reply));
      },
      [rp, observe](caf::error& err) mutable {
        observe();
        rp.deliver(std::move(err));
      });
}

} // namespace mneme::gateway_detail
