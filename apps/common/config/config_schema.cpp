// The table of configuration keys and their accepted ranges; see config_schema.hpp.
// Every range here is repeated in the comment of the key in configs/mneme.yaml.
#include "apps/common/config/config_schema.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "apps/common/config/config_field_builders.hpp"

namespace mneme {

namespace {

using namespace config_build;

constexpr int64_t thirty_days_s = 30LL * 24 * 3600;
constexpr int64_t one_day_s = 24 * 3600;
constexpr int64_t one_hour_s = 3600;
constexpr int64_t billion = 1000000000;

const number_range threshold_ratio{0.05, 0.95};

std::vector<config_field> compression_fields() {
  auto s = &app_config::compression;
  using c = compression_params;
  return {
    boolean("compression.enabled", s, &c::enabled),
    number("compression.threshold", s, &c::threshold, threshold_ratio),
    integer("compression.threshold_tokens", s, &c::threshold_tokens, {1000, billion, true}),
    number("compression.target_ratio", s, &c::target_ratio, {0.05, 0.80}),
    number("compression.min_retention", s, &c::min_retention, {0.0, 1.0}),
    integer("compression.protect_first_n", s, &c::protect_first_n, {0, 10000}),
    integer("compression.protect_last_n", s, &c::protect_last_n, {1, 10000}),
    integer("compression.min_tail_user_messages", s, &c::min_tail_user_messages, {0, 1000}),
    choice("compression.tail_mode", s, &c::tail_mode,
           {{"count", tail_mode::count}, {"tokens", tail_mode::tokens}}),
    integer("compression.max_attempts", s, &c::max_attempts, {1, 100}),
    boolean("compression.in_place", s, &c::in_place),
    boolean("compression.abort_on_summary_failure", s, &c::abort_on_summary_failure),
    ratio_map("compression.model_thresholds", s, &c::model_thresholds, threshold_ratio),
    integer("compression.summary_failure_cooldown_seconds", s,
            &c::summary_failure_cooldown_seconds, {0, thirty_days_s}),
    number("compression.anti_thrash_min_savings", s, &c::anti_thrash_min_savings, {0.0, 0.90}),
    integer("compression.anti_thrash_lock_seconds", s, &c::anti_thrash_lock_seconds,
            {0, thirty_days_s}),
    integer("compression.proactive_prune_tokens", s, &c::proactive_prune_tokens, {0, billion}),
    integer("compression.proactive_prune_min_result_chars", s,
            &c::proactive_prune_min_result_chars, {256, billion}),
    integer("compression.proactive_prune_min_reclaim_tokens", s,
            &c::proactive_prune_min_reclaim_tokens, {0, billion}),
    integer("compression.tool_output_eviction_chars", s, &c::tool_output_eviction_chars,
            {256, billion, true}),
    number("compression.max_row_share", s, &c::max_row_share, {0.05, 1.0}),
    boolean("compression.micro_compact", s, &c::micro_compact),
    integer("compression.micro_compact_every_n_turns", s, &c::micro_compact_every_n_turns,
            {1, 10000}),
    integer("compression.micro_compact_defrag_threshold_tokens", s,
            &c::micro_compact_defrag_threshold_tokens, {100, 1000000}),
    integer("compression.idle_compact_after_seconds", s, &c::idle_compact_after_seconds,
            {0, thirty_days_s}),
    integer("compression.hygiene_hard_message_limit", s, &c::hygiene_hard_message_limit,
            {10, 10000000}),
    integer("compression.hygiene_timeout_seconds", s, &c::hygiene_timeout_seconds,
            {1, one_hour_s}),
    integer("compression.hygiene_total_ceiling_seconds", s, &c::hygiene_total_ceiling_seconds,
            {1, one_day_s}),
    integer("compression.hygiene_failure_cooldown_seconds", s,
            &c::hygiene_failure_cooldown_seconds, {0, thirty_days_s}),
    integer("compression.context_timeout_seconds", s, &c::context_timeout_seconds,
            {1, one_hour_s}),
    integer("compression.context_total_ceiling_seconds", s, &c::context_total_ceiling_seconds,
            {1, one_day_s}),
    choice("compression.codex_app_server_auto", s, &c::codex_app_server_auto,
           {{"native", codex_mode::native},
            {"managed", codex_mode::managed},
            {"off", codex_mode::off}}),
    boolean("compression.codex_responses_native", s, &c::codex_responses_native),
    integer("compression.codex_responses_compact_threshold", s,
            &c::codex_responses_compact_threshold, {0, billion}),
    string_list("compression.reasoning_model_patterns", s, &c::reasoning_model_patterns),
  };
}

// auxiliary.compression.api: "" (unset) means the model block's api.
config_field summarizer_api_field() {
  auto words = one_of({"openai", "anthropic"});
  string_check check{[words](const std::string& v) {
                       auto why = v.empty() ? std::string{} : words.check(v);
                       return why.empty() ? why : why + " (or \"\" for model.api)";
                     },
                     "openai, anthropic or \"\" (model.api)"};
  config_field f{"auxiliary.compression.api", check.accepts, {}, {}};
  f.read = [check](const YAML::Node& n, const field_context&, app_config& cfg) {
    std::string word;
    auto problems = read_string(n, check, word);
    if (problems.empty())
      cfg.summarizer.api = word.empty()       ? std::nullopt
                           : word == "openai" ? std::optional{llm_api::openai}
                                              : std::optional{llm_api::anthropic};
    return problems;
  };
  f.render = [](const app_config& cfg) {
    const auto& api = cfg.summarizer.api;
    return std::string{!api ? "\"\"" : *api == llm_api::anthropic ? "anthropic" : "openai"};
  };
  return f;
}

std::vector<config_field> summarizer_fields() {
  auto s = &app_config::summarizer;
  using p = summarizer_params;
  return {
    text("auxiliary.compression.base_url", s, &p::base_url, http_url_or("")),
    text("auxiliary.compression.model", s, &p::model),
    secret("auxiliary.compression.api_key", s, &p::api_key),
    existing_file("auxiliary.compression.api_key_file", s, &p::api_key_file),
    summarizer_api_field(),
    integer("auxiliary.compression.timeout", s, &p::timeout_seconds, {1, one_hour_s}),
    integer("auxiliary.compression.max_concurrency", s, &p::max_concurrency, {1, 1024}),
    integer("auxiliary.compression.max_queue", s, &p::max_queue, {0, 1000000}),
  };
}

std::vector<config_field> model_fields() {
  auto m = &app_config::model;
  auto chat = &app_config::chat;
  return {
    text("model.name", m, &model_params::name, non_empty()),
    integer("model.context_length", m, &model_params::context_length, {4096, billion}),
    integer("model.max_tokens", m, &model_params::max_tokens, {0, billion}),
    text("model.base_url", m, &model_params::base_url, http_url_or("builtin")),
    choice("model.backend", m, &model_params::backend,
           {{"chat_completions", backend_kind::chat_completions},
            {"responses", backend_kind::responses},
            {"codex_app_server", backend_kind::codex_app_server}}),
    choice("model.api", m, &model_params::api,
           {{"openai", llm_api::openai}, {"anthropic", llm_api::anthropic}}),
    secret("model.api_key", m, &model_params::api_key),
    existing_file("model.api_key_file", m, &model_params::api_key_file),
    integer("model.max_concurrency", chat, &chat_pool_params::max_concurrency, {1, 4096}),
    integer("model.max_queue", chat, &chat_pool_params::max_queue, {0, 10000000}),
    integer("model.timeout", chat, &chat_pool_params::timeout_seconds, {1, one_hour_s}),
  };
}

// database.backend: one of the store_backend names, shown quoted as a string.
config_field database_backend_field() {
  auto d = &app_config::database;
  auto f = choice("database.backend", d, &store_params::backend,
                  {{to_string(store_backend::sqlite), store_backend::sqlite},
                   {to_string(store_backend::postgres), store_backend::postgres}});
  f.render = [d](const app_config& cfg) { return yaml_quote(to_string((cfg.*d).backend)); };
  return f;
}

std::vector<config_field> database_fields() {
  auto d = &app_config::database;
  using p = store_params;
  return {
    database_backend_field(),
    secret("database.url", d, &p::url),
    existing_file("database.url_file", d, &p::url_file),
    text("database.path", d, &p::path, non_empty()),
    integer("database.busy_timeout_ms", d, &p::busy_timeout_ms, {0, 600000}),
    integer("database.max_batch", d, &p::max_batch, {1, 100000}),
    boolean("database.synchronous_full", d, &p::synchronous_full),
    integer("database.readers", d, &p::readers, {1, 64}),
    text("database.cold_storage_dir", d, &p::cold_storage_dir, non_empty()),
    integer("database.index_free_space_reserve_bytes", d, &p::index_free_space_reserve_bytes,
            {0, 1LL << 40}),
  };
}

std::vector<config_field> gateway_fields() {
  auto g = &app_config::gateway;
  using p = gateway_params;
  return {
    text("gateway.host", g, &p::host, non_empty()),
    integer("gateway.port", g, &p::port, {1, 65535}),
    secret("gateway.auth_token", g, &p::auth_token),
    existing_file("gateway.auth_token_file", g, &p::auth_token_file),
    existing_file("gateway.tokens_file", g, &p::tokens_file),
    boolean("gateway.allow_unauthenticated", g, &p::allow_unauthenticated),
    integer("gateway.max_body_bytes", g, &p::max_body_bytes, {1024, 1LL << 30}),
    integer("gateway.idle_evict_seconds", g, &p::idle_evict_seconds, {1, thirty_days_s}),
    integer("gateway.request_timeout_seconds", g, &p::request_timeout_seconds, {1, one_day_s}),
    text("gateway.default_user", g, &p::default_user, non_empty()),
    text("gateway.system_prompt", g, &p::system_prompt),
    text("gateway.skills_dir", g, &p::skills_dir),
    integer("gateway.max_tool_rounds", g, &p::max_tool_rounds, {1, 10000}),
    integer("gateway.max_tool_calls_per_message", g, &p::max_tool_calls_per_message,
            {1, 10000}),
    string_list("gateway.builtin_tools", g, &p::builtin_tools),
    integer("gateway.builtin_result_max_bytes", g, &p::builtin_result_max_bytes,
            {1024, 1LL << 24}),
    boolean("gateway.replay_after_reset", g, &p::replay_after_reset),
    integer("gateway.io_threads", g, &p::io_threads, {1, 64}),
    integer("gateway.max_connections", g, &p::max_connections, {1, 1000000}),
    integer("gateway.max_connections_per_address", g, &p::max_connections_per_address,
            {1, 1000000}),
    integer("gateway.reserved_connections", g, &p::reserved_connections, {0, 10000}),
    integer("gateway.header_timeout_seconds", g, &p::header_timeout_seconds, {1, 3600}),
    integer("gateway.body_timeout_seconds", g, &p::body_timeout_seconds, {1, 3600}),
    integer("gateway.body_min_bytes_per_second", g, &p::body_min_bytes_per_second,
            {1024, 1LL << 30}),
    integer("gateway.keep_alive_seconds", g, &p::keep_alive_seconds, {1, 86400}),
    integer("gateway.stream_buffer_bytes", g, &p::stream_buffer_bytes, {4096, 1LL << 30}),
    integer("gateway.shutdown_drain_seconds", g, &p::shutdown_drain_seconds, {0, 3600}),
    integer("gateway.idempotency_window_seconds", g, &p::idempotency_window_seconds,
            {1, 2592000}),
    text("gateway.node_id", g, &p::node_id),
    text("gateway.advertise_url", g, &p::advertise_url),
    integer("gateway.lease_seconds", g, &p::lease_seconds, {1, 3600}),
  };
}

// embeddings.api_key_env: the name of an environment variable, never its value.
string_check env_var_name() {
  return {[](const std::string& v) {
            if (v.empty())
              return std::string{};
            bool ok = v.size() <= 128 && !(v[0] >= '0' && v[0] <= '9');
            for (unsigned char c : v)
              ok = ok && (std::isalnum(c) || c == '_');
            return ok ? std::string{}
                      : "\"" + v + "\" is not an environment variable name (letters, digits, "
                        "'_', not starting with a digit)";
          },
          "the name of an environment variable, or \"\""};
}

// embeddings.base_url: a URL, "builtin", or "" (the model block's base_url).
string_check url_builtin_or_unset() {
  auto url = http_url_or("builtin");
  return {[url](const std::string& v) {
            auto why = v.empty() ? std::string{} : url.check(v);
            return why.empty() ? why : why + " (or \"\" for model.base_url)";
          },
          url.accepts + " or \"\" (model.base_url)"};
}

std::vector<config_field> embedding_fields() {
  auto e = &app_config::embeddings;
  using p = embedding_params;
  return {
    boolean("embeddings.enabled", e, &p::enabled),
    text("embeddings.base_url", e, &p::base_url, url_builtin_or_unset()),
    text("embeddings.model", e, &p::model, non_empty()),
    integer("embeddings.dimensions", e, &p::dimensions, {1, 4096}),
    boolean("embeddings.send_dimensions", e, &p::send_dimensions),
    integer("embeddings.batch_size", e, &p::batch_size, {1, 2048}),
    integer("embeddings.timeout_seconds", e, &p::timeout_seconds, {1, one_hour_s}),
    integer("embeddings.total_ceiling_seconds", e, &p::total_ceiling_seconds, {1, one_hour_s}),
    integer("embeddings.query_timeout_ms", e, &p::query_timeout_ms, {50, 60000}),
    text("embeddings.api_key_env", e, &p::api_key_env, env_var_name()),
    integer("embeddings.max_input_chars", e, &p::max_input_chars, {16, 1000000}),
    integer("embeddings.backoff_initial_ms", e, &p::backoff_initial_ms, {10, 3600000}),
    integer("embeddings.backoff_max_ms", e, &p::backoff_max_ms, {10, one_day_s * 1000}),
    integer("embeddings.idle_poll_ms", e, &p::idle_poll_ms, {10, 3600000}),
  };
}

std::vector<config_field> logging_fields() {
  auto l = &app_config::logging;
  return {
    text("logging.level", l, &logging_params::level,
         one_of({"trace", "debug", "info", "warn", "error", "critical", "off"})),
    text("logging.file", l, &logging_params::file),
  };
}

std::vector<config_field> build_table() {
  std::vector<config_field> all;
  for (auto part : {compression_fields(), summarizer_fields(), model_fields(),
                    database_fields(), gateway_fields(), logging_fields(),
                    embedding_fields()})
    for (auto& f : part)
      all.push_back(std::move(f));
  return all;
}

std::set<std::string, std::less<>> build_sections() {
  std::set<std::string, std::less<>> sections;
  for (auto& f : config_fields())
    for (auto dot = f.path.find('.'); dot != std::string::npos;
         dot = f.path.find('.', dot + 1))
      sections.insert(f.path.substr(0, dot));
  return sections;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string_view parent_of(std::string_view path) {
  auto dot = path.rfind('.');
  return dot == std::string_view::npos ? std::string_view{} : path.substr(0, dot);
}

} // namespace

const std::vector<config_field>& config_fields() {
  static const std::vector<config_field> table = build_table();
  return table;
}

const config_field* find_config_field(std::string_view path) {
  for (auto& f : config_fields())
    if (f.path == path)
      return &f;
  return nullptr;
}

bool is_config_section(std::string_view path) {
  static const auto sections = build_sections();
  return sections.find(path) != sections.end();
}

std::string closest_config_key(std::string_view path) {
  constexpr size_t max_typos = 2;
  auto parent = parent_of(path);
  std::string best;
  size_t best_distance = max_typos + 1;
  auto consider = [&](std::string_view candidate) {
    if (parent_of(candidate) != parent)
      return;
    auto d = edit_distance(path, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = std::string{candidate.substr(parent.empty() ? 0 : parent.size() + 1)};
    }
  };
  for (auto& f : config_fields()) {
    consider(f.path);
    for (auto p = parent_of(f.path); !p.empty(); p = parent_of(p))
      consider(p);
  }
  return best;
}

} // namespace mneme
