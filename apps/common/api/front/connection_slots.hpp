// The HTTP front's connection bookkeeping (docs/api.md "Connections and limits"): how
// many regular connections each client address holds, the reserve connections and which
// of them still wait for a request head. The decision is policies/connection_admission;
// this unit only counts. Used by http_front.cpp alone.
//
// Threads: take() from the acceptor's strand; release() and head_arrived() from any
// connection's strand (the destructor of a connection, its first head). One mutex.
// Invariant: counts equal the connections taken and not yet released.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "policies/connection_admission.hpp"

namespace mneme::api {

class connection_slots {
 public:
  // What a reserve connection that must give way is asked to do (close itself).
  using give_way = std::function<void()>;

  struct ticket {
    policies::connection_slot slot = policies::connection_slot::refuse;
    uint64_t id = 0;      // the reserve connection's number (0 for others)
  };

  explicit connection_slots(policies::connection_limits limits);

  // The slot of a new connection from `address`. A reserve connection registers
  // `on_give_way`, called (under no lock) when a later one displaces it while it still
  // waits for its head. For reserve_displacing_oldest the oldest waiting reserve
  // connection is asked to give way and the new one takes the reserve.
  ticket take(const std::string& address, give_way on_give_way);
  // The connection of `t` from `address` closed.
  void release(const std::string& address, const ticket& t);
  // A reserve connection's request head arrived: it can no longer be displaced.
  void head_arrived(const ticket& t);

 private:
  policies::connection_limits limits_;
  std::mutex mu_;
  int64_t regular_ = 0;
  int64_t reserve_ = 0;
  uint64_t next_id_ = 1;
  std::unordered_map<std::string, int64_t> per_address_;
  // Reserve connections waiting for a head, oldest first; released/headed ones are
  // erased from `waiting_` and skipped lazily in `order_`.
  std::deque<uint64_t> order_;
  std::unordered_map<uint64_t, give_way> waiting_;
};

} // namespace mneme::api
