// libFuzzer target: the strict configuration loader (apps/common/config). Any text: no
// crash or exception; a result is either a configuration or at least one error; an
// accepted configuration rendered back to YAML loads again, and renders the same.
#include "apps/common/config/app_config.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = mneme::load_config_text(mneme::fuzz::as_text(data, size), "fuzz.yaml");
  MNEME_FUZZ_CHECK(r.ok() == r.errors.empty());
  if (!r.ok()) {
    (void)r.describe_errors();
    return 0;
  }
  auto rendered = mneme::render_effective_config(*r.config);
  auto again = mneme::load_config_text(rendered, "rendered.yaml");
  if (!again.ok())
    std::fprintf(stderr, "%s\n--- rendered:\n%s\n", again.describe_errors().c_str(),
                 rendered.c_str());
  MNEME_FUZZ_CHECK(again.ok());
  MNEME_FUZZ_CHECK(mneme::render_effective_config(*again.config) == rendered);
  return 0;
}
