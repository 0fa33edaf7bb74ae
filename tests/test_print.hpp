// How Boost.Test prints mneme's errors and LLM enums in assertion messages: errc and
// caf::error by their rendered names, the LLM purpose. Specializations of Boost's
// print_log_value rather than operator<<, so that an operator<< added later beside an
// enum (errc.hpp, chat_request.hpp) does not collide with these. One definition per
// printed type for the whole test build (unity batches; tests/print_vocabulary.hpp).
#pragma once

#include <ostream>

#include <boost/test/tools/detail/print_helper.hpp>

#include "actors/llm/llm_wire.hpp"
#include "caf/error.hpp"
#include "messages/errc.hpp"
#include "messages/recall_types.hpp"
#include "tests/print_vocabulary.hpp"

namespace boost::test_tools::tt_detail {

template <>
struct print_log_value<mneme::errc> {
  void operator()(std::ostream& os, mneme::errc e) { os << mneme::to_string(e); }
};

template <>
struct print_log_value<caf::error> {
  void operator()(std::ostream& os, const caf::error& e) { os << caf::to_string(e); }
};

template <>
struct print_log_value<mneme::llm_purpose> {
  void operator()(std::ostream& os, mneme::llm_purpose p) { os << mneme::to_string(p); }
};

template <>
struct print_log_value<mneme::recall_hit_kind> {
  void operator()(std::ostream& os, mneme::recall_hit_kind k) { os << mneme::to_string(k); }
};

} // namespace boost::test_tools::tt_detail
