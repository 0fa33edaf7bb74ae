// Counters of failed storage operations by where they failed and why, for
// mneme_storage_failures_total{op,errc} (docs/operations.md): the storage actor counts a
// failure where it happens — the BEGIN, an insert, the COMMIT of a group (what a full
// disk fails), a write-ahead log checkpoint, an index tick, any other store operation.
// Only storage failures count (errc storage_* and internal); a refusal of the caller's
// input (bad_request, not_found, lease_lost, ...) is an answer, not a failure.
// Written by the storage actor's thread; read from any thread (relaxed atomics).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "caf/error.hpp"
#include "messages/errc.hpp"

namespace mneme {

enum class storage_op : uint8_t { begin, insert, commit, checkpoint, index, other };
inline constexpr std::size_t storage_op_slots = 6;

inline const char* to_label(storage_op op) {
  switch (op) {
    case storage_op::begin: return "begin";
    case storage_op::insert: return "insert";
    case storage_op::commit: return "commit";
    case storage_op::checkpoint: return "checkpoint";
    case storage_op::index: return "index";
    case storage_op::other: return "other";
  }
  return "other";
}

// The codes counted, in label order; every series exists from the start (at 0) so a
// rate over the first failure is defined.
inline constexpr std::array<errc, 8> counted_storage_errcs{
  errc::storage_failed,   errc::storage_disk_full,      errc::storage_corrupt,
  errc::storage_locked,   errc::storage_schema_too_new, errc::storage_readonly,
  errc::storage_cant_open, errc::internal};

// The slot of `err` in counted_storage_errcs; nullopt when it is not a storage failure.
inline std::optional<std::size_t> storage_failure_slot(const caf::error& err) {
  if (!err || err.category() != caf::atom("mneme"))
    return std::nullopt;
  for (std::size_t i = 0; i < counted_storage_errcs.size(); ++i)
    if (err.code() == static_cast<uint8_t>(counted_storage_errcs[i]))
      return i;
  return std::nullopt;
}

struct storage_failure_counters {
  std::array<std::array<std::atomic<int64_t>, counted_storage_errcs.size()>, storage_op_slots>
    counts{};

  // Counts `err` under `op` when it is a storage failure; true when it counted.
  bool record(storage_op op, const caf::error& err) {
    auto slot = storage_failure_slot(err);
    if (!slot)
      return false;
    counts[static_cast<std::size_t>(op)][*slot].fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  int64_t at(storage_op op, std::size_t errc_slot) const {
    return counts[static_cast<std::size_t>(op)][errc_slot].load(std::memory_order_relaxed);
  }
};

} // namespace mneme
