// The check of a recall request every backend makes; see recall.hpp.
#include "store/recall.hpp"

#include "caf/make_message.hpp"

#include "messages/errc.hpp"

namespace mneme {

caf::error check_recall_request(const recall_request& req) {
  if (req.user_id.empty() || req.user_id.size() > recall_max_user_id_bytes)
    return caf::make_error(errc::bad_request,
                           "recall: user id must have 1.." + std::to_string(recall_max_user_id_bytes)
                             + " bytes, got " + std::to_string(req.user_id.size()));
  if (req.max_sessions < 1 || req.max_sessions > recall_max_sessions)
    return caf::make_error(errc::bad_request,
                           "recall: max_sessions must be 1.."
                             + std::to_string(recall_max_sessions) + ", got "
                             + std::to_string(req.max_sessions));
  return {};
}

} // namespace mneme
