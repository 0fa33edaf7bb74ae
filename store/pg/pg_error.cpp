// libpqxx exceptions -> errc; see pg_error.hpp.
#include "store/pg/pg_error.hpp"

#include <pqxx/except>

#include "caf/make_message.hpp"

#include "messages/errc.hpp"

namespace mneme {

caf::error pg_failure(const std::exception& e, const std::string& what) {
  auto code = errc::storage_failed;
  std::string state;
  if (auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
    state = sql->sqlstate();
    if (state == "53100")
      code = errc::storage_disk_full;
    else if (state == "25006" || state == "42501")
      code = errc::storage_readonly;
  } else if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) {
    code = errc::storage_cant_open;
  }
  std::string text = e.what();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return caf::make_error(code, "postgres: " + what + ": " + text
                                 + (state.empty() ? "" : " (SQLSTATE " + state + ")"));
}

} // namespace mneme
