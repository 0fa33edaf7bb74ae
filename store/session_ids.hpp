// Session id generation: 12 hex digits of the creation time in milliseconds
// followed by 12 hex digits of randomness (24 characters, e.g.
// "0191f3a2c4e1" + "9b07d2e4aa31"). Ids sort by creation time as text, carry no
// user data, and collide only if two sessions start in the same millisecond and
// draw the same 48 random bits. Not thread-safe: one generator per owner (the writer).
#pragma once

#include <random>
#include <string>

#include "messages/transcript.hpp"

namespace mneme {

class session_id_generator {
public:
  session_id_generator();
  // REQUIRES: now >= 0.
  std::string next(time_ms now);

private:
  std::mt19937_64 rng_;
};

// A caller-chosen id is accepted when it is 1..128 characters of [A-Za-z0-9._:-].
bool valid_session_id(const std::string& id);

} // namespace mneme
