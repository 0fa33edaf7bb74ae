// Opening the store of either backend; see open_store.hpp.
#include "store/open_store.hpp"

#include <chrono>

#include "store/pg/pg_store.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace mneme {

caf::expected<std::unique_ptr<message_store>> open_message_store(const store_params& params) {
  if (params.backend == store_backend::postgres) {
    auto s = pg_store::open(params);
    if (!s)
      return std::move(s.error());
    return std::unique_ptr<message_store>{std::move(*s)};
  }
  auto s = sqlite_store::open(params);
  if (!s)
    return std::move(s.error());
  return std::unique_ptr<message_store>{std::move(*s)};
}

caf::expected<std::unique_ptr<message_store>> open_writer_store(const store_params& params) {
  if (params.backend != store_backend::postgres)
    return open_message_store(params);
  auto pg = pg_store::open(params);
  if (!pg)
    return std::move(pg.error());
  // Node mode: several daemons write, each under the leases of its keys; otherwise
  // one daemon per database.
  if (!params.node_id.empty())
    (*pg)->set_node(params.node_id, std::chrono::milliseconds{params.node_lease_ms});
  else if (auto err = (*pg)->lock_as_only_writer())
    return err;
  return std::unique_ptr<message_store>{std::move(*pg)};
}

} // namespace mneme
