// Endpoint resolution and key loading; see llm_endpoint.hpp.
#include "actors/llm/llm_endpoint.hpp"

#include <algorithm>
#include <fstream>

#include "actors/llm/messages_api_wire.hpp"
#include "messages/errc.hpp"

namespace mneme::llm {

namespace {

std::string trimmed(std::string s) {
  constexpr const char* ws = " \t\r\n";
  auto b = s.find_first_not_of(ws);
  if (b == std::string::npos)
    return {};
  auto e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

caf::error bad_config(std::string_view path, std::string reason) {
  return caf::make_error(errc::config_invalid, std::string{path} + ": " + std::move(reason));
}

std::chrono::milliseconds seconds_ms(int64_t s) {
  return std::chrono::milliseconds{s * 1000};
}

} // namespace

std::string chat_completions_url(std::string_view base_url) {
  std::string url{base_url};
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  constexpr std::string_view v1 = "/v1";
  bool has_v1 = url.size() >= v1.size() && url.compare(url.size() - v1.size(), v1.size(), v1) == 0;
  return url + (has_v1 ? "/chat/completions" : "/v1/chat/completions");
}

std::string endpoint_url(std::string_view base_url, llm_api api) {
  return api == llm_api::anthropic ? messages_url(base_url) : chat_completions_url(base_url);
}

caf::expected<std::string> load_api_key(const std::string& inline_key,
                                        const std::string& key_file,
                                        std::string_view config_path) {
  if (key_file.empty())
    return trimmed(inline_key);
  std::ifstream in{key_file};
  if (!in)
    return bad_config(config_path, "cannot read api_key_file " + key_file);
  std::string line;
  std::getline(in, line);
  auto key = trimmed(std::move(line));
  if (key.empty())
    return bad_config(config_path, "api_key_file " + key_file + " is empty");
  return key;
}

caf::expected<llm_pool_config> make_summary_pool_config(const summarizer_params& aux,
                                                        const model_params& model,
                                                        const compression_params& comp) {
  const auto& base = aux.base_url.empty() ? model.base_url : aux.base_url;
  if (base.empty() || base == "builtin")
    return bad_config("auxiliary.compression.base_url",
                      "no HTTP endpoint (\"" + base + "\" must be resolved by the app)");
  if (comp.context_timeout_seconds <= 0)
    return bad_config("compression.context_timeout_seconds", "must be > 0");
  if (comp.context_total_ceiling_seconds <= 0)
    return bad_config("compression.context_total_ceiling_seconds", "must be > 0");
  if (aux.timeout_seconds <= 0)
    return bad_config("auxiliary.compression.timeout", "must be > 0");
  if (aux.max_concurrency <= 0)
    return bad_config("auxiliary.compression.max_concurrency", "must be > 0");
  if (aux.max_queue < 0)
    return bad_config("auxiliary.compression.max_queue", "must be >= 0");
  // The aux block's own key wins; without one, the model block's key is used.
  bool own_key = !aux.api_key.empty() || !aux.api_key_file.empty();
  auto key = own_key ? load_api_key(aux.api_key, aux.api_key_file, "auxiliary.compression")
                     : load_api_key(model.api_key, model.api_key_file, "model");
  if (!key)
    return key.error();
  llm_pool_config cfg;
  cfg.name = "summary";
  cfg.endpoint.api = aux.api.value_or(model.api);
  cfg.endpoint.url = endpoint_url(base, cfg.endpoint.api);
  cfg.endpoint.api_key = std::move(*key);
  cfg.endpoint.model = aux.model.empty() ? model.name : aux.model;
  cfg.endpoint.purpose = llm_purpose::summary;
  cfg.endpoint.total_timeout =
    seconds_ms(std::min(comp.context_total_ceiling_seconds, aux.timeout_seconds));
  cfg.endpoint.idle_timeout =
    std::min(seconds_ms(comp.context_timeout_seconds), cfg.endpoint.total_timeout);
  cfg.max_concurrency = static_cast<size_t>(aux.max_concurrency);
  cfg.max_queue = static_cast<size_t>(aux.max_queue);
  return cfg;
}

caf::expected<llm_pool_config> make_hygiene_pool_config(const summarizer_params& aux,
                                                        const model_params& model,
                                                        const compression_params& comp) {
  if (comp.hygiene_timeout_seconds <= 0)
    return bad_config("compression.hygiene_timeout_seconds", "must be > 0");
  if (comp.hygiene_total_ceiling_seconds <= 0)
    return bad_config("compression.hygiene_total_ceiling_seconds", "must be > 0");
  auto hygiene = comp;
  hygiene.context_timeout_seconds = comp.hygiene_timeout_seconds;
  hygiene.context_total_ceiling_seconds = comp.hygiene_total_ceiling_seconds;
  auto cfg = make_summary_pool_config(aux, model, hygiene);
  if (cfg)
    cfg->name = "hygiene";
  return cfg;
}

caf::expected<llm_pool_config> make_chat_pool_config(const model_params& model,
                                                     const chat_pool_params& chat) {
  if (model.base_url.empty() || model.base_url == "builtin")
    return bad_config("model.base_url",
                      "no HTTP endpoint (\"" + model.base_url + "\" must be resolved by the app)");
  if (chat.timeout_seconds <= 0)
    return bad_config("model.timeout", "must be > 0");
  if (chat.max_concurrency <= 0)
    return bad_config("model.max_concurrency", "must be > 0");
  if (chat.max_queue < 0)
    return bad_config("model.max_queue", "must be >= 0");
  auto key = load_api_key(model.api_key, model.api_key_file, "model");
  if (!key)
    return key.error();
  llm_pool_config cfg;
  cfg.name = "chat";
  cfg.endpoint.api = model.api;
  cfg.endpoint.url = endpoint_url(model.base_url, model.api);
  cfg.endpoint.api_key = std::move(*key);
  cfg.endpoint.model = model.name;
  cfg.endpoint.purpose = llm_purpose::chat;
  cfg.endpoint.total_timeout = seconds_ms(chat.timeout_seconds);
  cfg.endpoint.idle_timeout = cfg.endpoint.total_timeout;
  cfg.max_concurrency = static_cast<size_t>(chat.max_concurrency);
  cfg.max_queue = static_cast<size_t>(chat.max_queue);
  return cfg;
}

} // namespace mneme::llm
