// The errors every store backend answers for a caller's mistake (messages/errc.hpp):
// bad_request and not_found, with the detail as the error's context. A backend's own
// failures have their own translation (store/sqlite/sqlite_error.hpp,
// store/pg/pg_error.hpp). Pure functions; any thread.
#pragma once

#include <string>

#include "caf/error.hpp"
#include "caf/make_message.hpp"

#include "messages/errc.hpp"

namespace mneme {

// A caller's mistake: errc::bad_request with `why` as context.
caf::error bad_request(const std::string& why);

// An unknown session, checkpoint or row: errc::not_found with `what` as context.
caf::error not_found(const std::string& what);

} // namespace mneme
