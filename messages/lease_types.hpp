// What a node learns when it asks for a session key's lease (issue 26 item 4): the
// answer of store/pg/pg_leases acquire, sent from the lease actor (actors/lease) to the
// gateway. Plain values; any thread.
#pragma once

#include <cstdint>
#include <string>

namespace mneme {

struct lease_outcome {
  bool granted = false;
  int64_t token = 0;           // granted: the new fencing token
  std::string took_over_from;  // granted by taking over another node's expired lease
  std::string owner_node;      // not granted: the live owner
  std::string owner_url;       //   and where it serves (gateway.advertise_url)
};

} // namespace mneme
