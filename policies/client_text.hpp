// Strict checks of the names clients give (session keys, users, checkpoint names, fact
// keys) and the escaping of client text for log lines. Standard library only; pure
// functions, safe from any thread.
//
// A name is acceptable when it is 1..max_bytes bytes of well-formed UTF-8 (policies/
// utf8.hpp's contract) with no control character: U+0000..U+001F and U+007F. Such a
// name can be addressed again (it survives percent-encoding both ways), cannot break a
// log line, and reads the same in every client.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mneme {

inline constexpr std::size_t session_key_max_bytes = 1024;
inline constexpr std::size_t user_max_bytes = 512; // = store/facts.hpp fact_user_max_bytes
inline constexpr std::size_t checkpoint_name_max_bytes = 256;

enum class name_problem { none, empty, too_long, invalid_utf8, control_character };

struct name_verdict {
  name_problem problem = name_problem::none;
  std::size_t byte = 0; // offset of the offending byte (invalid_utf8, control_character)
  bool ok() const { return problem == name_problem::none; }
};

name_verdict check_name(std::string_view text, std::size_t max_bytes);

// "<what> is empty" / "<what> is longer than N bytes" / "<what> is not valid UTF-8
// (byte N)" / "<what> holds a control character (byte N)"; "" when ok.
std::string describe_name_problem(const name_verdict& v, std::string_view what,
                                  std::size_t max_bytes);

// `text` as one safe token for a key=value log line: in double quotes, with '"' and
// '\' escaped, control characters (C0, DEL, C1), U+2028, U+2029 and bytes that are not
// well-formed UTF-8 written as \xNN (each byte), and cut after max_bytes bytes of input (then "...(+N bytes)" follows the
// closing quote). A line can never be forged or split through it.
std::string log_quoted(std::string_view text, std::size_t max_bytes = 160);

} // namespace mneme
