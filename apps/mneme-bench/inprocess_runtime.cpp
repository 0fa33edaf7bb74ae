// The in-process runtime of the HTTP benchmarks; see inprocess_runtime.hpp.
#include "apps/mneme-bench/inprocess_runtime.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <thread>
#include <iostream>

#include "actors/llm/llm_endpoint.hpp"
#include "actors/scheduler_tuning.hpp"
#include "apps/mneme-bench/bench_registry.hpp"
#include "messages/errc.hpp"
#include "messages/mneme_types.hpp"

namespace mneme::bench {

caf::expected<runtime_config> bench_runtime_config(int64_t concurrency, const std::string& llm_url,
                                                   const std::string& db_path) {
  runtime_config rc;
  rc.compression.threshold = 0.9;
  rc.model.base_url = llm_url;
  chat_pool_params cp;
  cp.max_concurrency = std::max<int64_t>(cp.max_concurrency, concurrency);
  cp.max_queue = std::max<int64_t>(cp.max_queue, concurrency);
  summarizer_params sp;
  sp.base_url = llm_url;
  auto chat = llm::make_chat_pool_config(rc.model, cp);
  if (!chat)
    return chat.error();
  auto summary = llm::make_summary_pool_config(sp, rc.model, rc.compression);
  if (!summary)
    return summary.error();
  rc.chat = *chat;
  rc.summarizer = *summary;
  rc.database.path = db_path;
  rc.database.synchronous_full = false;
  return rc;
}

void raise_file_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
}

void add_rig_flags(CLI::App& cmd, rig_flags& f) {
  cmd.add_option("--llm-delay-ms", f.llm_delay_ms, "the fake LLM's delay per chat call")
    ->check(integer_range(0, 60000))->capture_default_str();
  cmd.add_option("--io-threads", f.io_threads, "the HTTP server's I/O threads")
    ->check(integer_range(1, 64))->capture_default_str();
  cmd.add_option("--max-seconds", f.max_seconds, "deadline of each pass")
    ->check(integer_range(1, 86400))->capture_default_str();
  cmd.add_flag("--json", f.json_out, "one JSON object on stdout");
}

std::unique_ptr<inprocess_daemon> start_door_rig(const std::string& name, int64_t concurrency,
                                                 const rig_flags& rig) {
  raise_file_limit();
  inprocess_daemon::settings s;
  s.name = name;
  s.scenario = chat_delay_scenario(rig.llm_delay_ms);
  s.concurrency = concurrency;
  s.io_threads = rig.io_threads;
  s.adjust = [](runtime_config& rc) { rc.model.name = "fake-chat"; };
  auto daemon = inprocess_daemon::start(s);
  if (!daemon) {
    std::cerr << render_error(daemon.error()) << "\n";
    return nullptr;
  }
  return std::move(*daemon);
}

void wait_until_indexed(const inprocess_daemon& d) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds{300};
  while (d.unindexed_rows() > 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
}

fakellm::scenario chat_delay_scenario(int delay_ms) {
  fakellm::scenario sc;
  if (delay_ms > 0) {
    fakellm::fault_rule latency;
    latency.kind = fakellm::fault_kind::latency;
    latency.purpose = fakellm::purpose_filter::chat;
    latency.latency_ms = delay_ms;
    sc.plan.rules.push_back(latency);
  }
  return sc;
}

caf::expected<std::unique_ptr<inprocess_daemon>>
inprocess_daemon::start(const settings& s) {
  std::unique_ptr<inprocess_daemon> d{new inprocess_daemon};
  if (auto port = d->fake_.start(); !port)
    return port.error();
  if (auto err = d->fake_.set_scenario(s.scenario))
    return err;
  std::string tmpl = "/tmp/mneme-bench-" + s.name + "-XXXXXX";
  if (!::mkdtemp(tmpl.data()))
    return caf::make_error(errc::internal, "cannot create a directory under /tmp");
  d->dir_ = tmpl;
  auto rc = bench_runtime_config(s.concurrency, d->fake_.base_url(), d->dir_ + "/bench.db");
  if (!rc)
    return rc.error();
  if (s.adjust)
    s.adjust(*rc);
  d->cfg_ = std::make_unique<caf::actor_system_config>();
  register_mneme_types(*d->cfg_);
  if (!s.caf_default_polling)
    tune_scheduler(*d->cfg_);
  d->cfg_->set("logger.verbosity", caf::atom("quiet"));
  d->sys_ = std::make_unique<caf::actor_system>(*d->cfg_);
  auto started = runtime::start(*d->sys_, *rc);
  if (!started)
    return started.error();
  d->rt_ = std::move(*started);
  api::http_api_options ao;
  ao.version = MNEME_VERSION;
  d->server_ = std::make_unique<api::http_server>(*d->sys_, *d->rt_, ao,
                                                  static_cast<size_t>(s.io_threads));
  auto port = d->server_->start("127.0.0.1", 0);
  if (!port)
    return port.error();
  d->port_ = static_cast<uint16_t>(*port);
  return d;
}

std::string inprocess_daemon::llm_url() const {
  return llm::chat_completions_url(fake_.base_url());
}

int64_t inprocess_daemon::unindexed_rows() const {
  return rt_ ? rt_->metrics()->storage->unindexed_rows.load() : 0;
}

void inprocess_daemon::shut_down(std::chrono::milliseconds grace) {
  if (down_)
    return;
  down_ = true;
  bool serving = server_ && port_ != 0;
  if (serving) {
    server_->begin_shutdown();
    if (!server_->wait_idle(grace))
      server_->fail_pending();
  }
  if (rt_)
    rt_->stop();
  if (serving)
    server_->join();
}

inprocess_daemon::~inprocess_daemon() {
  shut_down(std::chrono::milliseconds{0});
  server_.reset();
  rt_.reset();
  sys_.reset();
  cfg_.reset();
  fake_.stop();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

} // namespace mneme::bench
