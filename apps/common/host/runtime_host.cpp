// app_config -> runtime_config -> a started runtime; see runtime_host.hpp.
#include "apps/common/host/runtime_host.hpp"

#include "actors/llm/llm_endpoint.hpp"
#include "actors/scheduler_tuning.hpp"
#include "messages/mneme_types.hpp"

namespace mneme {

namespace {

constexpr const char* builtin_url = "builtin";

} // namespace

caf::expected<runtime_config> runtime_config_of(const app_config& cfg) {
  auto chat = llm::make_chat_pool_config(cfg.model, cfg.chat);
  if (!chat)
    return std::move(chat.error());
  auto summary = llm::make_summary_pool_config(cfg.summarizer, cfg.model, cfg.compression);
  if (!summary)
    return std::move(summary.error());
  auto hygiene = llm::make_hygiene_pool_config(cfg.summarizer, cfg.model, cfg.compression);
  if (!hygiene)
    return std::move(hygiene.error());
  runtime_config rc;
  rc.compression = cfg.compression;
  rc.model = cfg.model;
  rc.chat = std::move(*chat);
  rc.summarizer = std::move(*summary);
  rc.hygiene = std::move(*hygiene);
  rc.database = cfg.database;
  rc.gateway = cfg.gateway;
  return rc;
}

void point_builtin_at(app_config& cfg, const std::string& url) {
  if (cfg.model.base_url == builtin_url)
    cfg.model.base_url = url;
  if (cfg.summarizer.base_url == builtin_url)
    cfg.summarizer.base_url = url;
}

bool wants_builtin(const app_config& cfg) {
  return cfg.model.base_url == builtin_url || cfg.summarizer.base_url == builtin_url;
}

caf::expected<std::unique_ptr<runtime_host>> runtime_host::start(runtime_config rc) {
  std::unique_ptr<runtime_host> host{new runtime_host()};
  host->sys_cfg_ = std::make_unique<caf::actor_system_config>();
  register_mneme_types(*host->sys_cfg_);
  tune_scheduler(*host->sys_cfg_);
  host->sys_cfg_->set("logger.verbosity", caf::atom("quiet"));
  host->sys_ = std::make_unique<caf::actor_system>(*host->sys_cfg_);
  auto started = runtime::start(*host->sys_, std::move(rc));
  if (!started)
    return std::move(started.error());
  host->rt_ = std::move(*started);
  return host;
}

void runtime_host::stop() {
  if (rt_)
    rt_->stop();
}

runtime_host::~runtime_host() {
  stop();
  rt_.reset();
  sys_.reset(); // joins CAF's threads
}

} // namespace mneme
