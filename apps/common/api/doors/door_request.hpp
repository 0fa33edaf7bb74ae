// One request as a door sees it (the chat-completions door in doors/openai_chat/, and
// every door beside it): what the HTTP plumbing gives each door, whatever its wire format.
// http_api's call implements it (plumbing/call.hpp).
//
// Contract: the door completes the request exactly once, by answer(), by a stream it
// ends and then reports with streamed(), or by forward_elsewhere() returning true.
//
// Threads: in the request's actor (actor()), like the routes.
#pragma once

#include <memory>
#include <string>

#include "caf/all.hpp"

#include "apps/common/api/front/http_exchange.hpp"
#include "policies/access_scope.hpp"

namespace mneme::api {

class door_request {
 public:
  virtual ~door_request() = default;
  virtual const http_request& request() const = 0;
  virtual const access_scope& scope() const = 0;
  virtual caf::event_based_actor* actor() const = 0;
  virtual const http_reply& reply_channel() const = 0;
  virtual void answer(http_response res) = 0; // completes the request
  virtual void streamed() = 0;                // a stream completed it
  // Counts a refusal for the token's scope (mneme_http_forbidden_total).
  virtual void refused_for_scope() = 0;
  // Node mode: sends the request to the node serving its key when `err` is
  // errc::lease_elsewhere (front/http_forward.hpp); true when it did (that completes it).
  virtual bool forward_elsewhere(const caf::error& err) = 0;
};
using door_request_ptr = std::shared_ptr<door_request>;

// The session key a door request names in a header: the first non-empty of
// X-Mneme-Session, X-Session-Id, X-Session-Affinity; else `from_body` (the wire's own
// field, e.g. the chat-completions metadata.session_id; "" = stateless).
std::string door_session_key(const http_request& req, const std::string& from_body);

// A door's session key in its namespace (policies/key_namespace.hpp): the token's user,
// else `user` (the acting user the body names, "" = none), else `default_user`. "" stays
// "" (stateless). A key the client may not name (empty is fine; too long, a control
// character, U+001F) leaves `refused` set to the 400's message.
std::string door_stored_key(const access_scope& who, const std::string& user,
                            const std::string& default_user, const std::string& key,
                            std::string& refused);

} // namespace mneme::api
