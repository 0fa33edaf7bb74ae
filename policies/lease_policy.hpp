// Session-key leases between mneme nodes sharing one PostgreSQL database (issue 26
// item 4, docs/scale-out.md "Leases"): what a node does with a key given the lease row
// it found, when it renews, and whether a refused request is forwarded.
//
// Pure functions: no clock (the database's clock decides expiry: `remaining_ms` is
// computed by the server), no I/O; any thread. Called by store/pg/pg_leases (acquire),
// the lease actor (renewal period) and the HTTP API (forwarding).
//
// Invariants:
//   1. A key has at most one owner whose lease is live; a node takes a key only when no
//      row exists, the row is its own, or the row has expired (remaining_ms <= 0).
//   2. Every grant carries a new fencing token (larger than every earlier token of any
//      key): a node that re-acquires its own key after a restart fences its earlier
//      incarnation too.
//   3. A request is forwarded at most once: a request that arrived forwarded is never
//      forwarded again (no loops between nodes that disagree for a moment).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace mneme {

// A lease row as the acquiring transaction read it (under its row lock).
struct lease_row {
  std::string owner_node;
  std::string advertise_url;
  int64_t token = 0;
  int64_t remaining_ms = 0; // expires_at - the server's clock; <= 0: expired
};

enum class lease_action {
  grant,       // no row: insert one with a new token
  reacquire,   // this node's own row (live or not): a new token, same owner
  take_over,   // another node's expired row: a new token, this node the owner
  elsewhere,   // another node's live row: the key is served there
};

const char* to_string(lease_action a);
inline std::ostream& operator<<(std::ostream& os, lease_action a) { return os << to_string(a); }

// What `self_node` does with a key whose lease row is `current` (nullopt: none).
lease_action decide_lease(const std::optional<lease_row>& current, const std::string& self_node);

// How often a node renews the leases it holds: a third of the lease (so two renewals
// may fail before it expires), at least 100 ms. REQUIRES: lease_ms > 0.
int64_t lease_renew_period_ms(int64_t lease_ms);

// Whether a request refused because the key is served elsewhere goes to that node:
// only when it did not arrive forwarded, the owner's URL is known, and the owner is
// not this node (a row naming this node under another URL is stale config, not a
// place to send to).
bool should_forward(bool arrived_forwarded, const std::string& owner_url,
                    const std::string& self_url);

} // namespace mneme
