// libpqxx exceptions -> errc; see pg_error.hpp.
#include "store/pg/pg_error.hpp"

#include <pqxx/except>

#include "caf/make_message.hpp"

#include "messages/errc.hpp"

namespace mneme {

bool pg_connection_lost(const std::exception& e) {
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr)
    return true;
  auto* sql = dynamic_cast<const pqxx::sql_error*>(&e);
  if (sql == nullptr)
    return false;
  const std::string& state = sql->sqlstate();
  return state.rfind("08", 0) == 0 || state == "57P01" || state == "57P02" || state == "57P03";
}

caf::error pg_failure(const std::exception& e, const std::string& what) {
  auto code = errc::storage_failed;
  std::string state;
  if (pg_connection_lost(e)) {
    code = errc::storage_cant_open;
    if (auto* sql = dynamic_cast<const pqxx::sql_error*>(&e))
      state = sql->sqlstate();
  } else if (auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
    state = sql->sqlstate();
    if (state == "53100")
      code = errc::storage_disk_full;
    else if (state == "25006" || state == "42501")
      code = errc::storage_readonly;
  }
  std::string text = e.what();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return caf::make_error(code, "postgres: " + what + ": " + text
                                 + (state.empty() ? "" : " (SQLSTATE " + state + ")"));
}

} // namespace mneme
