// What the Conversations API's requests share (conversations_door.cpp,
// conversation_items_door.cpp): the door's state, one request on its way, and the
// conversation a request names resolved — its record and its session, each when there is
// one. Private to this folder.
//
// Threads: the shared state is built once and read-only; a request's members run in its
// actor.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/null_sink.h>

#include "apps/common/api/doors/openai_responses/conversations_door.hpp"
#include "apps/common/api/doors/openai_shape.hpp"
#include "apps/common/api/http_status.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "policies/client_text.hpp"
#include "store/response_records.hpp"

namespace mneme::api {

struct conversations_door::shared {
  conversations_config cfg;
  std::shared_ptr<spdlog::logger> log;
  // By conversations_door::op (metrics_text).
  std::array<std::atomic<int64_t>, op_count> requests{}, errors{};

  explicit shared(conversations_config c)
    : cfg(std::move(c)),
      log(cfg.log ? cfg.log
                  : std::make_shared<spdlog::logger>(
                    "conversations", std::make_shared<spdlog::sinks::null_sink_mt>())) {}

  const conversation_config& conv() const { return cfg.conversation; }
};

// A conversation as a request sees it.
struct conversation_view {
  std::string id;                  // the session key as the client names it
  std::string owner;               // the user of its record or of its session
  std::string stored_key;          // `id` in its owner's (or the request's) namespace
  int64_t created_at_s = 0;
  nlohmann::json metadata = nlohmann::json::object();
  bool has_record = false;         // made by POST /v1/conversations
  response_record record;          // its record, when has_record
  std::string session_id;          // "" while the key has no session (no item yet)
  std::string parent_id;           // that session's parent ("" for none)
};

// One request of the Conversations API on its way (the context of its asks).
struct conversation_call {
  std::shared_ptr<conversations_door::shared> door;
  door_request_ptr r;
  std::string id; // the conversation (or response) id of the path
  conversations_door::op op = conversations_door::op::get; // the route, for the counters
  std::string held_key; // held against the Responses door's conversations ("" = none)

  conversation_call() = default;
  conversation_call(const conversation_call&) = delete;
  conversation_call& operator=(const conversation_call&) = delete;
  ~conversation_call() { let_go(); }

  // Holds `key` against the Responses door's conversations (conversations_config::
  // responses): false while a response on it (or another hold) has it. Let go by the
  // answer (ok, refuse), or when the call is gone.
  bool hold(const std::string& key) {
    if (!door->cfg.responses)
      return true;
    if (!door->cfg.responses->hold_key(key))
      return false;
    held_key = key;
    return true;
  }
  void let_go() {
    if (!held_key.empty() && door->cfg.responses)
      door->cfg.responses->release_key(held_key);
    held_key.clear();
  }
  // The refusal of a request whose key a response holds: nothing was changed.
  void busy() {
    fail(caf::make_error(errc::session_busy,
                         "conversation '" + id
                           + "' is answering a response; retry when it has been answered"));
  }

  caf::event_based_actor* actor() const { return r->actor(); }
  const conversation_config& conv() const { return door->conv(); }

  void on_exception(const std::exception& e) {
    door->log->error("conversation={} event=exception what={}", log_quoted(id),
                     log_quoted(e.what()));
    refuse(500, "internal", "internal error");
  }
  void refuse(int status, const std::string& code, const std::string& message) {
    let_go();
    door->errors[static_cast<size_t>(op)].fetch_add(1);
    r->answer(openai_error_response(status, code, message));
  }
  void unknown() {
    refuse(404, "not_found", "No conversation found with id '" + id + "'.");
  }
  // mneme's error: another user's session is an unknown id; a key served by another
  // node is forwarded there.
  void fail(const caf::error& err) {
    let_go();
    if (r->forward_elsewhere(err))
      return;
    if (hidden_from(r->scope(), err))
      r->refused_for_scope();
    if (err == errc::not_found || hidden_from(r->scope(), err))
      return unknown();
    auto status = http_status_of(err);
    if (status >= 500)
      door->log->warn("conversation={} event=conversation_error status={} error={}",
                      log_quoted(id), status, log_quoted(render_error(err)));
    refuse(status, error_code_of(err), error_message_of(err));
  }
  void ok(const nlohmann::json& body) {
    let_go();
    r->answer(openai_json_response(200, body));
  }
};
using conversation_call_ptr = std::shared_ptr<conversation_call>;

// A request of route `op`, counted.
inline conversation_call_ptr conversation_call_of(
  const std::shared_ptr<conversations_door::shared>& door, const door_request_ptr& r,
  const std::string& id, conversations_door::op op) {
  auto c = std::make_shared<conversation_call>();
  c->door = door;
  c->r = r;
  c->id = id;
  c->op = op;
  door->requests[static_cast<size_t>(op)].fetch_add(1);
  return c;
}

// The conversation `c->id` names when the request may see it, then `then(view)`; else
// the 404 of an unknown id (a deleted record, another user's, no record and no session).
void with_conversation(const conversation_call_ptr& c,
                       std::function<void(conversation_view&)> then);

// The conversation's rows across the key's continuations (policies/history_match.hpp
// "Continuations": a child session, an exhaustion reset), every state, ascending: the
// rows of the parents it continues, then its current session's own rows (the copies a
// continuation starts with left out); `conv.own` every row of the current session. Then
// `then`. A session that continues none: its own rows.
void with_conversation_rows(const conversation_call_ptr& c, const conversation_view& v,
                            std::function<void(conversation_rows&)> then);

// Appends `rows` to the conversation's session in order (its owner's), then
// `then(ids)`; the first refusal ends it (the rows before it stay appended) in
// `failed`, or answered by c->fail when none is given.
void append_rows(const conversation_call_ptr& c, const conversation_view& v,
                 std::vector<message> rows, std::function<void(std::vector<int64_t>&)> then,
                 std::function<void(const caf::error&)> failed = {});

} // namespace mneme::api
