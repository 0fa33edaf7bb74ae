// How the daemon's HTTP API reports an error (docs/api.md): the one mapping from an
// error value (mneme::errc, or CAF's own request timeout) to an HTTP status and the
// JSON error code. Pure functions; safe from any thread.
#pragma once

#include <string>

#include "caf/error.hpp"

#include "messages/errc.hpp"
#include "policies/access_scope.hpp"

namespace mneme::api {

// The HTTP status of an error code: 400 bad input, 404 unknown, 409 a compaction
// conflict (locked, in flight, exhausted, nothing to compact), 429 overloaded, 500
// internal and storage failures, 502 the model failed or answered badly, 503 the
// model is rate limited / out of quota or mneme is shutting down, 504 a model timeout.
int http_status_of(errc code);

// The status of any error: http_status_of(errc) for mneme errors, 504 for CAF's
// request timeout, 500 for everything else.
int http_status_of(const caf::error& err);

// The "code" of the JSON error: the errc name ("not_found"; "bad_request" for
// foreign_session), "request_timeout" for CAF's request timeout, "internal" for any other
// error.
std::string error_code_of(const caf::error& err);

// The human part of an error: its context text (e.g. "no session under key 'k'"),
// else the rendered error.
std::string error_message_of(const caf::error& err);

// The 404 message of a key or session id that names no session. A user token that names
// another user's key gets exactly this too, so whether the key exists is not revealed.
std::string unknown_key_message(const std::string& key);

// The error `who` is answered with: for a user token, errc::foreign_session (the session
// the key or id names is another user's) becomes the not_found of an unknown `key`;
// anything else is unchanged. The one place that hides another user's session.
caf::error as_seen_by(const access_scope& who, const caf::error& err, const std::string& key);
// Whether as_seen_by hid `err` from `who` (the caller counts a refusal for its scope).
bool hidden_from(const access_scope& who, const caf::error& err);

} // namespace mneme::api
