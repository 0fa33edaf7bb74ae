// A loopback TCP port for a test or a benchmark to give a server it starts (a
// PostgreSQL cluster, a `mneme serve` node, a fake LLM) or to point a client at when
// nothing may answer there.
// Thread: any; it only binds and closes a socket of its own.
#pragma once

namespace mneme::testing {

// A loopback TCP port nobody listens on right now (bound, read, released: another
// process may take it before the caller binds it, which the callers tolerate by
// failing loudly). Throws std::runtime_error when no port can be bound.
int free_loopback_port();

} // namespace mneme::testing
