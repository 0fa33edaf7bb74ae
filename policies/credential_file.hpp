// Whether a file holding credentials may be used, from its permission bits
// (gateway.tokens_file, gateway.auth_token_file, the API key and database URL files;
// docs/api.md "Authentication"). A file every user of the host may write is refused:
// anyone could add a token or replace a secret. Standard library only; pure functions,
// any thread. Callers (apps/common/config, apps/common/api/tokens) pass st_mode.
#pragma once

#include <string>

namespace mneme {

// "" when a credential file with permission bits `mode` may be used; otherwise why not,
// e.g. "is writable by every user (mode 0666); remove that with chmod o-w".
std::string credential_file_problem(unsigned mode);

} // namespace mneme
