// Session id generation: 12 hex digits of the creation time in milliseconds
// followed by 32 hex digits (128 bits) from the operating system's random source
// (store/os_random.hpp; 44 characters, e.g. "0191f3a2c4e1" +
// "9b07d2e4aa31c0de5f6e7d8c9b0a1f2e"). Ids sort by creation time as text and carry no
// user data; knowing one id (or the time a session started) tells nothing of another's
// random part, so an id cannot be guessed. The generator holds no state: safe from any
// thread.
#pragma once

#include <cstddef>
#include <string>

#include "messages/transcript.hpp"

namespace mneme {

class session_id_generator {
public:
  // REQUIRES: now >= 0. Throws std::system_error when the kernel gives no random bytes.
  std::string next(time_ms now);
};

// The random hex digits at the end of a generated id (128 bits).
inline constexpr size_t session_id_random_chars = 32;
inline constexpr size_t session_id_chars = 12 + session_id_random_chars;

// A caller-chosen id is accepted when it is 1..128 characters of [A-Za-z0-9._:-].
bool valid_session_id(const std::string& id);

} // namespace mneme
