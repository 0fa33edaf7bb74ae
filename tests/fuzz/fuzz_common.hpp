// Shared by the libFuzzer targets of tests/fuzz (fuzz_*.cpp) only: the check that
// turns a broken invariant into a crash libFuzzer records, and a byte reader that
// splits one input into a few choices and the rest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace mneme::fuzz {

// A broken invariant: prints what and where, then aborts (libFuzzer saves the input).
[[noreturn]] inline void invariant_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "fuzz invariant broken at %s:%d: %s\n", file, line, what);
  std::abort();
}

// The input as a string view.
inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Takes leading bytes off the input as small choices; `rest()` is what is left.
class input_reader {
 public:
  input_reader(const uint8_t* data, size_t size) : text_(as_text(data, size)) {}
  // The next byte (0 when the input is used up).
  uint8_t byte() {
    if (text_.empty())
      return 0;
    auto b = static_cast<uint8_t>(text_.front());
    text_.remove_prefix(1);
    return b;
  }
  std::string_view rest() const { return text_; }

 private:
  std::string_view text_;
};

} // namespace mneme::fuzz

#define MNEME_FUZZ_CHECK(cond)                                                       \
  do {                                                                               \
    if (!(cond))                                                                     \
      ::mneme::fuzz::invariant_failed(#cond, __FILE__, __LINE__);                    \
  } while (0)
