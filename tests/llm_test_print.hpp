// Test seam: how Boost.Test prints the LLM client's enums. Specializations of Boost's
// print_log_value rather than operator<<, so that an operator<< added later beside an
// enum (errc.hpp, chat_request.hpp) does not collide with these.
#pragma once

#include <ostream>

#include <boost/test/tools/detail/print_helper.hpp>

#include "actors/llm/llm_wire.hpp"
#include "messages/errc.hpp"

namespace boost::test_tools::tt_detail {

template <>
struct print_log_value<mneme::errc> {
  void operator()(std::ostream& os, mneme::errc e) { os << mneme::to_string(e); }
};

template <>
struct print_log_value<mneme::llm_purpose> {
  void operator()(std::ostream& os, mneme::llm_purpose p) { os << mneme::to_string(p); }
};

} // namespace boost::test_tools::tt_detail
