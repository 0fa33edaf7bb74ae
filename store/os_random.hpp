// Bytes from the operating system's random source (getrandom(2)), for every identifier
// a client must not be able to guess: session ids (session_ids.hpp), the doors' response
// ids, API tokens. Never a seeded generator: each call asks the kernel.
//
// getrandom blocks only until the kernel's pool is initialized (early boot) and is
// retried when a signal interrupts it; a kernel without getrandom (ENOSYS) is served
// from /dev/urandom.
//
// Threads: any (no state).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mneme {

// Fills out[0..n) with random bytes; false (errno set) when the kernel gave none.
bool fill_os_random(unsigned char* out, size_t n);

// 2 * n lowercase hex digits of n random bytes. Throws std::system_error when the
// kernel gives no random bytes (an identifier is never made from anything weaker).
std::string os_random_hex(size_t n);

// An identifier a client is given and may send back: `prefix` and 128 random bits as
// 32 hex digits ("resp_" + 32 hex). Throws as os_random_hex.
std::string os_random_id(std::string_view prefix);

} // namespace mneme
