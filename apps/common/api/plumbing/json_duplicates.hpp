// Parsing of request bodies that refuses a key written twice in one object (RFC 8259
// leaves it open; nlohmann keeps the last silently, so `{"role":"tool","role":"user"}`
// would read differently here than in a proxy in front). Used by every body decoder
// (request_decoder.cpp parse_object, the Anthropic door's parse_body, the MCP door).
// Header-only; pure; safe from any thread.
//
// Cost: one lookup of each key in the object being built, before it is inserted (the
// builder below is nlohmann's json_sax_dom_parser with that check added), so a body
// costs what Json::parse costs plus O(log keys) per key for json (linear per key for
// ordered_json, as its own insertion is). nlohmann's callback parser is not used: its
// end_object scans the enclosing array for discarded values, O(n^2) in a transcript's
// messages (docs/benchmarks.md "proxy").
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace mneme::api {

// The longest part of a duplicate key an error message repeats.
inline constexpr std::size_t duplicate_key_shown_bytes = 100;

namespace json_duplicates_detail {

// Builds the value as nlohmann::detail::json_sax_dom_parser does (the SAX interface of
// Json::sax_parse) and notes the first key met twice in one object.
// Invariant: ref_stack holds the open arrays and objects, innermost last; `element` is
// the member the last key named, in ref_stack.back() when that is an object.
template <class Json>
class noting_builder {
public:
  using number_integer_t = typename Json::number_integer_t;
  using number_unsigned_t = typename Json::number_unsigned_t;
  using number_float_t = typename Json::number_float_t;
  using string_t = typename Json::string_t;
  using binary_t = typename Json::binary_t;

  noting_builder(Json& root, std::string& duplicate, bool allow_exceptions)
      : root_(root), duplicate_(duplicate), allow_exceptions_(allow_exceptions) {}

  bool null() { return add(nullptr) != nullptr; }
  bool boolean(bool v) { return add(v) != nullptr; }
  bool number_integer(number_integer_t v) { return add(v) != nullptr; }
  bool number_unsigned(number_unsigned_t v) { return add(v) != nullptr; }
  bool number_float(number_float_t v, const string_t&) { return add(v) != nullptr; }
  bool string(string_t& v) { return add(v) != nullptr; }
  bool binary(binary_t& v) { return add(std::move(v)) != nullptr; }
  bool start_object(std::size_t) {
    ref_stack_.push_back(add(Json::value_t::object));
    return true;
  }
  bool key(string_t& k) {
    Json& object = *ref_stack_.back();
    if (duplicate_.empty() && object.contains(k))
      duplicate_ = k.empty() ? std::string{"\"\""} : std::string{k};
    element_ = &object[k];
    return true;
  }
  bool end_object() {
    ref_stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    ref_stack_.push_back(add(Json::value_t::array));
    return true;
  }
  bool end_array() {
    ref_stack_.pop_back();
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    errored_ = true;
    if (allow_exceptions_)
      throw e; // the parse_error itself (its byte), as Json::parse throws it
    return false;
  }
  bool errored() const { return errored_; }

private:
  template <class Value>
  Json* add(Value&& v) {
    if (ref_stack_.empty()) {
      root_ = Json(std::forward<Value>(v));
      return &root_;
    }
    Json& open = *ref_stack_.back();
    if (open.is_array()) {
      open.emplace_back(std::forward<Value>(v));
      return &open.back();
    }
    *element_ = Json(std::forward<Value>(v));
    return element_;
  }

  Json& root_;
  std::string& duplicate_;
  bool allow_exceptions_;
  std::vector<Json*> ref_stack_;
  Json* element_ = nullptr;
  bool errored_ = false;
};

} // namespace json_duplicates_detail

// Parses `text` as Json::parse(text, nullptr, allow_exceptions) does; `duplicate` is
// set to the first key met twice in one object ("" when none; the value then holds the
// last one, as Json::parse keeps it). A parse error throws or gives a discarded value
// exactly as Json::parse does.
template <class Json>
Json parse_noting_duplicate_keys(std::string_view text, std::string& duplicate,
                                 bool allow_exceptions = true) {
  duplicate.clear();
  Json result;
  json_duplicates_detail::noting_builder<Json> builder(result, duplicate, allow_exceptions);
  Json::sax_parse(text.begin(), text.end(), &builder);
  if (builder.errored())
    return Json(Json::value_t::discarded);
  return result;
}

// "the body holds the key 'K' twice in one object" (K cut after
// duplicate_key_shown_bytes bytes).
inline std::string duplicate_key_message(const std::string& key) {
  auto shown = key.substr(0, duplicate_key_shown_bytes);
  return "the body holds the key '" + shown + (key.size() > shown.size() ? "...'" : "'")
         + " twice in one object";
}

} // namespace mneme::api
