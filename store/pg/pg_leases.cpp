// Session-key leases on PostgreSQL; see pg_leases.hpp.
#include "store/pg/pg_leases.hpp"

#include <optional>
#include <unordered_set>

#include <pqxx/pqxx>

#include "messages/errc.hpp"
#include "policies/lease_policy.hpp"
#include "store/pg/pg_rows.hpp"
#include "store/pg/pg_schema.hpp"
#include "store/pg/pg_store.hpp"

namespace mneme {

caf::expected<std::unique_ptr<pg_leases>> pg_leases::open(const store_params& params,
                                                          lease_identity self) {
  if (self.node_id.empty())
    return caf::make_error(errc::config_invalid, "leases: gateway.node_id is empty");
  if (self.advertise_url.empty())
    return caf::make_error(errc::config_invalid, "leases: gateway.advertise_url is empty");
  if (self.lease_ms < 1)
    return caf::make_error(errc::config_invalid, "leases: gateway.lease_seconds must be > 0");
  auto conn = pg_connect(params, "connect (leases)");
  if (!conn)
    return std::move(conn.error());
  if (auto err = pg_apply_migrations(**conn))
    return err;
  return std::unique_ptr<pg_leases>{new pg_leases(std::move(self), std::move(*conn))};
}

caf::expected<lease_outcome> pg_leases::acquire(const std::string& session_key,
                                                std::chrono::milliseconds lock_wait) {
  return pg::guarded("acquire lease", [&]() -> caf::expected<lease_outcome> {
    pqxx::work w{*conn_};
    w.exec0("SET LOCAL lock_timeout = " + std::to_string(lock_wait.count()));
    auto key = pg::bytes(session_key);
    std::optional<lease_row> current;
    try {
      auto r = w.exec_params(
        "SELECT owner_node, advertise_url, token,"
        " (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint"
        " FROM mneme_leases WHERE session_key = $1 FOR UPDATE",
        key);
      if (!r.empty())
        current = lease_row{r[0][0].as<std::string>(), r[0][1].as<std::string>(),
                            r[0][2].as<int64_t>(), r[0][3].as<int64_t>()};
    } catch (const pqxx::sql_error& e) {
      if (e.sqlstate() != "55P03") // lock_not_available: a write holds the row
        throw;
      return caf::make_error(errc::storage_locked,
                             "lease: the key's lease row is locked by a write in progress");
    }
    auto action = decide_lease(current, self_.node_id);
    lease_outcome out;
    if (action == lease_action::elsewhere) {
      out.owner_node = current->owner_node;
      out.owner_url = current->advertise_url;
      return out;
    }
    auto token = w.exec1("SELECT nextval('mneme_lease_tokens')")[0].as<int64_t>();
    // A row another node inserted since the read above (two first acquires of a new
    // key at once) is replaced only under the same rule; otherwise that node won.
    auto written = w.exec_params(
      "INSERT INTO mneme_leases AS l (session_key, owner_node, advertise_url, token, expires_at)"
      " VALUES ($1, $2, $3, $4, clock_timestamp() + $5 * interval '1 millisecond')"
      " ON CONFLICT (session_key) DO UPDATE SET owner_node = excluded.owner_node,"
      " advertise_url = excluded.advertise_url, token = excluded.token,"
      " expires_at = excluded.expires_at"
      " WHERE l.owner_node = excluded.owner_node OR l.expires_at <= clock_timestamp()",
      key, self_.node_id, self_.advertise_url, token, self_.lease_ms);
    if (written.affected_rows() == 0) {
      auto winner = w.exec_params1(
        "SELECT owner_node, advertise_url FROM mneme_leases WHERE session_key = $1", key);
      out.owner_node = winner[0].as<std::string>();
      out.owner_url = winner[1].as<std::string>();
      return out;
    }
    if (action == lease_action::take_over)
      out.took_over_from = current->owner_node;
    w.exec_params0("INSERT INTO mneme_lease_grants(token, session_key, owner_node, took_over_from)"
                   " VALUES ($1, $2, $3, $4)",
                   token, key, self_.node_id, out.took_over_from);
    w.commit();
    out.granted = true;
    out.token = token;
    return out;
  });
}

caf::expected<std::vector<std::string>> pg_leases::renew(const std::vector<held_lease>& held) {
  return pg::guarded("renew leases", [&]() -> caf::expected<std::vector<std::string>> {
    std::vector<std::string> lost;
    if (held.empty())
      return lost;
    std::vector<int64_t> tokens;
    tokens.reserve(held.size());
    for (const auto& h : held)
      tokens.push_back(h.token);
    pqxx::work w{*conn_};
    // Tokens are unique across keys, so the token alone names the lease.
    auto r = w.exec_params("UPDATE mneme_leases SET expires_at = clock_timestamp()"
                           " + $2 * interval '1 millisecond'"
                           " WHERE owner_node = $1 AND token = ANY($3::bigint[]) RETURNING token",
                           self_.node_id, self_.lease_ms, pg::bigint_array(tokens));
    w.commit();
    std::unordered_set<int64_t> renewed;
    for (const auto& row : r)
      renewed.insert(row[0].as<int64_t>());
    for (const auto& h : held)
      if (renewed.count(h.token) == 0)
        lost.push_back(h.session_key);
    return lost;
  });
}

caf::error pg_leases::release(const held_lease& lease) {
  return pg::guarded("release lease", [&]() -> caf::error {
    pqxx::work w{*conn_};
    w.exec_params0("UPDATE mneme_leases SET expires_at = clock_timestamp()"
                   " WHERE session_key = $1 AND owner_node = $2 AND token = $3",
                   pg::bytes(lease.session_key), self_.node_id, lease.token);
    w.commit();
    return {};
  });
}

} // namespace mneme
