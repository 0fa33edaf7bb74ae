// Which slot a newly accepted client connection takes (SPEC §8.1, docs/api.md
// "Connections and limits"). Standard library only; a pure function, safe from any
// thread. Called by apps/common/api/front/connection_slots.cpp, which keeps the counts.
//
// Slots:
//   regular  any request; at most max_connections of them in all and at most
//            max_per_address from one client address;
//   reserve  beyond those, `reserved` more connections that serve only GET /v1/health,
//            GET /metrics and admin-token requests (anything else: 503 + Retry-After), one
//            request each, with a short header deadline. When the reserve is full, the
//            oldest reserve connection still waiting for its request head gives way to the
//            new one: a flood of idle sockets cannot hold the reserve against a health
//            check that sends its request at once.
//   refuse   closed at once (the reserve is full of connections already being served, or
//            there is no reserve).
// Invariant: a client address with max_per_address regular connections open can never
// take another regular slot, whatever max_connections leaves free.
#pragma once

#include <cstdint>

namespace mneme::policies {

struct connection_limits {
  int64_t max_connections = 10000;
  int64_t max_per_address = 2000;
  int64_t reserved = 64;
};

struct connection_counts {
  int64_t regular = 0;          // regular connections open
  int64_t from_address = 0;     // regular connections open from the new one's address
  int64_t reserve = 0;          // reserve connections open
  int64_t reserve_waiting = 0;  // reserve connections that have not sent a request head
};

enum class connection_slot : uint8_t { regular, reserve, reserve_displacing_oldest, refuse };

connection_slot slot_for_new_connection(const connection_limits& limits,
                                        const connection_counts& now);

const char* to_string(connection_slot s);

} // namespace mneme::policies
