// Server-sent events read from bytes that arrive in pieces (the text/event-stream format
// of the WHATWG HTML standard, the parts streaming HTTP APIs use): lines end with \n,
// \r\n or \r and may be split anywhere between two feeds; `data:` lines of one event are
// joined by "\n"; `event:` names it; `:` lines are comments; a blank line ends the event.
// Events without data are dropped. Used by the LLM client (a model's streamed answer)
// and by `mneme chat` (a streamed turn). Pure; one reader per stream; not thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace mneme {

struct sse_event_view {
  std::string_view name; // "" when the event has no `event:` line
  std::string_view data;
};

class sse_reader {
 public:
  using handler = std::function<void(const sse_event_view&)>;

  explicit sse_reader(handler on_event) : on_event_(std::move(on_event)) {}

  void feed(std::string_view bytes);
  // The stream ended: a last event without its blank line is dispatched.
  void finish();

 private:
  void line(std::string_view text);
  void dispatch();

  handler on_event_;
  std::string partial_line_;
  bool after_cr_ = false; // the previous byte was \r (a following \n is its pair)
  std::string name_;
  std::string data_;
  bool has_data_ = false;
};

} // namespace mneme
