// The text/event-stream answer of one request; see sse_channel.hpp.
#include "apps/common/api/front/sse_channel.hpp"

namespace mneme::api {

void sse_channel::push(std::string bytes) {
  if (ended_)
    return;
  if (!stream_) {
    header_list headers{{"X-Accel-Buffering", "no"}}; // the front sends Cache-Control
    headers.insert(headers.end(), headers_.begin(), headers_.end());
    stream_ = reply_.stream(200, "text/event-stream", std::move(headers));
    if (!stream_) { // the request was already answered (e.g. a shutdown's 503)
      ended_ = true;
      return;
    }
    stream_->set_cut_ending(std::move(cut_ending_));
  }
  stream_->push(std::move(bytes));
}

std::string sse_channel::shutdown_ending() {
  return "event: error\ndata: {\"error\":{\"code\":\"shutting_down\",\"message\":\"the daemon "
         "is shutting down\"}}\n\ndata: [DONE]\n\n";
}

void sse_channel::end() { end_with("data: [DONE]\n\n"); }

void sse_channel::end_with(std::string last) {
  if (ended_ || !stream_)
    return;
  stream_->push(std::move(last));
  stream_->end();
  ended_ = true;
}

} // namespace mneme::api
