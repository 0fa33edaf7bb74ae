// libFuzzer target: the OpenAI door's body decoding (apps/common/api/doors/openai_chat/
// openai_fast_body.hpp and openai_wire.hpp). The input is the body. No input crashes or
// throws, and decode_openai_chat, whether its fast reader takes the body or leaves it
// to the full decoder, answers exactly what the full decoder answers: the same request
// or an error with the same text (tests/openai_body_agreement.hpp). The seed corpus
// holds bodies of every shape the reader takes and of those it leaves.
#include "tests/fuzz/fuzz_common.hpp"
#include "tests/openai_body_agreement.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto seen = mneme::test::openai_body_agreement(mneme::fuzz::as_text(data, size));
  MNEME_FUZZ_CHECK(seen.agrees);
  return 0;
}
