// `mneme serve [--config FILE] [--host H] [--port P] [--db FILE]`: the daemon. Starts
// the runtime on the configuration (embedded defaults unless --config; the flags
// override gateway.host, gateway.port and database.path), the in-process fake LLM when
// model.base_url (or auxiliary.compression.base_url) is `builtin`, and the HTTP/JSON
// API (docs/api.md) on the event-driven front (gateway.io_threads threads). When ready
// it prints one line to stdout:
//   mneme serve: listening on http://HOST:PORT (db FILE)
// (--port 0 binds a free port, printed there).
//
// Credentials (docs/api.md "Authentication"): gateway.auth_token (or auth_token_file)
// is the admin token; gateway.tokens_file holds scoped tokens, read at start (a bad
// line: exit 2 naming it) and again on SIGHUP (a bad file then keeps the tokens in use
// and logs the error). With no credential at all the daemon refuses to listen on a
// non-loopback host unless gateway.allow_unauthenticated is true (exit 2).
//
// SIGINT/SIGTERM: the listener closes and new requests get 503 shutting_down; requests
// in flight may finish for gateway.shutdown_drain_seconds; then every request still
// waiting is answered 503 shutting_down, the runtime stops (the writer flushes, the
// index backlog is indexed, and only then the database lock is released), the last
// answers are written and the process exits 0 — within the drain window plus a few
// seconds, whatever the model does.
//
// Logs: every logger writes through one sink per destination (stderr or logging.file),
// so lines never interleave; flushed at warn and every second.
//
// Exit codes: 0 clean shutdown, 1 the runtime or the listener failed, 2 bad
// configuration. Threads: main starts everything with SIGINT/SIGTERM/SIGHUP blocked
// (every thread inherits the mask) and then waits for them in sigwait.
#include <cctype>
#include <csignal>
#include <signal.h>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "apps/common/api/http_server.hpp"
#include "apps/common/api/http_status.hpp"
#include "apps/common/api/tokens/token_store.hpp"
#include "apps/common/host/runtime_host.hpp"
#include "apps/common/config/app_config.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "apps/mneme/command_registry.hpp"
#include "policies/client_text.hpp"
#include "policies/listen_guard.hpp"

namespace mneme::cli {

namespace {

struct serve_options {
  std::string config_file;
  std::string host;   // empty = gateway.host
  int port = -1;      // -1 = gateway.port
  std::string db;     // empty = database.path
};

// The one sink of logging.file (or stderr): every logger of the daemon shares it.
spdlog::sink_ptr make_sink(const logging_params& p) {
  try {
    if (p.file.empty())
      return std::make_shared<spdlog::sinks::stderr_sink_mt>();
    return std::make_shared<spdlog::sinks::basic_file_sink_mt>(p.file);
  } catch (const std::exception& e) {
    std::cerr << "mneme serve: logging.file " << p.file << ": " << e.what() << "\n";
    return nullptr;
  }
}

std::shared_ptr<spdlog::logger> make_logger(const logging_params& p, const spdlog::sink_ptr& sink,
                                            const std::string& name) {
  auto log = std::make_shared<spdlog::logger>(name, sink);
  log->set_level(spdlog::level::from_str(p.level));
  log->flush_on(spdlog::level::warn);
  spdlog::register_logger(log); // so spdlog::flush_every reaches it
  return log;
}

api::front_limits front_limits_of(const gateway_params& g) {
  api::front_limits l;
  l.max_connections = g.max_connections;
  l.max_connections_per_address = g.max_connections_per_address;
  l.reserved_connections = g.reserved_connections;
  l.header_timeout = std::chrono::seconds{g.header_timeout_seconds};
  l.body_timeout = std::chrono::seconds{g.body_timeout_seconds};
  l.body_min_bytes_per_second = g.body_min_bytes_per_second;
  l.keep_alive_timeout = std::chrono::seconds{g.keep_alive_seconds};
  l.stream_buffer_bytes = g.stream_buffer_bytes;
  return l;
}

// The token of gateway.auth_token_file (trailing whitespace dropped), or auth_token.
std::optional<std::string> auth_token_of(const gateway_params& g) {
  if (g.auth_token_file.empty())
    return g.auth_token;
  std::ifstream in{g.auth_token_file};
  if (!in)
    return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  auto token = ss.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())))
    token.pop_back();
  return token;
}

// The scoped tokens of gateway.tokens_file; null when none is configured.
caf::expected<std::shared_ptr<const api::token_set>> tokens_of(const gateway_params& g) {
  if (g.tokens_file.empty())
    return std::shared_ptr<const api::token_set>{};
  auto set = api::token_set::load(g.tokens_file);
  if (!set)
    return set.error();
  return std::make_shared<const api::token_set>(std::move(*set));
}

// SIGHUP: the tokens file again; a file that does not load keeps the tokens in use.
void reload_tokens(const gateway_params& g, api::http_api& api, spdlog::logger& log) {
  if (g.tokens_file.empty()) {
    log.info("event=sighup tokens_file=none");
    return;
  }
  auto tokens = tokens_of(g);
  if (!tokens) {
    log.error("event=tokens_reload_failed error={} kept=previous",
              log_quoted(api::error_message_of(tokens.error())));
    return;
  }
  log.info("event=tokens_reloaded file={} tokens={}", log_quoted(g.tokens_file),
           (*tokens)->size());
  api.set_tokens(std::move(*tokens));
}

int serve(const serve_options& opt) {
  auto loaded = config_or_defaults(opt.config_file, std::cerr);
  if (!loaded)
    return exit_usage;
  auto& cfg = *loaded;
  if (!opt.host.empty())
    cfg.gateway.host = opt.host;
  if (opt.port >= 0)
    cfg.gateway.port = opt.port;
  if (!opt.db.empty())
    cfg.database.path = opt.db;
  auto token = auth_token_of(cfg.gateway);
  if (!token) {
    std::cerr << "mneme serve: gateway.auth_token_file " << cfg.gateway.auth_token_file
              << " cannot be read\n";
    return exit_usage;
  }
  auto tokens = tokens_of(cfg.gateway);
  if (!tokens) {
    std::cerr << "mneme serve: gateway.tokens_file: " << api::error_message_of(tokens.error())
              << "\n";
    return exit_usage;
  }
  bool credentials = !token->empty() || *tokens;
  if (!may_listen(cfg.gateway.host, credentials, cfg.gateway.allow_unauthenticated)) {
    std::cerr << "mneme serve: gateway.host " << cfg.gateway.host
              << " is not a loopback address and no token is configured "
                 "(gateway.auth_token, gateway.auth_token_file or gateway.tokens_file); "
                 "configure one, or set gateway.allow_unauthenticated: true\n";
    return exit_usage;
  }
  auto sink = make_sink(cfg.logging);
  if (!sink)
    return exit_usage;
  auto log = make_logger(cfg.logging, sink, "mneme");
  auto api_log = make_logger(cfg.logging, sink, "api");

  // Every thread started from here on inherits the blocked signals; main takes them
  // with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  spdlog::flush_every(std::chrono::seconds{1}); // a thread: started with the signals blocked

  std::unique_ptr<fakellm::fake_llm_server> fake;
  if (wants_builtin(cfg)) {
    fake = std::make_unique<fakellm::fake_llm_server>();
    if (auto port = fake->start(); !port) {
      std::cerr << "mneme serve: fake LLM server: " << render_error(port.error()) << "\n";
      return exit_failure;
    }
    point_builtin_at(cfg, fake->base_url());
  }
  auto rc = runtime_config_of(cfg);
  if (!rc) {
    std::cerr << "mneme serve: " << render_error(rc.error()) << "\n";
    return exit_usage;
  }
  rc->log = log;

  int code = exit_ok;
  {
    auto host = runtime_host::start(std::move(*rc));
    if (!host) {
      std::cerr << "mneme serve: runtime: " << render_error(host.error()) << "\n";
      return exit_failure;
    }
    auto& sys = (*host)->system();
    auto& rt = (*host)->rt();
    api::http_api_options ao;
    ao.auth_token = *token;
    ao.tokens = *tokens;
    ao.max_body_bytes = cfg.gateway.max_body_bytes;
    ao.default_user = cfg.gateway.default_user;
    ao.version = MNEME_VERSION;
    ao.log = api_log;
    api::http_server server{sys, rt, ao, static_cast<size_t>(cfg.gateway.io_threads),
                            front_limits_of(cfg.gateway)};
    auto port = server.start(cfg.gateway.host, static_cast<int>(cfg.gateway.port));
    if (!port) {
      std::cerr << "mneme serve: " << render_error(port.error()) << "\n";
      rt.stop();
      return exit_failure;
    }
    // On PostgreSQL the backend's name, never the URL (it may hold a password).
    const std::string db_shown = cfg.database.backend == store_backend::postgres
                                   ? to_string(cfg.database.backend)
                                   : cfg.database.path;
    std::cout << fmt::format("mneme serve: listening on http://{}:{} (db {})\n",
                             cfg.gateway.host, *port, db_shown)
              << std::flush;
    log->info("event=listening host={} port={} db={}", cfg.gateway.host, *port, db_shown);

    int sig = 0;
    for (sigwait(&signals, &sig); sig == SIGHUP; sigwait(&signals, &sig))
      reload_tokens(cfg.gateway, server.api(), *log);
    log->info("event=shutdown signal={} in_flight={}", sig, server.api().in_flight());
    server.begin_shutdown();
    if (!server.wait_idle(std::chrono::seconds{cfg.gateway.shutdown_drain_seconds})) {
      auto failed = server.fail_pending();
      log->warn("event=shutdown_drain_timeout answered_503={}", failed);
    }
    rt.stop();     // flushes the writer and finishes the index backlog; then the lock goes
    server.join(); // writes the last answers and closes every connection
    log->info("event=stopped");
  }
  if (fake)
    fake->stop();
  std::cout << "mneme serve: stopped\n" << std::flush;
  return code;
}

command_action setup_serve(CLI::App& cmd) {
  auto opt = std::make_shared<serve_options>();
  cmd.add_option("--config", opt->config_file, "YAML configuration (default: embedded defaults)");
  cmd.add_option("--host", opt->host, "listen address (default: gateway.host)");
  cmd.add_option("--port", opt->port, "listen port, 0 = a free one (default: gateway.port)")
    ->check(CLI::Range(0, 65535));
  cmd.add_option("--db", opt->db, "database file (default: database.path)");
  return [opt] { return serve(*opt); };
}

} // namespace

MNEME_COMMAND("serve", "Run the daemon: host sessions behind the HTTP/JSON API", setup_serve);

} // namespace mneme::cli
