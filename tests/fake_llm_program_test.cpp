// Integration test of the mneme-fakellm program: it starts on an ephemeral port,
// announces it, applies the --scenario file and --window, answers over loopback,
// stops cleanly on SIGTERM, and refuses a bad scenario with the key's path.
// Needs the mneme-fakellm target built (ctest runs after a full build).
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>

#include "fake_llm_test_client.hpp"
#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(fake_llm_program_test)

using namespace mneme::fakellm::testing;
using namespace std::chrono_literals;
using mneme::testing::child_program;

namespace {

const std::string program = std::string(MNEME_BINARY_DIR) + "/mneme-fakellm";

// Writes `text` to the file `name` in `dir`; its path.
std::string write_file(const mneme::testing::temp_dir& dir, const std::string& name,
                       const std::string& text) {
  auto path = dir.file(name);
  std::ofstream(path) << text;
  return path;
}

std::string chat(const std::string& model, const std::string& text) {
  return post_request("/v1/chat/completions", R"({"model":")" + model +
                                                  R"(","messages":[{"role":"user","content":")" +
                                                  text + R"("}]})");
}

} // namespace

BOOST_AUTO_TEST_CASE(the_program_serves_its_scenario_and_stops_on_sigterm) {
  BOOST_TEST_REQUIRE(::access(program.c_str(), X_OK) == 0, "build the mneme-fakellm target first");
  mneme::testing::temp_dir dir{"mneme-fakellm-program"};
  auto scenario = write_file(dir, "scenario.yaml",
                             "seed: 1\nfaults:\n  - kind: unavailable\n    model: \"flaky-\"\n");
  child_program c;
  std::string said;
  auto port = static_cast<uint16_t>(mneme::testing::start_fakellm(
    c, {"--window", "500", "--scenario", scenario, "--log-level", "warn"}, said,
    dir.file("stderr.txt")));
  BOOST_TEST_REQUIRE(port != 0, said);
  BOOST_TEST(roundtrip(port, get_request("/health")).status == 200);
  BOOST_TEST(roundtrip(port, chat("flaky-1", "hi")).status == 503);
  BOOST_TEST(roundtrip(port, chat("steady-1", "hi")).status == 200);
  auto over = roundtrip(port, chat("steady-1", std::string(2100, 'a')));
  BOOST_TEST(over.status == 400);
  BOOST_TEST(over.body.find("maximum context length is 500 tokens") != std::string::npos);
  BOOST_TEST(c.stop(SIGTERM, 20s) == 0);
}

BOOST_AUTO_TEST_CASE(the_program_refuses_a_bad_scenario_naming_the_key) {
  BOOST_TEST_REQUIRE(::access(program.c_str(), X_OK) == 0, "build the mneme-fakellm target first");
  mneme::testing::temp_dir dir{"mneme-fakellm-program"};
  auto scenario = write_file(dir, "bad.yaml", "faults:\n  - kind: reset\n    fraction: 2\n");
  auto err_path = dir.file("stderr.txt");
  child_program c;
  BOOST_TEST_REQUIRE(c.start("mneme-fakellm", {"--scenario", scenario}, err_path));
  std::string said;
  BOOST_TEST(c.port_after(mneme::testing::fakellm_listening_marker, 20s, said) == 0);
  BOOST_TEST(c.wait(20s) == 2);
  std::ifstream err(err_path);
  std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
  BOOST_TEST(text.find("faults[0]") != std::string::npos);
  BOOST_TEST(text.find("fraction") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END() // fake_llm_program_test
