// The check of response records every backend makes; see response_records.hpp.
#include "store/response_records.hpp"

#include "store/store_errors.hpp"

namespace mneme {

bool is_conversation_record_id(const std::string& id) { return id.rfind("conv_", 0) == 0; }

caf::error check_response_record(const response_record& r) {
  bool conversation = is_conversation_record_id(r.id);
  if ((r.id.rfind("resp_", 0) != 0 && !conversation) || r.id.size() > 128)
    return bad_request(
      "response: the id must start with resp_ (or conv_) and hold at most 128 bytes");
  if (r.session_key.empty() || (r.session_id.empty() && !conversation))
    return bad_request("response: the session key and id must not be empty");
  if (r.last_row_id < 0 || r.created_at_ms < 0)
    return bad_request("response: the row id and the time must be >= 0");
  if (r.deleted_at_ms != 0)
    return bad_request("response: a new response is not deleted");
  if (r.body.size() > response_body_max_bytes)
    return bad_request("response: " + std::to_string(r.body.size())
                       + " bytes of body exceed the limit of "
                       + std::to_string(response_body_max_bytes));
  return {};
}

} // namespace mneme
