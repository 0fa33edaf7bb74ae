// Parsing of request bodies that refuses a key written twice in one object (RFC 8259
// leaves it open; nlohmann keeps the last silently, so `{"role":"tool","role":"user"}`
// would read differently here than in a proxy in front). Used by every body decoder
// (request_decoder.cpp parse_object, the Anthropic door's parse_body, the MCP door).
// Header-only; pure; safe from any thread.
//
// Cost: the parser's callback keeps one hash set of the keys of each object still open,
// so a body costs O(keys) more work and memory, never O(keys^2).
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

namespace mneme::api {

// The longest part of a duplicate key an error message repeats.
inline constexpr std::size_t duplicate_key_shown_bytes = 100;

// Parses `text` as Json::parse(text, callback, allow_exceptions) does; `duplicate` is
// set to the first key met twice in one object ("" when none). A parse error throws or
// gives a discarded value exactly as Json::parse does.
template <class Json>
Json parse_noting_duplicate_keys(std::string_view text, std::string& duplicate,
                                 bool allow_exceptions = true) {
  duplicate.clear();
  std::vector<std::unordered_set<std::string>> open; // the keys of each open object
  typename Json::parser_callback_t note = [&](int, typename Json::parse_event_t event,
                                              Json& parsed) {
    using ev = typename Json::parse_event_t;
    if (event == ev::object_start) {
      open.emplace_back();
    } else if (event == ev::object_end) {
      if (!open.empty())
        open.pop_back();
    } else if (event == ev::key && !open.empty() && duplicate.empty()) {
      const auto& key = parsed.template get_ref<const typename Json::string_t&>();
      if (!open.back().insert(key).second)
        duplicate = key.empty() ? std::string{"\"\""} : key;
    }
    return true;
  };
  return Json::parse(text.begin(), text.end(), note, allow_exceptions);
}

// "the body holds the key 'K' twice in one object" (K cut after
// duplicate_key_shown_bytes bytes).
inline std::string duplicate_key_message(const std::string& key) {
  auto shown = key.substr(0, duplicate_key_shown_bytes);
  return "the body holds the key '" + shown + (key.size() > shown.size() ? "...'" : "'")
         + " twice in one object";
}

} // namespace mneme::api
