// libFuzzer target: the CJK bigram tokenizer (policies/cjk_bigram). Any bytes: no crash,
// every token's byte range lies inside the input, in order. Valid UTF-8: a CJK token is
// exactly the bytes of its range, and every token is a substring of the input once both
// are folded (word tokens are folded, docs in cjk_bigram.hpp).
#include "policies/cjk_bigram.hpp"
#include "apps/common/api/plumbing/request_decoder.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto text = mneme::fuzz::as_text(data, size);
  auto tokens = mneme::cjk_bigram_tokens(text);
  bool valid = !mneme::api::first_invalid_utf8(text);
  size_t last_begin = 0;
  for (const auto& t : tokens) {
    MNEME_FUZZ_CHECK(t.begin < t.end && t.end <= text.size());
    MNEME_FUZZ_CHECK(t.begin >= last_begin);
    MNEME_FUZZ_CHECK(!t.text.empty());
    last_begin = t.begin;
    if (!valid)
      continue;
    auto source = text.substr(t.begin, t.end - t.begin);
    MNEME_FUZZ_CHECK(!mneme::api::first_invalid_utf8(t.text));
    if (t.kind == mneme::bigram_token_kind::cjk && source == t.text)
      continue;
    // The token is the folded form of its source: tokenizing the source alone gives it.
    auto again = mneme::cjk_bigram_tokens(source);
    bool found = false;
    for (const auto& a : again)
      found = found || a.text == t.text;
    MNEME_FUZZ_CHECK(found);
  }
  return 0;
}
