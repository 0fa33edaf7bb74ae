// When and by whom the write-ahead log is checkpointed; see wal_checkpoint.hpp.
#include "policies/wal_checkpoint.hpp"

#include <algorithm>

namespace mneme {

const char* to_string(wal_checkpoint_action a) {
  switch (a) {
    case wal_checkpoint_action::none:
      return "none";
    case wal_checkpoint_action::background:
      return "background";
    case wal_checkpoint_action::inline_passive:
      return "inline_passive";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, wal_checkpoint_action a) {
  return os << to_string(a);
}

wal_checkpoint_params wal_checkpoint_params_for(int64_t page_bytes) {
  wal_checkpoint_params params;
  params.inline_pages = wal_inline_bound_bytes / (page_bytes > 0 ? page_bytes : 4096);
  return params;
}

wal_checkpoint_action plan_wal_checkpoint(const wal_checkpoint_params& params, int64_t wal_pages,
                                          bool has_checkpointer, bool checkpointer_busy) {
  auto background_at = std::max<int64_t>(1, params.background_pages);
  auto inline_at = std::max<int64_t>(1, params.inline_pages);
  if (!has_checkpointer)
    return wal_pages >= background_at ? wal_checkpoint_action::inline_passive
                                      : wal_checkpoint_action::none;
  if (wal_pages >= inline_at)
    return wal_checkpoint_action::inline_passive;
  if (wal_pages >= background_at && !checkpointer_busy)
    return wal_checkpoint_action::background;
  return wal_checkpoint_action::none;
}

} // namespace mneme
