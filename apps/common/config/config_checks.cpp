// Cross-key configuration checks; see config_checks.hpp.
#include "apps/common/config/config_checks.hpp"

#include <cctype>

#include <algorithm>
#include <initializer_list>

#include <fmt/format.h>

namespace mneme {

namespace {

class checker {
public:
  explicit checker(const std::set<std::string>& rejected) : rejected_(rejected) {}

  // Records `reason` under `path` when `bad` holds and none of `reads` was rejected.
  void require_not(bool bad, std::initializer_list<const char*> reads, std::string path,
                   std::string reason) {
    for (auto key : reads)
      if (rejected_.count(key) != 0)
        return;
    if (bad)
      errors_.push_back(config_error{std::move(path), std::move(reason), 0, 0});
  }

  std::vector<config_error> take() { return std::move(errors_); }

private:
  const std::set<std::string>& rejected_;
  std::vector<config_error> errors_;
};

} // namespace

namespace {

bool is_node_name(const std::string& s) {
  if (s.empty() || s.size() > 64)
    return false;
  for (unsigned char ch : s)
    if (!std::isalnum(ch) && ch != '.' && ch != '_' && ch != '-')
      return false;
  return true;
}

} // namespace

std::vector<config_error> check_config_consistency(const app_config& cfg,
                                                   const std::set<std::string>& rejected) {
  checker c{rejected};
  const auto& m = cfg.model;
  const auto& z = cfg.compression;

  auto effective = m.context_length - m.max_tokens;
  c.require_not(effective <= 0, {"model.context_length", "model.max_tokens"}, "model.max_tokens",
                fmt::format("{} is not below model.context_length ({})", m.max_tokens,
                            m.context_length));
  c.require_not(effective > 0 && effective < min_effective_window_tokens,
                {"model.context_length", "model.max_tokens"}, "model.max_tokens",
                fmt::format("{} leaves {} tokens of the {}-token window; at least {} are needed",
                            m.max_tokens, effective, m.context_length,
                            min_effective_window_tokens));

  // Head (system prompt + protect_first_n) + summary + tail must fit under the cap, or
  // the hygiene cap (T3) would fire again after every compaction.
  auto kept = int64_t{z.protect_first_n} + z.protect_last_n + 2;
  c.require_not(z.hygiene_hard_message_limit <= kept,
                {"compression.hygiene_hard_message_limit", "compression.protect_first_n",
                 "compression.protect_last_n"},
                "compression.hygiene_hard_message_limit",
                fmt::format("{} must exceed protect_first_n + protect_last_n + 2 = {} (the "
                            "messages a compaction keeps), or compaction could never get "
                            "under it",
                            z.hygiene_hard_message_limit, kept));

  c.require_not(z.hygiene_total_ceiling_seconds < z.hygiene_timeout_seconds,
                {"compression.hygiene_total_ceiling_seconds",
                 "compression.hygiene_timeout_seconds"},
                "compression.hygiene_total_ceiling_seconds",
                fmt::format("{} is below hygiene_timeout_seconds ({})",
                            z.hygiene_total_ceiling_seconds, z.hygiene_timeout_seconds));
  const auto& e = cfg.embeddings;
  c.require_not(e.total_ceiling_seconds < e.timeout_seconds,
                {"embeddings.total_ceiling_seconds", "embeddings.timeout_seconds"},
                "embeddings.total_ceiling_seconds",
                fmt::format("{} is below embeddings.timeout_seconds ({})",
                            e.total_ceiling_seconds, e.timeout_seconds));
  c.require_not(e.backoff_max_ms < e.backoff_initial_ms,
                {"embeddings.backoff_max_ms", "embeddings.backoff_initial_ms"},
                "embeddings.backoff_max_ms",
                fmt::format("{} is below embeddings.backoff_initial_ms ({})", e.backoff_max_ms,
                            e.backoff_initial_ms));
  c.require_not(z.context_total_ceiling_seconds < z.context_timeout_seconds,
                {"compression.context_total_ceiling_seconds",
                 "compression.context_timeout_seconds"},
                "compression.context_total_ceiling_seconds",
                fmt::format("{} is below context_timeout_seconds ({})",
                            z.context_total_ceiling_seconds, z.context_timeout_seconds));

  // The gateway's request timeout must outlast the LLM calls so that their precise
  // error reaches the caller instead of a generic timeout.
  auto llm_timeout = std::max(cfg.chat.timeout_seconds, cfg.summarizer.timeout_seconds);
  c.require_not(cfg.gateway.request_timeout_seconds <= llm_timeout,
                {"gateway.request_timeout_seconds", "model.timeout",
                 "auxiliary.compression.timeout"},
                "gateway.request_timeout_seconds",
                fmt::format("{} must exceed model.timeout and auxiliary.compression.timeout "
                            "(largest: {})",
                            cfg.gateway.request_timeout_seconds, llm_timeout));

  auto both = [&](const std::string& inline_value, const std::string& file,
                  const char* inline_key, const char* file_key, std::string path) {
    c.require_not(!inline_value.empty() && !file.empty(), {inline_key, file_key},
                  std::move(path),
                  fmt::format("is set together with {}; keep one of them", inline_key));
  };
  both(m.api_key, m.api_key_file, "model.api_key", "model.api_key_file",
       "model.api_key_file");
  both(cfg.summarizer.api_key, cfg.summarizer.api_key_file, "auxiliary.compression.api_key",
       "auxiliary.compression.api_key_file", "auxiliary.compression.api_key_file");
  both(cfg.gateway.auth_token, cfg.gateway.auth_token_file, "gateway.auth_token",
       "gateway.auth_token_file", "gateway.auth_token_file");

  // An Anthropic upstream speaks the Messages API only: no Responses backend, no
  // OpenAI server-side compaction.
  bool anthropic = m.api == llm_api::anthropic;
  c.require_not(anthropic && m.backend != backend_kind::chat_completions,
                {"model.api", "model.backend"}, "model.api",
                "is anthropic, which needs model.backend: chat_completions (the Responses "
                "and codex app-server backends speak OpenAI's protocols)");
  c.require_not(anthropic && z.codex_responses_native,
                {"model.api", "compression.codex_responses_native"}, "model.api",
                "is anthropic, but compression.codex_responses_native is true (OpenAI's "
                "server-side compaction); set it to false");

  // The PostgreSQL connection (store/pg). The URL carries a password: errors never
  // repeat it.
  const auto& db = cfg.database;
  both(db.url, db.url_file, "database.url", "database.url_file", "database.url_file");
  bool postgres = db.backend == store_backend::postgres;
  c.require_not(postgres && db.url.empty() && db.url_file.empty(),
                {"database.backend", "database.url", "database.url_file"}, "database.backend",
                "postgres needs database.url (postgresql://...) or database.url_file");
  c.require_not(!postgres && (!db.url.empty() || !db.url_file.empty()),
                {"database.backend", "database.url", "database.url_file"}, "database.backend",
                fmt::format("is {}, but database.url or database.url_file is set (they are "
                            "for backend postgres)", to_string(db.backend)));
  auto scheme_ok = [](const std::string& url) {
    return url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0;
  };
  c.require_not(!db.url.empty() && !scheme_ok(db.url), {"database.url"}, "database.url",
                "must start with postgresql:// (or postgres://)");

  // Several nodes (docs/scale-out.md): leases live in PostgreSQL, and the other nodes
  // must know where to forward.
  const auto& gw = cfg.gateway;
  bool node = !gw.node_id.empty();
  c.require_not(node && !postgres, {"gateway.node_id", "database.backend"}, "gateway.node_id",
                "needs database.backend: postgres (the nodes share its leases)");
  c.require_not(node && gw.advertise_url.empty(), {"gateway.node_id", "gateway.advertise_url"},
                "gateway.advertise_url",
                "is required with gateway.node_id: the URL other nodes forward this node's "
                "keys to (http://host:port)");
  c.require_not(!gw.advertise_url.empty() && gw.advertise_url.rfind("http://", 0) != 0,
                {"gateway.advertise_url"}, "gateway.advertise_url",
                "must start with http:// (host:port of this node's API, as other nodes reach it)");
  c.require_not(!gw.advertise_url.empty() && !node, {"gateway.node_id", "gateway.advertise_url"},
                "gateway.advertise_url", "is set but gateway.node_id is not (node mode is off)");
  c.require_not(node && !is_node_name(gw.node_id), {"gateway.node_id"}, "gateway.node_id",
                "must be 1-64 characters of letters, digits, '.', '_' or '-'");

  return c.take();
}

} // namespace mneme
