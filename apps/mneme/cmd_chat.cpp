// `mneme chat KEY [--user U] [--server URL [--token T] | --db FILE | --config FILE]`: an
// interactive terminal chat with session KEY (apps/common/cli/chat_loop.hpp): against a
// running daemon, or in this process on the database file with the configured model
// (base_url builtin = the in-process fake LLM). Answers stream as they are written;
// Ctrl-C or Ctrl-D leaves cleanly (exit 0): a turn in flight still completes and is
// stored (in process the runtime's clean stop waits for it).
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <memory>

#include "apps/common/cli/chat_loop.hpp"
#include "apps/common/cli/daemon_client.hpp"
#include "apps/common/cli/data_source.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "apps/common/host/local_chat.hpp"
#include "apps/common/host/runtime_host.hpp"
#include "apps/mneme/command_registry.hpp"
#include "policies/client_text.hpp"
#include "policies/key_namespace.hpp"

namespace mneme::cli {

namespace {

volatile std::sig_atomic_t chat_interrupted = 0;

void on_interrupt(int) { chat_interrupted = 1; }

// SIGINT sets the flag without SA_RESTART, so a read waiting for a line returns at once.
void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
}

struct chat_options {
  source_options source;
  std::string key;
  std::string user; // empty: gateway.default_user
};

chat_terminal terminal() {
  return chat_terminal{std::cin, std::cout, ::isatty(STDOUT_FILENO) == 1,
                       [] { return chat_interrupted != 0; }};
}

int chat_daemon(const chat_options& opt) {
  daemon_client client{opt.source.server, opt.source.token};
  remote_chat_channel channel{client, opt.key, opt.user, [] { return chat_interrupted != 0; }};
  return run_chat(channel, terminal());
}

int chat_file(const chat_options& opt) {
  app_config cfg;
  if (auto f = load_config(opt.source, cfg))
    return report_failure("chat", *f);
  fakellm::fake_llm_server server;
  if (wants_builtin(cfg)) {
    auto port = server.start();
    if (!port)
      return report_failure("chat", failure_of(port.error(), "cannot start the built-in fake LLM"));
    point_builtin_at(cfg, server.base_url());
  }
  auto rc = runtime_config_of(cfg);
  if (!rc)
    return report_failure("chat", failure_of(rc.error(), "LLM configuration"));
  auto host = runtime_host::start(std::move(*rc));
  if (!host)
    return report_failure("chat", failure_of(host.error(), "cannot start the runtime on "
                                                             + cfg.database.path));
  auto user = opt.user.empty() ? cfg.gateway.default_user : opt.user;
  if (auto why = key_refusal(opt.key, session_key_max_bytes); !why.empty()) {
    (*host)->stop();
    return report_failure("chat", failure::input(why));
  }
  int code;
  {
    local_chat_channel channel{(*host)->system(), (*host)->rt(), stored_key(user, opt.key), user};
    code = run_chat(channel, terminal());
  }
  (*host)->stop();
  return code;
}

} // namespace

MNEME_COMMAND("chat", "an interactive chat with a session: streamed answers, /compress, /search, /rollback",
              [](CLI::App& cmd) -> command_action {
                auto opt = std::make_shared<chat_options>();
                cmd.add_option("KEY", opt->key, "the session key")->required();
                cmd.add_option("--user", opt->user, "the user (default gateway.default_user)");
                add_source_options(cmd, opt->source, false);
                return [opt] {
                  catch_interrupts();
                  return opt->source.remote() ? chat_daemon(*opt) : chat_file(*opt);
                };
              });

} // namespace mneme::cli
