// How Boost.Test prints the transcript vocabulary in assertion messages: the role, trigger
// and LLM-error enums (hooks found by argument-dependent lookup), lists of strings and ids.
// Standard library and std-only messages/ headers, so the pure policy tests may include
// it. One definition per printed type for the whole test build: the test files of a
// suite compile together in unity batches, where a second hook for the same type in
// another file would collide.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <boost/test/tools/detail/print_helper.hpp>

#include "messages/llm_error_kind.hpp"
#include "messages/transcript.hpp"
#include "messages/trigger.hpp"

namespace mneme {
inline std::ostream& boost_test_print_type(std::ostream& os, msg_role r) {
  return os << to_string(r);
}
inline std::ostream& boost_test_print_type(std::ostream& os, trigger t) {
  return os << to_string(t);
}
inline std::ostream& boost_test_print_type(std::ostream& os, llm_error_kind k) {
  return os << to_string(k);
}
} // namespace mneme

namespace boost::test_tools::tt_detail {

template <>
struct print_log_value<std::vector<std::string>> {
  void operator()(std::ostream& os, const std::vector<std::string>& items) {
    os << '[';
    for (size_t i = 0; i < items.size(); ++i) os << (i ? ", " : "") << '"' << items[i] << '"';
    os << ']';
  }
};

template <>
struct print_log_value<std::vector<int64_t>> {
  void operator()(std::ostream& os, const std::vector<int64_t>& items) {
    os << '[';
    for (size_t i = 0; i < items.size(); ++i) os << (i ? ", " : "") << items[i];
    os << ']';
  }
};

} // namespace boost::test_tools::tt_detail
