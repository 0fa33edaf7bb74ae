// Session-key leases of several mneme nodes on one PostgreSQL database (issue 26
// item 4, docs/scale-out.md "Leases"), on a connection of their own (the lease actor's,
// actors/lease): acquiring a key, renewing what a node holds, releasing.
//
// A lease row (mneme_leases, schema v6) names the key's owner node, its URL, a
// fencing token and an expiry on the server's clock. Acquiring runs in one
// transaction under the row's lock (SELECT ... FOR UPDATE, or the insert's conflict):
// policies/lease_policy decides grant / reacquire / take over / elsewhere; every grant
// takes a new token from the mneme_lease_tokens sequence and is recorded in
// mneme_lease_grants (with the node it took the key from). A write of the store in
// node mode share-locks the row (pg_store::fence_session), so a takeover waits for a
// write in progress to commit, and a write after the takeover finds another token.
//
// Thread: the owner of the object (a detached actor); every call blocks on the network.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "caf/expected.hpp"

#include "messages/lease_types.hpp"
#include "store/store_params.hpp"

namespace mneme {

struct lease_identity {
  std::string node_id;        // gateway.node_id
  std::string advertise_url;  // gateway.advertise_url: where other nodes forward to
  int64_t lease_ms = 10000;   // gateway.lease_seconds
};

struct held_lease {
  std::string session_key;
  int64_t token = 0;
};

class pg_leases {
public:
  // Connects (the store's URL; errors of pg_connect), migrates (the schema must hold
  // the lease tables: schema v6) and checks the identity (config_invalid when the node
  // id or URL is empty or lease_ms < 1).
  static caf::expected<std::unique_ptr<pg_leases>> open(const store_params& params,
                                                        lease_identity self);

  const lease_identity& identity() const { return self_; }

  // Takes `session_key` for this node, or says who serves it. A row locked by a write
  // in progress elsewhere is waited for up to `lock_wait` (then storage_locked).
  caf::expected<lease_outcome> acquire(const std::string& session_key,
                                       std::chrono::milliseconds lock_wait
                                       = std::chrono::milliseconds{2000});
  // Extends every lease of `held` still carrying its token to now + lease_ms, in one
  // statement; returns the keys whose token changed or whose row is gone (lost: the
  // node must stop writing them).
  caf::expected<std::vector<std::string>> renew(const std::vector<held_lease>& held);
  // Gives the key up at once (its row expires now) when this node still holds it
  // under `token`; a lease already lost is left alone.
  caf::error release(const held_lease& lease);

private:
  pg_leases(lease_identity self, std::unique_ptr<pqxx::connection> conn)
    : self_(std::move(self)), conn_(std::move(conn)) {}

  lease_identity self_;
  std::unique_ptr<pqxx::connection> conn_;
};

} // namespace mneme
