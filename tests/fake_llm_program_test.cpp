// Integration test of the mneme-fakellm program: it starts on an ephemeral port,
// announces it, applies the --scenario file and --window, answers over loopback,
// stops cleanly on SIGTERM, and refuses a bad scenario with the key's path.
// Needs the mneme-fakellm target built (ctest runs after a full build).
#define BOOST_TEST_MODULE fake_llm_program
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "fake_llm_test_client.hpp"

using namespace mneme::fakellm::testing;

namespace {

const std::string program = std::string(MNEME_BINARY_DIR) + "/mneme-fakellm";

struct child {
  pid_t pid = -1;
  FILE* out = nullptr;   // the child's stdout
  std::string err_path;  // the child's stderr, redirected to a file
};

child spawn(const std::vector<std::string>& args) {
  child c;
  c.err_path = "/tmp/mneme_fakellm_test_stderr_" + std::to_string(::getpid());
  int fds[2];
  BOOST_TEST_REQUIRE(::pipe(fds) == 0);
  c.pid = ::fork();
  if (c.pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    std::freopen(c.err_path.c_str(), "w", stderr);
    ::close(fds[0]);
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  c.out = ::fdopen(fds[0], "r");
  return c;
}

// Reads stdout lines until "listening http://127.0.0.1:PORT"; 0 if the child exits first.
uint16_t announced_port(child& c) {
  char line[512];
  while (std::fgets(line, sizeof line, c.out) != nullptr) {
    std::string s(line);
    auto at = s.find("listening http://127.0.0.1:");
    if (at != std::string::npos) return static_cast<uint16_t>(std::stoi(s.substr(at + 27)));
  }
  return 0;
}

int wait_exit(child& c) {
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  std::fclose(c.out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string write_file(const std::string& name, const std::string& text) {
  auto path = "/tmp/" + name + "_" + std::to_string(::getpid()) + ".yaml";
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
  auto scenario = write_file("fakellm_scenario",
                             "seed: 1\nfaults:\n  - kind: unavailable\n    model: \"flaky-\"\n");
  auto c = spawn({"--port", "0", "--window", "500", "--scenario", scenario, "--log-level", "warn"});
  auto port = announced_port(c);
  BOOST_TEST_REQUIRE(port != 0);
  BOOST_TEST(roundtrip(port, get_request("/health")).status == 200);
  BOOST_TEST(roundtrip(port, chat("flaky-1", "hi")).status == 503);
  BOOST_TEST(roundtrip(port, chat("steady-1", "hi")).status == 200);
  auto over = roundtrip(port, chat("steady-1", std::string(2100, 'a')));
  BOOST_TEST(over.status == 400);
  BOOST_TEST(over.body.find("maximum context length is 500 tokens") != std::string::npos);
  ::kill(c.pid, SIGTERM);
  BOOST_TEST(wait_exit(c) == 0);
  std::remove(scenario.c_str());
}

BOOST_AUTO_TEST_CASE(the_program_refuses_a_bad_scenario_naming_the_key) {
  BOOST_TEST_REQUIRE(::access(program.c_str(), X_OK) == 0, "build the mneme-fakellm target first");
  auto scenario = write_file("fakellm_bad", "faults:\n  - kind: reset\n    fraction: 2\n");
  auto c = spawn({"--scenario", scenario});
  BOOST_TEST(announced_port(c) == 0);
  BOOST_TEST(wait_exit(c) == 2);
  std::ifstream err(c.err_path);
  std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
  BOOST_TEST(text.find("faults[0]") != std::string::npos);
  BOOST_TEST(text.find("fraction") != std::string::npos);
  std::remove(scenario.c_str());
  std::remove(c.err_path.c_str());
}
