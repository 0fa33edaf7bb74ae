// libFuzzer target: reading the LLM's answers (actors/llm/llm_wire, actors/llm/sse_answer).
// One input is read three ways: as a whole JSON answer (parse_chat_answer, the error
// status in a body, reasoning stripping) and as a server-sent-event stream fed whole and
// fed in pieces cut where the input's first bytes say. No crash; the stream's answer does
// not depend on where the bytes were cut (events may be split anywhere between feeds).
#include <algorithm>

#include "actors/llm/llm_wire.hpp"
#include "actors/llm/sse_answer.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace mneme;

namespace {

llm::parsed_answer read_stream(std::string_view body, const uint8_t* cuts, size_t n_cuts,
                               llm_purpose purpose) {
  llm::sse_answer stream{nullptr};
  size_t i = 0;
  while (!body.empty()) {
    size_t piece = n_cuts == 0 ? body.size() : 1 + cuts[i++ % n_cuts] % 17;
    piece = std::min(piece, body.size());
    stream.feed(body.substr(0, piece));
    body.remove_prefix(piece);
  }
  return stream.finish(purpose);
}

bool same_answer(const llm::parsed_answer& a, const llm::parsed_answer& b) {
  if (a.kind != b.kind || a.answer.content != b.answer.content
      || a.answer.finish_reason != b.answer.finish_reason
      || a.answer.prompt_tokens != b.answer.prompt_tokens
      || a.answer.completion_tokens != b.answer.completion_tokens
      || a.answer.server_compacted != b.answer.server_compacted
      || a.answer.tool_calls != b.answer.tool_calls)
    return false;
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mneme::fuzz::input_reader in{data, size};
  auto purpose = static_cast<llm_purpose>(in.byte() % 3);
  uint8_t cuts[4] = {in.byte(), in.byte(), in.byte(), in.byte()};
  auto body = in.rest();

  auto whole = llm::parse_chat_answer(body, purpose);
  MNEME_FUZZ_CHECK(whole.kind == llm_error_kind::none || !whole.detail.empty());
  int status = llm::error_status_in_body(body);
  MNEME_FUZZ_CHECK(status == 0 || (status >= 400 && status <= 599));
  auto stripped = llm::strip_reasoning_blocks(body);
  MNEME_FUZZ_CHECK(stripped.size() <= body.size());

  auto streamed = read_stream(body, nullptr, 0, purpose);
  auto pieces = read_stream(body, cuts, 4, purpose);
  MNEME_FUZZ_CHECK(same_answer(streamed, pieces));
  return 0;
}
