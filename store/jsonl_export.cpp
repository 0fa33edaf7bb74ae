// One line of a session's JSONL export; see jsonl_export.hpp.
#include "store/jsonl_export.hpp"

#include <nlohmann/json.hpp>

#include "store/message_json.hpp"

namespace mneme {

std::string to_jsonl_line(const message& m, int64_t archived_by) {
  auto row = message_json(m);
  row["archived_by"] = archived_by;
  return row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace mneme
