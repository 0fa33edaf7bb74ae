// Checks that span several configuration keys (each key alone was already accepted by
// the table in config_schema.cpp): windows that leave room to work, ceilings not below
// their idle timeouts, a hygiene cap that compaction can get under, outer timeouts
// longer than inner ones, a secret given once. Pure; any thread.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "apps/common/config/app_config.hpp"

namespace mneme {

// Smallest effective window (context_length - max_tokens) the model block may leave.
inline constexpr int64_t min_effective_window_tokens = 1024;

// Every cross-key problem of `cfg`. A check is skipped when one of the keys it reads
// is in `rejected` (its value in `cfg` is then the default, not what the file said).
std::vector<config_error> check_config_consistency(const app_config& cfg,
                                                   const std::set<std::string>& rejected);

} // namespace mneme
