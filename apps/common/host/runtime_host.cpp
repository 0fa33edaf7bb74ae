// app_config -> runtime_config -> a started runtime; see runtime_host.hpp.
#include "apps/common/host/runtime_host.hpp"

#include <cstdlib>

#include "actors/llm/llm_endpoint.hpp"
#include "actors/scheduler_tuning.hpp"
#include "messages/mneme_types.hpp"

namespace mneme {

namespace {

constexpr const char* builtin_url = "builtin";

// Where the embedder calls and with which key: its own base_url, else the model's (and
// then the model's key unless api_key_env names one). The key is read from the
// environment here, once; a named variable that is unset or empty is config_invalid.
caf::expected<embedder_config> embedder_config_of(const app_config& cfg) {
  const auto& e = cfg.embeddings;
  std::string base = e.base_url.empty() ? cfg.model.base_url : e.base_url;
  if (base.empty() || base == builtin_url)
    return caf::make_error(errc::config_invalid,
                           "embeddings.base_url: \"builtin\" must be replaced by the fake "
                           "LLM's URL before the runtime starts");
  std::string key;
  if (!e.api_key_env.empty()) {
    const char* value = std::getenv(e.api_key_env.c_str());
    if (value == nullptr || *value == '\0')
      return caf::make_error(errc::config_invalid,
                             "embeddings.api_key_env: the environment variable "
                               + e.api_key_env + " is not set");
    key = value;
  } else if (e.base_url.empty()) {
    auto model_key = llm::load_api_key(cfg.model.api_key, cfg.model.api_key_file, "model");
    if (!model_key)
      return std::move(model_key.error());
    key = std::move(*model_key);
  }
  return embedder_config{embedding_endpoint_of(e, base, key), e};
}

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
  if (cfg.embeddings.enabled) {
    auto embed = embedder_config_of(cfg);
    if (!embed)
      return std::move(embed.error());
    rc.embeddings = std::move(*embed);
  }
  return rc;
}

void point_builtin_at(app_config& cfg, const std::string& url) {
  if (cfg.model.base_url == builtin_url)
    cfg.model.base_url = url;
  if (cfg.summarizer.base_url == builtin_url)
    cfg.summarizer.base_url = url;
  if (cfg.embeddings.base_url == builtin_url)
    cfg.embeddings.base_url = url;
}

bool wants_builtin(const app_config& cfg) {
  return cfg.model.base_url == builtin_url || cfg.summarizer.base_url == builtin_url
         || (cfg.embeddings.enabled && cfg.embeddings.base_url == builtin_url);
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
