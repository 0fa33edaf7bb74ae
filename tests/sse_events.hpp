// The data events of a server-sent event stream as the doors write them ("event: T\n"
// optional, "data: JSON\n\n" each), parsed in order, "data: [DONE]" left out. For the
// tests of streamed answers (responses_wire_test, responses_door_test,
// responses_cancel_test). Header-only; any thread.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mneme::test {

inline std::vector<nlohmann::json> sse_data_events(const std::string& text) {
  std::vector<nlohmann::json> out;
  size_t at = 0;
  while ((at = text.find("data: ", at)) != std::string::npos) {
    auto end = text.find("\n\n", at);
    if (end == std::string::npos)
      break; // an event still on its way
    auto payload = text.substr(at + 6, end - at - 6);
    at = end;
    if (payload != "[DONE]")
      out.push_back(nlohmann::json::parse(payload));
  }
  return out;
}

} // namespace mneme::test
