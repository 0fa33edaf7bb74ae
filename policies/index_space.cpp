// Free space and the idle-time indexer; see index_space.hpp.
#include "policies/index_space.hpp"

#include <algorithm>
#include <limits>

namespace mneme {

index_space_decision decide_index_space(const index_space_inputs& in) {
  index_space_decision out;
  if (in.backlog_rows <= 0)
    return out;
  if (in.free_bytes < 0) {
    out.verdict = index_space_verdict::run;
    out.max_text_bytes = std::numeric_limits<int64_t>::max();
    return out;
  }
  auto reserve = std::max<int64_t>(0, in.reserve_bytes);
  auto needed = in.refused_last ? reserve + reserve / 8 : reserve;
  if (in.free_bytes < needed || (in.refused_last && in.free_bytes == 0)) {
    out.verdict = index_space_verdict::wait_for_space;
    return out;
  }
  out.verdict = index_space_verdict::run;
  auto per_byte = std::max<int64_t>(1, in.disk_bytes_per_text_byte);
  out.max_text_bytes = std::max<int64_t>(1, (in.free_bytes - reserve) / per_byte);
  return out;
}

index_cap shrink_index_cap(const index_cap& cap, const index_cap& floor) {
  auto half = [](int64_t v, int64_t lo) {
    v = std::max<int64_t>(1, v);
    return std::max(std::min(v, std::max<int64_t>(1, lo)), v / 2); // a cap below the floor stays
  };
  return {half(cap.rows, floor.rows), half(cap.bytes, floor.bytes)};
}

index_cap grow_index_cap(const index_cap& cap, const index_cap& max) {
  auto grow = [](int64_t v, int64_t hi) {
    hi = std::max<int64_t>(1, hi);
    v = std::clamp<int64_t>(v, 1, hi);
    return v > hi / 2 ? hi : v * 2;
  };
  return {grow(cap.rows, max.rows), grow(cap.bytes, max.bytes)};
}

} // namespace mneme
