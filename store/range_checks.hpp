// The arguments of message_store::range, checked alike by both backends
// (store/sqlite/store_queries.cpp load_range, store/pg/pg_store.cpp). Pure; the error is
// errc::bad_request.
// Thread: the store's owner.
#pragma once

#include <cstdint>
#include <string>

#include "caf/error.hpp"
#include "store/store_errors.hpp"

namespace mneme {

// REQUIRES (else bad_request naming the values): 0 < first_id <= last_id, limit >= 1.
inline caf::error check_range_request(int64_t first_id, int64_t last_id, int64_t limit) {
  if (first_id > 0 && last_id >= first_id && limit >= 1)
    return {};
  return bad_request("load range: need 0 < first_id <= last_id and a limit of at least 1, got "
                     + std::to_string(first_id) + ".." + std::to_string(last_id) + " limit "
                     + std::to_string(limit));
}

} // namespace mneme
