// Which slot a newly accepted client connection takes; see connection_admission.hpp.
#include "policies/connection_admission.hpp"

namespace mneme::policies {

connection_slot slot_for_new_connection(const connection_limits& limits,
                                        const connection_counts& now) {
  if (now.regular < limits.max_connections && now.from_address < limits.max_per_address)
    return connection_slot::regular;
  if (limits.reserved <= 0)
    return connection_slot::refuse;
  if (now.reserve < limits.reserved)
    return connection_slot::reserve;
  if (now.reserve_waiting > 0)
    return connection_slot::reserve_displacing_oldest;
  return connection_slot::refuse;
}

const char* to_string(connection_slot s) {
  switch (s) {
    case connection_slot::regular: return "regular";
    case connection_slot::reserve: return "reserve";
    case connection_slot::reserve_displacing_oldest: return "reserve_displacing_oldest";
    case connection_slot::refuse: return "refuse";
  }
  return "?";
}

} // namespace mneme::policies
