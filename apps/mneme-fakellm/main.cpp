// mneme-fakellm: the fault-injecting fake LLM server as a program (SPEC §8).
//   mneme-fakellm [--port N] [--host 127.0.0.1] [--scenario FILE.yaml] [--window TOKENS]
//                 [--answer-tokens N] [--log-level info]
// Prints "listening http://HOST:PORT" once bound (port 0 picks a free port), serves
// until SIGINT/SIGTERM, then stops cleanly. The scenario format and control API are
// documented in configs/fakellm/example.yaml and apps/common/fakellm/.
#include <csignal>
#include <cstdio>
#include <iostream>

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "apps/common/fakellm/fake_llm_server.hpp"
#include "messages/errc.hpp"

namespace {

// Thousands of concurrent connections need as many descriptors as the hard limit allows.
void raise_fd_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
}

} // namespace

int main(int argc, char** argv) {
  using namespace mneme::fakellm;
  CLI::App app{"mneme-fakellm: a fault-injecting fake OpenAI-compatible LLM server"};
  fake_llm_options opts;
  std::string scenario_file;
  std::string log_level = "info";
  int port = 0;
  int64_t window = opts.answers.window_tokens;
  int64_t answer_tokens = opts.answers.answer_tokens;
  app.add_option("--port", port, "TCP port (0 = pick a free one)")->check(CLI::Range(0, 65535));
  app.add_option("--host", opts.host, "IPv4 address to listen on")->capture_default_str();
  app.add_option("--scenario", scenario_file, "YAML scenario of faults")->check(CLI::ExistingFile);
  app.add_option("--window", window, "context window in tokens")->check(CLI::PositiveNumber);
  app.add_option("--answer-tokens", answer_tokens, "size of chat answers in tokens")
      ->check(CLI::PositiveNumber);
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  auto log = spdlog::stdout_color_mt("fakellm");
  log->set_level(spdlog::level::from_str(log_level));
  opts.log = log;
  opts.port = static_cast<uint16_t>(port);
  opts.answers.window_tokens = window;
  opts.answers.answer_tokens = answer_tokens;
  raise_fd_limit();

  fake_llm_server server{opts};
  if (!scenario_file.empty()) {
    auto s = load_scenario_file(scenario_file);
    if (!s) {
      std::cerr << "mneme-fakellm: " << mneme::render_error(s.error()) << "\n";
      return 2;
    }
    if (auto err = server.set_scenario(std::move(*s))) {
      std::cerr << "mneme-fakellm: " << mneme::render_error(err) << "\n";
      return 2;
    }
  }

  // Block the stop signals before the loop thread starts so only sigwait sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto bound = server.start();
  if (!bound) {
    std::cerr << "mneme-fakellm: " << mneme::render_error(bound.error()) << "\n";
    return 1;
  }
  std::cout << "listening " << server.base_url() << std::endl;
  int sig = 0;
  sigwait(&stop_signals, &sig);
  log->info("port={} event=signal signal={}", *bound, sig);
  server.stop();
  return 0;
}
