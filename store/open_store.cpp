// Opening the store of either backend; see open_store.hpp.
#include "store/open_store.hpp"

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

} // namespace mneme
