// Server-sent events from pieces of bytes; see sse_reader.hpp.
#include "policies/sse_reader.hpp"

namespace mneme {

void sse_reader::feed(std::string_view bytes) {
  for (char c : bytes) {
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n')
        continue; // the \n of a \r\n: the line already ended
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      line(partial_line_);
      partial_line_.clear();
      continue;
    }
    partial_line_.push_back(c);
  }
}

void sse_reader::finish() {
  if (!partial_line_.empty()) {
    line(partial_line_);
    partial_line_.clear();
  }
  dispatch();
}

void sse_reader::line(std::string_view text) {
  if (text.empty()) {
    dispatch();
    return;
  }
  if (text.front() == ':')
    return;
  auto colon = text.find(':');
  auto field = text.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = text.substr(colon + 1);
    if (!value.empty() && value.front() == ' ')
      value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_)
      data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    name_.assign(value);
  }
}

void sse_reader::dispatch() {
  if (has_data_)
    on_event_(sse_event_view{name_, data_});
  name_.clear();
  data_.clear();
  has_data_ = false;
}

} // namespace mneme
