// libFuzzer target: the context service's body decoders and its answer encoder
// (apps/common/api/routes/context_service). The first byte picks the route (context, usage,
// model_error), the rest is the body. No input crashes or throws; a decoded request holds
// what the decoder promises (valid UTF-8 body, known roles, a tool message naming its
// call, an assistant answer, an error status); its rows encode back as OpenAI messages.
#include "apps/common/api/routes/context_service.hpp"
#include "apps/common/api/json_codec.hpp"
#include "apps/common/api/plumbing/request_decoder.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace mneme;
using namespace mneme::api;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mneme::fuzz::input_reader in{data, size};
  auto shape = in.byte() % 3;
  auto body = in.rest();
  bool valid_utf8 = !first_invalid_utf8(body);
  auto r = shape == 0 ? decode_context_call(body)
           : shape == 1 ? decode_usage_call(body)
                        : decode_model_error_call(body);
  if (!r)
    return 0;
  MNEME_FUZZ_CHECK(valid_utf8 || (shape == 0 && body.find_first_not_of(" \t\r\n")
                                                  == std::string_view::npos));
  const auto& rq = r->rq;
  MNEME_FUZZ_CHECK(rq.model.size() <= context_model_max_bytes);
  MNEME_FUZZ_CHECK(rq.prompt_tokens >= 0 && rq.completion_tokens >= 0);
  MNEME_FUZZ_CHECK(!rq.has_answer || rq.answer.role == msg_role::assistant);
  if (shape == 2)
    MNEME_FUZZ_CHECK(rq.status >= 100 && rq.status <= 599
                     && !(rq.status >= 200 && rq.status <= 299));
  for (const auto& m : rq.rows)
    MNEME_FUZZ_CHECK(m.role != msg_role::tool || !m.tool_call_id.empty());
  context_reply reply;
  reply.messages = rq.rows;
  if (rq.has_answer)
    reply.messages.push_back(rq.answer);
  reply.has_messages = true;
  auto text = dump_json(context_reply_json(reply, rq.op));
  MNEME_FUZZ_CHECK(!first_invalid_utf8(text));
  return 0;
}
