// libFuzzer target: the fake LLM's HTTP/1.1 request parser
// (apps/common/fakellm/http_parser), fed as a socket would: the whole buffer, and each
// complete request's own bytes again. No crash; a complete request consumed a non-empty
// prefix and parses the same from exactly those bytes; a prefix of a request is never
// complete before its end.
#include "apps/common/fakellm/http_parser.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace mneme::fakellm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mneme::fuzz::input_reader in{data, size};
  http_limits limits;
  limits.max_header_bytes = 64 + in.byte() * 16;
  limits.max_body_bytes = in.byte() * 64;
  auto buffer = in.rest();
  while (!buffer.empty()) {
    http_request req;
    auto r = parse_request(buffer, limits, &req);
    if (r.status != parse_status::complete)
      break;
    MNEME_FUZZ_CHECK(r.consumed > 0 && r.consumed <= buffer.size());
    MNEME_FUZZ_CHECK(req.body.size() <= limits.max_body_bytes);
    auto own = buffer.substr(0, r.consumed);
    http_request again;
    auto r2 = parse_request(own, limits, &again);
    MNEME_FUZZ_CHECK(r2.status == parse_status::complete && r2.consumed == r.consumed);
    MNEME_FUZZ_CHECK(again.method == req.method && again.target == req.target
                     && again.body == req.body && again.headers == req.headers);
    http_request partial;
    auto r3 = parse_request(own.substr(0, own.size() - 1), limits, &partial);
    MNEME_FUZZ_CHECK(r3.status != parse_status::complete);
    (void)req.path();
    (void)req.header("content-length");
    buffer.remove_prefix(r.consumed);
  }
  return 0;
}
