// The bounded plan's decisions for frequent full-text queries; see fts_candidates.hpp.
#include "policies/fts_candidates.hpp"

#include <algorithm>
#include <unordered_map>

namespace mneme {

fts_route_plan choose_fts_route_plan(int64_t counted, bool bounded_allowed,
                                     const fts_candidate_params& params) {
  if (bounded_allowed && counted >= params.frequent_matches)
    return fts_route_plan::newest_first;
  return fts_route_plan::rank_all;
}

newest_scan_step next_newest_scan_step(int64_t examined, int64_t candidates,
                                       int64_t conversations, int64_t wanted,
                                       const fts_candidate_params& params) {
  if (candidates >= params.candidates && conversations >= wanted)
    return newest_scan_step::enough;
  if (examined >= params.max_examined)
    return newest_scan_step::give_up;
  return newest_scan_step::go_on;
}

namespace {

bool better(const scored_row& a, const scored_row& b) {
  if (a.score != b.score)
    return a.score < b.score;
  return a.id < b.id;
}

} // namespace

std::vector<scored_row> best_row_per_session(std::vector<scored_row> rows) {
  std::unordered_map<std::string, std::size_t> best_of; // session -> index into out
  std::vector<scored_row> out;
  for (auto& r : rows) {
    auto [it, fresh] = best_of.emplace(r.session_id, out.size());
    if (fresh)
      out.push_back(std::move(r));
    else if (better(r, out[it->second]))
      out[it->second] = std::move(r);
  }
  std::sort(out.begin(), out.end(), better);
  return out;
}

} // namespace mneme
