// What a row replacement commit shares on every backend (store/sqlite/sqlite_store_replace.cpp,
// store/pg/pg_store_replace.cpp; replacement_commit in messages/storage_types.hpp):
// the checks that need no database, the replacement row a commit inserts, and which
// inserted row absorbs each archived row. Pure functions of values; errors are
// errc::bad_request. Thread: the store's owner.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "caf/error.hpp"
#include "messages/storage_types.hpp"
#include "store/store_errors.hpp"

namespace mneme {

// Checks that need no database: counts, duplicates, positions among the archive ids.
inline caf::error check_replacement_shape(const replacement_commit& c) {
  if (c.session_id.empty())
    return bad_request("replace: session_id is empty");
  if (c.archive_ids.empty())
    return bad_request("replace: archive_ids is empty (nothing to replace)");
  if (c.rows.size() != c.positions.size())
    return bad_request("replace: " + std::to_string(c.rows.size()) + " rows but "
                       + std::to_string(c.positions.size()) + " positions");
  std::set<int64_t> archived;
  for (auto id : c.archive_ids) {
    if (id <= 0)
      return bad_request("replace: archive id " + std::to_string(id) + " is not a row id");
    if (!archived.insert(id).second)
      return bad_request("replace: row " + std::to_string(id) + " is archived twice");
  }
  std::set<int64_t> used;
  for (auto pos : c.positions) {
    if (archived.count(pos) == 0)
      return bad_request("replace: position row " + std::to_string(pos)
                         + " is not among the archived rows");
    if (!used.insert(pos).second)
      return bad_request("replace: position row " + std::to_string(pos) + " is used twice");
  }
  for (const auto& row : c.rows) {
    if (!row.session_id.empty() && row.session_id != c.session_id)
      return bad_request("replace: a replacement row names another session");
    if (row.content.empty())
      return bad_request("replace: a replacement row's content is empty");
  }
  return {};
}

// The i-th replacement row as inserted: a live summary row of the session, replacing
// its position row unless it names a valid range itself.
inline message replacement_row(const replacement_commit& c, size_t i) {
  message row = c.rows[i];
  row.id = 0;
  row.session_id = c.session_id;
  row.active = true;
  row.compacted = false;
  row.is_summary = true;
  if (row.replaced_first_id <= 0 || row.replaced_last_id < row.replaced_first_id)
    row.replaced_first_id = row.replaced_last_id = c.positions[i];
  return row;
}

// Which inserted row absorbs each archived row: a position row's own replacement,
// otherwise the replacement placed last before it in live order (the first one when
// none is before it), or c.archived_by when nothing was inserted.
class replacement_absorbers {
public:
  explicit replacement_absorbers(int64_t fallback) : fallback_(fallback) {}

  // Row `inserted_id` took the place of `position_row`, whose live rank is `rank`.
  void add(int64_t position_row, size_t rank, int64_t inserted_id) {
    by_rank_.emplace_back(rank, inserted_id);
    by_position_[position_row] = inserted_id;
    sorted_ = false;
  }

  // The absorber of archived row `archived_id`, whose live rank is `rank`.
  int64_t of(int64_t archived_id, size_t rank) {
    if (auto hit = by_position_.find(archived_id); hit != by_position_.end())
      return hit->second;
    if (by_rank_.empty())
      return fallback_;
    if (!sorted_) {
      std::sort(by_rank_.begin(), by_rank_.end());
      sorted_ = true;
    }
    auto after = std::upper_bound(by_rank_.begin(), by_rank_.end(),
                                  std::make_pair(rank, INT64_MAX));
    return after == by_rank_.begin() ? by_rank_.front().second : std::prev(after)->second;
  }

private:
  int64_t fallback_;
  std::vector<std::pair<size_t, int64_t>> by_rank_;
  std::map<int64_t, int64_t> by_position_;
  bool sorted_ = true;
};

} // namespace mneme
