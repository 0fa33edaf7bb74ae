// The store's errors for a caller's mistake; see store_errors.hpp.
#include "store/store_errors.hpp"

namespace mneme {

caf::error bad_request(const std::string& why) {
  return caf::make_error(errc::bad_request, why);
}

caf::error not_found(const std::string& what) {
  return caf::make_error(errc::not_found, what);
}

} // namespace mneme
