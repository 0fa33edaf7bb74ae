// libFuzzer target: the daemon's request decoder (apps/common/api/plumbing/request_decoder).
// The first byte picks the body shape (every decode_* and the query-parameter parsers),
// the rest is the body. No input crashes or throws; a decoded request holds what the
// decoder promises (valid UTF-8 bodies only, required fields set).
#include "apps/common/api/plumbing/request_decoder.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace mneme::api;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mneme::fuzz::input_reader in{data, size};
  auto shape = in.byte() % 11;
  auto body = in.rest();
  bool valid_utf8 = !first_invalid_utf8(body);
  switch (shape) {
    case 0: {
      auto r = decode_append(body);
      MNEME_FUZZ_CHECK(!r || valid_utf8);
      break;
    }
    case 1: {
      auto r = decode_turn(body);
      MNEME_FUZZ_CHECK(!r || valid_utf8);
      break;
    }
    case 2: {
      auto r = decode_compact(body);
      MNEME_FUZZ_CHECK(!r || valid_utf8);
      break;
    }
    case 3: {
      auto r = decode_name(body);
      MNEME_FUZZ_CHECK(!r || !r->name.empty());
      break;
    }
    case 4: {
      auto r = decode_checkpoint(body);
      MNEME_FUZZ_CHECK(!r || !r->name.empty());
      break;
    }
    case 5: {
      auto r = decode_fact_put(body);
      MNEME_FUZZ_CHECK(!r || !r->value.empty());
      break;
    }
    case 6: {
      auto r = decode_facts_inject(body, 200);
      MNEME_FUZZ_CHECK(!r || (r->limit >= 1 && r->limit <= 200));
      break;
    }
    case 7: {
      auto r = parse_int_param("limit", body, -5, 1000);
      MNEME_FUZZ_CHECK(!r || (*r >= -5 && *r <= 1000));
      break;
    }
    case 8: {
      auto r = parse_bool_param("open", body);
      MNEME_FUZZ_CHECK(!r || body == "true" || body == "false");
      break;
    }
    case 9: {
      auto r = parse_object(body, true);
      MNEME_FUZZ_CHECK(!r || r->is_object());
      break;
    }
    default: {
      auto at = first_invalid_utf8(body);
      MNEME_FUZZ_CHECK(!at || *at < body.size());
      break;
    }
  }
  return 0;
}
