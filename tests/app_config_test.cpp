// Tests of the configuration loader (apps/common/config/app_config), the shipped default file
// configs/mneme.yaml, the effective-configuration writer and `mneme config check`.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "apps/common/config/app_config.hpp"
#include "apps/common/config/config_schema.hpp"
#include "tests/child_program.hpp"

BOOST_AUTO_TEST_SUITE(app_config_test)

using namespace mneme;
namespace bdata = boost::unit_test::data;
namespace fs = std::filesystem;
namespace tt = boost::test_tools;

namespace {

const std::string source_dir = MNEME_SOURCE_DIR;
const std::string shipped_config = source_dir + "/configs/mneme.yaml";
const std::string fixtures = source_dir + "/tests/data/config/";

// A default-constructed configuration (a named object: GCC 12 fails on some
// `app_config{}` temporaries inside Boost.Test macros).
const app_config& default_config() {
  static const app_config defaults;
  return defaults;
}

std::string read_text(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string> error_lines(const config_result& r) {
  std::vector<std::string> lines;
  for (auto& e : r.errors)
    lines.push_back(to_string(e));
  return lines;
}

bool has_error(const config_result& r, const std::string& line) {
  for (auto& e : r.errors)
    if (to_string(e) == line)
      return true;
  return false;
}

// YAML that sets the dotted `path` to `value`, e.g. "a.b: 1" -> "a:\n  b: 1\n".
std::string setting(const std::string& path, const std::string& value) {
  std::string out, part;
  std::istringstream in{path};
  std::vector<std::string> parts;
  while (std::getline(in, part, '.'))
    parts.push_back(part);
  for (size_t i = 0; i < parts.size(); ++i)
    out += std::string(2 * i, ' ') + parts[i] + ":" + (i + 1 < parts.size() ? "\n" : "");
  return out + " " + value + "\n";
}

// Every leaf key path in a YAML document, stopping at the loader's fields (so the
// entries of model_thresholds are not counted as keys).
void collect_paths(const YAML::Node& map, const std::string& prefix,
                   std::vector<std::string>& out) {
  for (const auto& entry : map) {
    auto path = prefix.empty() ? entry.first.Scalar() : prefix + "." + entry.first.Scalar();
    if (is_config_section(path) && entry.second.IsMap())
      collect_paths(entry.second, path, out);
    else
      out.push_back(path);
  }
}

// The trailing `# comment` of each key line of a block-style YAML file, by dotted path.
std::map<std::string, std::string> comments_by_path(const std::string& text) {
  std::map<std::string, std::string> out;
  std::vector<std::pair<size_t, std::string>> open;  // (indent, section name)
  std::istringstream in{text};
  std::string line;
  while (std::getline(in, line)) {
    auto indent = line.find_first_not_of(' ');
    if (indent == std::string::npos || line[indent] == '#')
      continue;
    auto colon = line.find(':', indent);
    auto key = line.substr(indent, colon - indent);
    while (!open.empty() && open.back().first >= indent)
      open.pop_back();
    std::string path;
    for (auto& [i, name] : open)
      path += name + ".";
    path += key;
    auto hash = line.find(" # ", colon);
    auto value_end = hash == std::string::npos ? line.size() : hash;
    auto value = line.substr(colon + 1, value_end - colon - 1);
    if (value.find_first_not_of(' ') == std::string::npos)
      open.emplace_back(indent, key);
    if (hash != std::string::npos)
      out[path] = line.substr(hash + 3);
  }
  return out;
}

// Field-by-field equality of two configurations, naming the first field that differs.
void expect_same_config(const app_config& a, const app_config& b) {
#define SAME(field) BOOST_CHECK_MESSAGE(a.field == b.field, "differs: " #field)
  SAME(compression.enabled);
  SAME(compression.threshold);
  SAME(compression.threshold_tokens);
  SAME(compression.target_ratio);
  SAME(compression.min_retention);
  SAME(compression.protect_first_n);
  SAME(compression.protect_last_n);
  SAME(compression.min_tail_user_messages);
  SAME(compression.tail_mode);
  SAME(compression.max_attempts);
  SAME(compression.in_place);
  SAME(compression.abort_on_summary_failure);
  SAME(compression.model_thresholds);
  SAME(compression.summary_failure_cooldown_seconds);
  SAME(compression.anti_thrash_min_savings);
  SAME(compression.anti_thrash_lock_seconds);
  SAME(compression.proactive_prune_tokens);
  SAME(compression.proactive_prune_min_result_chars);
  SAME(compression.proactive_prune_min_reclaim_tokens);
  SAME(compression.tool_output_eviction_chars);
  SAME(compression.micro_compact);
  SAME(compression.micro_compact_every_n_turns);
  SAME(compression.micro_compact_defrag_threshold_tokens);
  SAME(compression.idle_compact_after_seconds);
  SAME(compression.hygiene_hard_message_limit);
  SAME(compression.hygiene_timeout_seconds);
  SAME(compression.hygiene_total_ceiling_seconds);
  SAME(compression.hygiene_failure_cooldown_seconds);
  SAME(compression.context_timeout_seconds);
  SAME(compression.context_total_ceiling_seconds);
  SAME(compression.codex_app_server_auto);
  SAME(compression.codex_responses_native);
  SAME(compression.codex_responses_compact_threshold);
  SAME(compression.reasoning_model_patterns);
  SAME(model.name);
  SAME(model.context_length);
  SAME(model.max_tokens);
  SAME(model.base_url);
  SAME(model.backend);
  SAME(model.api);
  SAME(model.api_key);
  SAME(model.api_key_file);
  SAME(chat.max_concurrency);
  SAME(chat.max_queue);
  SAME(chat.timeout_seconds);
  SAME(summarizer.base_url);
  SAME(summarizer.model);
  SAME(summarizer.api_key);
  SAME(summarizer.api_key_file);
  SAME(summarizer.api);
  SAME(summarizer.timeout_seconds);
  SAME(summarizer.max_concurrency);
  SAME(summarizer.max_queue);
  SAME(database.backend);
  SAME(database.url);
  SAME(database.url_file);
  SAME(database.path);
  SAME(database.busy_timeout_ms);
  SAME(database.max_batch);
  SAME(database.synchronous_full);
  SAME(database.readers);
  SAME(database.cold_storage_dir);
  SAME(database.index_free_space_reserve_bytes);
  SAME(gateway.host);
  SAME(gateway.port);
  SAME(gateway.auth_token);
  SAME(gateway.auth_token_file);
  SAME(gateway.tokens_file);
  SAME(gateway.allow_unauthenticated);
  SAME(gateway.max_body_bytes);
  SAME(gateway.idle_evict_seconds);
  SAME(gateway.request_timeout_seconds);
  SAME(gateway.default_user);
  SAME(gateway.system_prompt);
  SAME(gateway.skills_dir);
  SAME(gateway.max_tool_rounds);
  SAME(gateway.max_tool_calls_per_message);
  SAME(gateway.builtin_tools);
  SAME(gateway.builtin_result_max_bytes);
  SAME(gateway.io_threads);
  SAME(gateway.max_connections);
  SAME(gateway.max_connections_per_address);
  SAME(gateway.reserved_connections);
  SAME(gateway.header_timeout_seconds);
  SAME(gateway.body_timeout_seconds);
  SAME(gateway.body_min_bytes_per_second);
  SAME(gateway.keep_alive_seconds);
  SAME(gateway.stream_buffer_bytes);
  SAME(gateway.shutdown_drain_seconds);
  SAME(gateway.node_id);
  SAME(gateway.advertise_url);
  SAME(gateway.lease_seconds);
  SAME(logging.level);
  SAME(logging.file);
  SAME(embeddings.enabled);
  SAME(embeddings.base_url);
  SAME(embeddings.model);
  SAME(embeddings.dimensions);
  SAME(embeddings.send_dimensions);
  SAME(embeddings.batch_size);
  SAME(embeddings.timeout_seconds);
  SAME(embeddings.total_ceiling_seconds);
  SAME(embeddings.query_timeout_ms);
  SAME(embeddings.api_key_env);
  SAME(embeddings.max_input_chars);
  SAME(embeddings.backoff_initial_ms);
  SAME(embeddings.backoff_max_ms);
  SAME(embeddings.idle_poll_ms);
#undef SAME
}

} // namespace

// ---------------------------------------------------------------- defaults

const char* const all_default_documents[] = {
  "",
  "{}",
  "# nothing but a comment\n",
  "---\n",
  "compression:\nmodel:\nauxiliary:\n  compression:\n",
};

BOOST_DATA_TEST_CASE(an_empty_file_or_empty_sections_give_every_default,
                     bdata::make(all_default_documents), text) {
  auto r = load_config_text(text, "inline");
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  expect_same_config(*r.config, default_config());
}

BOOST_AUTO_TEST_CASE(the_shipped_file_yields_exactly_the_struct_defaults_field_by_field) {
  auto r = load_config_file(shipped_config);
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  expect_same_config(*r.config, default_config());
}

BOOST_AUTO_TEST_CASE(the_shipped_file_lists_every_key_the_loader_knows_and_no_other) {
  auto doc = YAML::LoadFile(shipped_config);
  std::vector<std::string> in_file;
  collect_paths(doc, "", in_file);
  auto known = config_key_paths();
  BOOST_TEST(in_file == known, tt::per_element());  // same keys, same order
}

BOOST_AUTO_TEST_CASE(every_key_of_the_shipped_file_has_a_comment) {
  auto comments = comments_by_path(read_text(shipped_config));
  for (auto& path : config_key_paths())
    BOOST_CHECK_MESSAGE(comments.count(path) == 1 && !comments[path].empty(),
                        "no comment for " << path);
}

// The SPEC's numbers (§2, §3, §5, §6, §8) as the shipped file states them.
struct spec_default {
  std::string path;
  std::string want;  // as config_value_text renders it
};

std::ostream& operator<<(std::ostream& os, const spec_default& d) {
  return os << d.path;
}

const std::vector<spec_default> spec_defaults = {
  {"compression.enabled", "true"},
  {"compression.threshold", "0.5"},
  {"compression.threshold_tokens", "0"},
  {"compression.target_ratio", "0.2"},
  {"compression.min_retention", "0"},
  {"compression.protect_first_n", "3"},
  {"compression.protect_last_n", "20"},
  {"compression.min_tail_user_messages", "1"},
  {"compression.tail_mode", "count"},
  {"compression.max_attempts", "3"},
  {"compression.in_place", "true"},
  {"compression.abort_on_summary_failure", "false"},
  {"compression.model_thresholds", "{}"},
  {"compression.summary_failure_cooldown_seconds", "600"},
  {"compression.anti_thrash_min_savings", "0.1"},
  {"compression.anti_thrash_lock_seconds", "300"},
  {"compression.proactive_prune_min_result_chars", "8000"},
  {"compression.proactive_prune_min_reclaim_tokens", "4096"},
  {"compression.tool_output_eviction_chars", "16000"},
  {"compression.micro_compact", "false"},
  {"compression.micro_compact_defrag_threshold_tokens", "2000"},
  {"compression.idle_compact_after_seconds", "0"},
  {"compression.hygiene_hard_message_limit", "5000"},
  {"compression.codex_app_server_auto", "native"},
  {"compression.codex_responses_native", "false"},
  {"compression.reasoning_model_patterns", "[\"o1\", \"o3\", \"o4\", \"reasoner\", \"thinking\"]"},
  {"model.max_tokens", "0"},
  {"model.backend", "chat_completions"},
  {"gateway.host", "\"127.0.0.1\""},
  {"gateway.max_tool_calls_per_message", "128"},
};

BOOST_DATA_TEST_CASE(the_shipped_file_states_the_spec_numbers, bdata::make(spec_defaults), d) {
  auto r = load_config_file(shipped_config);
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  BOOST_TEST(config_value_text(*r.config, d.path).value_or("<unknown key>") == d.want);
}

// ---------------------------------------------------------------- rejections

struct rejection {
  std::string yaml;
  std::string error;  // the one error expected, as "path: reason"
};

std::ostream& operator<<(std::ostream& os, const rejection& r) {
  return os << r.error;
}

const std::vector<rejection> rejections = {
  // out of range
  {"compression:\n  threshold: 1.7\n", "compression.threshold: 1.7 is outside 0.05..0.95"},
  {"compression:\n  protect_last_n: 0\n", "compression.protect_last_n: 0 is outside 1..10000"},
  {"compression:\n  max_attempts: 0\n", "compression.max_attempts: 0 is outside 1..100"},
  {"compression:\n  hygiene_timeout_seconds: -5\n",
   "compression.hygiene_timeout_seconds: -5 is outside 1..3600"},
  {"compression:\n  summary_failure_cooldown_seconds: -1\n",
   "compression.summary_failure_cooldown_seconds: -1 is outside 0..2592000"},
  {"compression:\n  threshold_tokens: 500\n",
   "compression.threshold_tokens: 500 is outside 0 or 1000..1000000000"},
  {"compression:\n  model_thresholds: {gpt-5: 1.2}\n",
   "compression.model_thresholds.gpt-5: 1.2 is outside 0.05..0.95"},
  {"model:\n  context_length: 1000\n", "model.context_length: 1000 is outside 4096..1000000000"},
  {"gateway:\n  port: 0\n", "gateway.port: 0 is outside 1..65535"},
  {"gateway:\n  port: 65536\n", "gateway.port: 65536 is outside 1..65535"},
  {"compression:\n  protect_last_n: 99999999999999999999\n",
   "compression.protect_last_n: 99999999999999999999 does not fit a 64-bit integer"},
  // wrong types
  {"gateway:\n  port: abc\n", "gateway.port: \"abc\" is not an integer"},
  {"compression:\n  protect_last_n: 2.5\n", "compression.protect_last_n: 2.5 is not an integer"},
  {"compression:\n  protect_last_n: 1e3\n", "compression.protect_last_n: 1e3 is not an integer"},
  {"compression:\n  protect_last_n: 0x10\n",
   "compression.protect_last_n: \"0x10\" is not an integer"},
  {"compression:\n  protect_last_n: 010\n",
   "compression.protect_last_n: 010 has a leading zero (octal in YAML 1.1): write it without"},
  {"gateway:\n  port: \"8077\"\n", "gateway.port: \"8077\" is a quoted string, not an integer"},
  {"compression:\n  threshold: '0.5'\n",
   "compression.threshold: \"0.5\" is a quoted string, not a number"},
  {"compression:\n  threshold: high\n", "compression.threshold: \"high\" is not a number"},
  {"compression:\n  threshold: .nan\n", "compression.threshold: \".nan\" is not a number"},
  {"compression:\n  threshold: {a: 1}\n",
   "compression.threshold: expected a number, got a mapping"},
  {"compression:\n  threshold: [0.5]\n", "compression.threshold: expected a number, got a list"},
  {"compression:\n  threshold:\n",
   "compression.threshold: has no value (remove the key to keep the default)"},
  {"compression:\n  enabled: yes\n",
   "compression.enabled: \"yes\" is not a boolean (write true or false)"},
  {"compression:\n  tail_mode: lean\n", "compression.tail_mode: \"lean\" is not one of count|tokens"},
  {"compression:\n  codex_app_server_auto: auto\n",
   "compression.codex_app_server_auto: \"auto\" is not one of native|managed|off"},
  {"model:\n  backend: grpc\n",
   "model.backend: \"grpc\" is not one of chat_completions|responses|codex_app_server"},
  {"model:\n  api: claude\n", "model.api: \"claude\" is not one of openai|anthropic"},
  {"auxiliary:\n  compression:\n    api: messages\n",
   "auxiliary.compression.api: \"messages\" is not one of openai|anthropic (or \"\" for "
   "model.api)"},
  {"model:\n  api: anthropic\n  backend: responses\n",
   "model.api: is anthropic, which needs model.backend: chat_completions (the Responses and "
   "codex app-server backends speak OpenAI's protocols)"},
  {"model:\n  api: anthropic\ncompression:\n  codex_responses_native: true\n",
   "model.api: is anthropic, but compression.codex_responses_native is true (OpenAI's "
   "server-side compaction); set it to false"},
  {"compression:\n  model_thresholds: [gpt-5]\n",
   "compression.model_thresholds: expected a mapping of model-name substring to ratio, got a "
   "list"},
  {"compression:\n  model_thresholds:\n",
   "compression.model_thresholds: has no value (write {} for none, or remove the key)"},
  {"compression:\n  reasoning_model_patterns: o1\n",
   "compression.reasoning_model_patterns: expected a list of strings, got a single value"},
  {"compression:\n  reasoning_model_patterns: [o1, [x]]\n",
   "compression.reasoning_model_patterns[1]: expected a string, got a list"},
  {"compression:\n  reasoning_model_patterns: [o1, '']\n",
   "compression.reasoning_model_patterns[1]: must not be empty"},
  {"model: [fake-chat]\n", "model: expected a mapping, got a list"},
  {"model: fake-chat\n", "model: expected a mapping, got a single value"},
  {"- compression\n", "expected a mapping of sections (compression:, model:, ...), got a list"},
  {"model:\n  base_url: localhost:8080\n",
   "model.base_url: \"localhost:8080\" is not an http:// or https:// URL nor \"builtin\""},
  {"auxiliary:\n  compression:\n    base_url: builtin\n",
   "auxiliary.compression.base_url: \"builtin\" is not an http:// or https:// URL nor \"\" "
   "(unset)"},
  {"auxiliary:\n  compression:\n    timeout: abc\n",
   "auxiliary.compression.timeout: \"abc\" is not an integer"},
  {"database:\n  backend: mysql\n", "database.backend: \"mysql\" is not one of sqlite|postgres"},
  {"database:\n  backend: postgres\n",
   "database.backend: postgres needs database.url (postgresql://...) or database.url_file"},
  {"database:\n  url: postgresql://u:secret@db/mneme\n",
   "database.backend: is sqlite, but database.url or database.url_file is set (they are for "
   "backend postgres)"},
  {"database:\n  backend: postgres\n  url: mysql://u:secret@db/mneme\n",
   "database.url: must start with postgresql:// (or postgres://)"},
  {"gateway:\n  node_id: a\n  advertise_url: http://a:1\n",
   "gateway.node_id: needs database.backend: postgres (the nodes share its leases)"},
  {"database:\n  backend: postgres\n  url: postgresql://db/m\ngateway:\n  node_id: a\n",
   "gateway.advertise_url: is required with gateway.node_id: the URL other nodes forward this "
   "node's keys to (http://host:port)"},
  {"database:\n  backend: postgres\n  url: postgresql://db/m\ngateway:\n  node_id: a\n"
   "  advertise_url: https://a:1\n",
   "gateway.advertise_url: must start with http:// (host:port of this node's API, as other "
   "nodes reach it)"},
  {"gateway:\n  advertise_url: http://a:1\n",
   "gateway.advertise_url: is set but gateway.node_id is not (node mode is off)"},
  {"database:\n  backend: postgres\n  url: postgresql://db/m\ngateway:\n  node_id: a b\n"
   "  advertise_url: http://a:1\n",
   "gateway.node_id: must be 1-64 characters of letters, digits, '.', '_' or '-'"},
  {"gateway:\n  lease_seconds: 0\n", "gateway.lease_seconds: 0 is outside 1..3600"},
  {"logging:\n  level: verbose\n",
   "logging.level: \"verbose\" is not one of trace|debug|info|warn|error|critical|off"},
  {"gateway:\n  host: \"\"\n", "gateway.host: must not be empty"},
  {"model:\n  name: ''\n", "model.name: must not be empty"},
  // unknown and duplicate keys
  {"compression:\n  foo: 1\n", "compression.foo: unknown key"},
  {"compression:\n  treshold: 0.5\n", "compression.treshold: unknown key (did you mean threshold?)"},
  {"compresion:\n  threshold: 0.5\n", "compresion: unknown key (did you mean compression?)"},
  {"auxiliary:\n  summarizer: {}\n", "auxiliary.summarizer: unknown key"},
  {"compression.threshold: 0.5\n",
   "compression.threshold: unknown key (nest the sections instead of writing a dotted key)"},
  {"compression:\n  threshold: 0.5\n  threshold: 0.6\n", "compression.threshold: duplicate key"},
  {"compression:\n  ? [a]\n  : 1\n", "compression: a key must be a plain name, got a list"},
  {"model:\n  name: a\nmodel:\n  name: b\n", "model: duplicate key"},
  {"compression: {}\n---\nmodel: {}\n---\n{}\n", "holds more than one YAML document; expected one"},
  // checks across keys
  {"model:\n  max_tokens: 199500\n",
   "model.max_tokens: 199500 leaves 500 tokens of the 200000-token window; at least 1024 are "
   "needed"},
  {"model:\n  context_length: 8192\n  max_tokens: 8192\n",
   "model.max_tokens: 8192 is not below model.context_length (8192)"},
  {"compression:\n  hygiene_hard_message_limit: 25\n",
   "compression.hygiene_hard_message_limit: 25 must exceed protect_first_n + protect_last_n + "
   "2 = 25 (the messages a compaction keeps), or compaction could never get under it"},
  {"compression:\n  hygiene_total_ceiling_seconds: 30\n",
   "compression.hygiene_total_ceiling_seconds: 30 is below hygiene_timeout_seconds (60)"},
  {"compression:\n  context_total_ceiling_seconds: 30\n",
   "compression.context_total_ceiling_seconds: 30 is below context_timeout_seconds (60)"},
  {"gateway:\n  request_timeout_seconds: 300\n",
   "gateway.request_timeout_seconds: 300 must exceed model.timeout and "
   "auxiliary.compression.timeout (largest: 300)"},
};

BOOST_DATA_TEST_CASE(each_mistake_is_reported_once_with_its_full_path_and_reason,
                     bdata::make(rejections), c) {
  auto r = load_config_text(c.yaml, "inline");
  BOOST_TEST(!r.ok());
  BOOST_TEST(!r.config.has_value());
  BOOST_TEST(error_lines(r) == std::vector<std::string>{c.error}, tt::per_element());
}

// The fuzzer's finding (tests/fuzz/corpus/config/regression-timeout-yaml-ff): 50 bytes of invalid
// UTF-8 on which yaml-cpp's LoadAll produced empty documents without end, memory growing,
// until the loader counted the documents itself. Now an error naming the input.
BOOST_AUTO_TEST_CASE(invalid_utf8_that_made_yaml_cpp_loop_is_an_error_and_ends) {
  auto r = load_config_file(source_dir + "/tests/fuzz/corpus/config/regression-timeout-yaml-ff");
  BOOST_TEST(!r.ok());
  BOOST_TEST(error_lines(r) == std::vector<std::string>{"is not valid UTF-8 (byte 1)"},
             tt::per_element());
}

// Valid UTF-8 holding several documents ends too: the loader reads no further than the
// second document, however many follow.
BOOST_AUTO_TEST_CASE(a_stream_of_many_documents_is_refused_after_reading_two) {
  std::string many;
  for (int i = 0; i < 10000; ++i)
    many += "---\ncompression: {}\n";
  auto r = load_config_text(many, "inline");
  BOOST_TEST(error_lines(r) ==
                 std::vector<std::string>{"holds more than one YAML document; expected one"},
             tt::per_element());
}

BOOST_AUTO_TEST_CASE(five_mistakes_in_one_file_are_all_reported_with_their_paths_and_lines) {
  auto r = load_config_file(fixtures + "five_mistakes.yaml");
  BOOST_TEST_REQUIRE(r.errors.size() == 5u, r.describe_errors());
  std::vector<std::string> want = {
    "compression.enabled: \"yes\" is not a boolean (write true or false)",
    "compression.threshold: 1.7 is outside 0.05..0.95",
    "compression.treshold_tokens: unknown key (did you mean threshold_tokens?)",
    "model: expected a mapping, got a list",
    "gateway.port: \"abc\" is not an integer",
  };
  BOOST_TEST(error_lines(r) == want, tt::per_element());
  std::vector<int> lines;
  for (auto& e : r.errors)
    lines.push_back(e.line);
  BOOST_TEST(lines == (std::vector<int>{3, 4, 5, 6, 8}), tt::per_element());
}

BOOST_AUTO_TEST_CASE(errors_in_different_sections_are_all_reported_not_just_the_first) {
  auto r = load_config_text("compression:\n  threshold: 2\n  foo: 1\n"
                            "auxiliary:\n  compression:\n    timeout: -1\n"
                            "database:\n  readers: 0\n"
                            "logging:\n  level: loud\n",
                            "inline");
  BOOST_TEST(r.errors.size() == 5u);
  for (auto path : {"compression.threshold", "compression.foo", "auxiliary.compression.timeout",
                    "database.readers", "logging.level"})
    BOOST_CHECK_MESSAGE(std::any_of(r.errors.begin(), r.errors.end(),
                                    [&](auto& e) { return e.path == path; }),
                        "no error for " << path);
}

BOOST_AUTO_TEST_CASE(the_output_reserve_must_leave_at_least_1024_tokens_of_the_window) {
  auto exact = load_config_text("model:\n  context_length: 8192\n  max_tokens: 7168\n", "x");
  BOOST_TEST(exact.ok(), exact.describe_errors());
  auto short_by_one =
    load_config_text("model:\n  context_length: 8192\n  max_tokens: 7169\n", "x");
  BOOST_TEST(error_lines(short_by_one) ==
                 std::vector<std::string>{"model.max_tokens: 7169 leaves 1023 tokens of the "
                                          "8192-token window; at least 1024 are needed"},
             tt::per_element());
}

BOOST_AUTO_TEST_CASE(a_cross_key_check_is_skipped_when_one_of_its_keys_was_rejected) {
  // request_timeout_seconds 100 would fail against the default model.timeout 300, but
  // model.timeout itself is wrong: only that error is reported.
  auto r = load_config_text("model:\n  timeout: abc\ngateway:\n  request_timeout_seconds: 100\n",
                            "inline");
  BOOST_TEST(error_lines(r) == std::vector<std::string>{"model.timeout: \"abc\" is not an integer"},
             tt::per_element());
}

BOOST_AUTO_TEST_CASE(a_cross_key_error_points_at_the_line_of_its_key_when_the_file_sets_it) {
  auto r = load_config_text("model:\n  timeout: 100\ngateway:\n  port: 9000\n"
                            "  request_timeout_seconds: 50\n",
                            "x");
  BOOST_TEST_REQUIRE(r.errors.size() == 1u, r.describe_errors());
  BOOST_TEST(r.errors[0].path == "gateway.request_timeout_seconds");
  BOOST_TEST(r.errors[0].line == 5);
  BOOST_TEST(r.errors[0].column == 3);
}

BOOST_AUTO_TEST_CASE(invalid_yaml_syntax_is_reported_with_its_line_and_column) {
  auto r = load_config_text("compression:\n  threshold: 0.5\n  protect_last_n: [1,\n", "bad.yaml");
  BOOST_TEST_REQUIRE(r.errors.size() == 1u);
  BOOST_TEST(r.errors[0].path == "");
  BOOST_TEST(r.errors[0].reason.rfind("invalid YAML: ", 0) == 0u, r.errors[0].reason);
  BOOST_TEST(r.errors[0].line == 4);
  BOOST_TEST(r.errors[0].column == 1);
  BOOST_TEST(r.describe_errors().rfind("bad.yaml:4:1: invalid YAML: ", 0) == 0u,
             r.describe_errors());
}

const char* const accepted_true[] = {"true", "True", "TRUE"};
const char* const accepted_false[] = {"false", "False", "FALSE"};
const char* const rejected_booleans[] = {"yes", "no", "on", "off", "y", "n", "1", "0",
                                         "\"true\"", "'false'"};

BOOST_DATA_TEST_CASE(true_is_accepted_in_the_yaml_1_2_spellings, bdata::make(accepted_true),
                     spelling) {
  auto r = load_config_text(setting("compression.micro_compact", spelling), "inline");
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  BOOST_TEST(r.config->compression.micro_compact);
}

BOOST_DATA_TEST_CASE(false_is_accepted_in_the_yaml_1_2_spellings, bdata::make(accepted_false),
                     spelling) {
  auto r = load_config_text(setting("compression.enabled", spelling), "inline");
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  BOOST_TEST(!r.config->compression.enabled);
}

BOOST_DATA_TEST_CASE(yaml_1_1_booleans_and_quoted_booleans_are_rejected,
                     bdata::make(rejected_booleans), word) {
  auto r = load_config_text(setting("compression.enabled", word), "inline");
  BOOST_TEST_REQUIRE(r.errors.size() == 1u);
  BOOST_TEST(r.errors[0].path == "compression.enabled");
  BOOST_TEST(r.errors[0].reason.find("is not a boolean (write true or false)") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(integers_keep_their_sign_and_decimal_value) {
  auto r = load_config_text("compression:\n  protect_first_n: +0\n  protect_last_n: 10\n"
                            "gateway:\n  port: 80\n",
                            "x");
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  BOOST_TEST(r.config->compression.protect_first_n == 0);
  BOOST_TEST(r.config->compression.protect_last_n == 10);
  BOOST_TEST(r.config->gateway.port == 80);
}

BOOST_AUTO_TEST_CASE(the_shipped_test_configuration_loads_cleanly) {
  auto r = load_config_file(source_dir + "/configs/test.yaml");
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  BOOST_TEST(r.config->database.path == ":memory:");
  BOOST_TEST(r.config->model.base_url == "builtin");
}

// ---------------------------------------------------------------- ranges

struct int_bounds {
  std::string path;
  int64_t lo;
  int64_t hi;
};

std::ostream& operator<<(std::ostream& os, const int_bounds& b) {
  return os << b.path;
}

// Every integer key with its inclusive range: pins the numbers of config_schema.cpp
// and, through the comment check, the ranges printed in configs/mneme.yaml.
const std::vector<int_bounds> integer_ranges = {
  {"compression.threshold_tokens", 1000, 1000000000},
  {"compression.protect_first_n", 0, 10000},
  {"compression.protect_last_n", 1, 10000},
  {"compression.min_tail_user_messages", 0, 1000},
  {"compression.max_attempts", 1, 100},
  {"compression.summary_failure_cooldown_seconds", 0, 2592000},
  {"compression.anti_thrash_lock_seconds", 0, 2592000},
  {"compression.proactive_prune_tokens", 0, 1000000000},
  {"compression.proactive_prune_min_result_chars", 256, 1000000000},
  {"compression.proactive_prune_min_reclaim_tokens", 0, 1000000000},
  {"compression.tool_output_eviction_chars", 256, 1000000000},
  {"compression.micro_compact_every_n_turns", 1, 10000},
  {"compression.micro_compact_defrag_threshold_tokens", 100, 1000000},
  {"compression.idle_compact_after_seconds", 0, 2592000},
  {"compression.hygiene_hard_message_limit", 10, 10000000},
  {"compression.hygiene_timeout_seconds", 1, 3600},
  {"compression.hygiene_total_ceiling_seconds", 1, 86400},
  {"compression.hygiene_failure_cooldown_seconds", 0, 2592000},
  {"compression.context_timeout_seconds", 1, 3600},
  {"compression.context_total_ceiling_seconds", 1, 86400},
  {"compression.codex_responses_compact_threshold", 0, 1000000000},
  {"auxiliary.compression.timeout", 1, 3600},
  {"auxiliary.compression.max_concurrency", 1, 1024},
  {"auxiliary.compression.max_queue", 0, 1000000},
  {"model.context_length", 4096, 1000000000},
  {"model.max_tokens", 0, 1000000000},
  {"model.max_concurrency", 1, 4096},
  {"model.max_queue", 0, 10000000},
  {"model.timeout", 1, 3600},
  {"database.busy_timeout_ms", 0, 600000},
  {"database.max_batch", 1, 100000},
  {"database.readers", 1, 64},
  {"database.index_free_space_reserve_bytes", 0, 1099511627776},
  {"gateway.port", 1, 65535},
  {"gateway.max_body_bytes", 1024, 1073741824},
  {"gateway.idle_evict_seconds", 1, 2592000},
  {"gateway.request_timeout_seconds", 1, 86400},
  {"gateway.io_threads", 1, 64},
  {"gateway.max_connections", 1, 1000000},
  {"gateway.max_connections_per_address", 1, 1000000},
  {"gateway.reserved_connections", 0, 10000},
  {"gateway.header_timeout_seconds", 1, 3600},
  {"gateway.body_timeout_seconds", 1, 3600},
  {"gateway.body_min_bytes_per_second", 1024, 1073741824},
  {"gateway.keep_alive_seconds", 1, 86400},
  {"gateway.stream_buffer_bytes", 4096, 1073741824},
  {"gateway.shutdown_drain_seconds", 0, 3600},
  {"embeddings.dimensions", 1, 4096},
  {"embeddings.batch_size", 1, 2048},
  {"embeddings.timeout_seconds", 1, 3600},
  {"embeddings.total_ceiling_seconds", 1, 3600},
  {"embeddings.query_timeout_ms", 50, 60000},
  {"embeddings.max_input_chars", 16, 1000000},
  {"embeddings.backoff_initial_ms", 10, 3600000},
  {"embeddings.backoff_max_ms", 10, 86400000},
  {"embeddings.idle_poll_ms", 10, 3600000},
};

// True when `r` holds a range error for exactly `path` (other keys' cross checks may
// legitimately fire at extreme values; they are not this key's range).
bool has_range_error(const config_result& r, const std::string& path) {
  for (auto& e : r.errors)
    if (e.path == path && e.reason.find(" is outside ") != std::string::npos)
      return true;
  return false;
}

BOOST_DATA_TEST_CASE(integer_ranges_accept_both_ends_and_reject_one_step_beyond,
                     bdata::make(integer_ranges), b) {
  auto range = std::to_string(b.lo) + ".." + std::to_string(b.hi);
  for (auto ok : {b.lo, b.hi})
    BOOST_TEST(!has_range_error(load_config_text(setting(b.path, std::to_string(ok)), "x"),
                                b.path),
               b.path << " rejects " << ok);
  for (auto bad : {b.lo - 1, b.hi + 1}) {
    auto r = load_config_text(setting(b.path, std::to_string(bad)), "x");
    BOOST_TEST(has_range_error(r, b.path), b.path << " accepts " << bad);
    BOOST_TEST(has_error(r, b.path + ": " + std::to_string(bad) + " is outside " +
                                (b.path == "compression.threshold_tokens"
                                     || b.path == "compression.tool_output_eviction_chars"
                                   ? "0 or "
                                   : "") +
                                range),
               r.describe_errors());
  }
  auto comments = comments_by_path(read_text(shipped_config));
  BOOST_TEST(comments[b.path].find(range) != std::string::npos,
             "configs/mneme.yaml does not state " << range << " for " << b.path);
}

BOOST_AUTO_TEST_CASE(threshold_tokens_accepts_zero_as_no_cap_below_its_range) {
  auto r = load_config_text(setting("compression.threshold_tokens", "0"), "x");
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  BOOST_TEST(r.config->compression.threshold_tokens == 0);
}

struct number_bounds {
  std::string path;
  std::string lo, hi, below, above;
};

std::ostream& operator<<(std::ostream& os, const number_bounds& b) {
  return os << b.path;
}

const std::vector<number_bounds> number_ranges = {
  {"compression.threshold", "0.05", "0.95", "0.049", "0.951"},
  {"compression.target_ratio", "0.05", "0.8", "0.049", "0.801"},
  {"compression.min_retention", "0", "1", "-0.001", "1.001"},
  {"compression.anti_thrash_min_savings", "0", "0.9", "-0.001", "0.901"},
};

BOOST_DATA_TEST_CASE(number_ranges_accept_both_ends_and_reject_just_beyond,
                     bdata::make(number_ranges), b) {
  auto range = b.lo + ".." + b.hi;
  for (auto& ok : {b.lo, b.hi}) {
    auto r = load_config_text(setting(b.path, ok), "x");
    BOOST_TEST(r.ok(), r.describe_errors());
  }
  for (auto& bad : {b.below, b.above})
    BOOST_TEST(error_lines(load_config_text(setting(b.path, bad), "x")) ==
                   std::vector<std::string>{b.path + ": " + bad + " is outside " + range},
               tt::per_element());
  auto comments = comments_by_path(read_text(shipped_config));
  BOOST_TEST(comments[b.path].find(range) != std::string::npos,
             "configs/mneme.yaml does not state " << range << " for " << b.path);
}

BOOST_AUTO_TEST_CASE(model_threshold_ratios_share_the_threshold_range) {
  auto r = load_config_text("compression:\n  model_thresholds: {gpt: 0.05, gpt-5: 0.95}\n", "x");
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  BOOST_TEST(r.config->compression.model_thresholds.at("gpt") == 0.05);
  BOOST_TEST(r.config->compression.model_thresholds.at("gpt-5") == 0.95);
  auto bad = load_config_text("compression:\n  model_thresholds: {gpt: 0.04, o3: 0.2, o1: 1}\n",
                              "x");
  BOOST_TEST(error_lines(bad) ==
                 (std::vector<std::string>{
                   "compression.model_thresholds.gpt: 0.04 is outside 0.05..0.95",
                   "compression.model_thresholds.o1: 1 is outside 0.05..0.95"}),
             tt::per_element());
}

// ---------------------------------------------------------------- values

BOOST_AUTO_TEST_CASE(a_missing_key_keeps_its_default_and_a_given_key_replaces_it) {
  auto r = load_config_text("compression:\n  protect_last_n: 30\n"
                            "  reasoning_model_patterns: [r1]\n"
                            "model:\n  name: gpt-5\n  timeout: 100\n",
                            "x");
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  auto& c = *r.config;
  BOOST_TEST(c.compression.protect_last_n == 30);
  BOOST_TEST(c.compression.protect_first_n == default_config().compression.protect_first_n);
  BOOST_TEST(c.compression.reasoning_model_patterns == std::vector<std::string>{"r1"},
             tt::per_element());
  BOOST_TEST(c.model.name == "gpt-5");
  BOOST_TEST(c.model.context_length == default_config().model.context_length);
  BOOST_TEST(c.chat.timeout_seconds == 100);  // model.timeout fills the chat pool
  BOOST_TEST(c.summarizer.timeout_seconds == default_config().summarizer.timeout_seconds);
}

BOOST_AUTO_TEST_CASE(the_auxiliary_timeout_key_fills_the_summarizer_timeout_seconds) {
  auto r = load_config_text("auxiliary:\n  compression:\n    timeout: 45\n", "x");
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  BOOST_TEST(r.config->summarizer.timeout_seconds == 45);
}

BOOST_AUTO_TEST_CASE(settings_are_never_taken_from_environment_variables) {
  ::setenv("MNEME_MODEL_NAME", "from-the-environment", 1);
  ::setenv("MNEME_TEST_VALUE", "expanded", 1);
  auto defaults = load_config_text("", "x");
  BOOST_TEST_REQUIRE(defaults.ok());
  BOOST_TEST(defaults.config->model.name == "fake-chat");
  auto literal = load_config_text("model:\n  name: ${MNEME_TEST_VALUE}\n", "x");
  BOOST_TEST_REQUIRE(literal.ok(), literal.describe_errors());
  BOOST_TEST(literal.config->model.name == "${MNEME_TEST_VALUE}");
  ::unsetenv("MNEME_MODEL_NAME");
  ::unsetenv("MNEME_TEST_VALUE");
}

BOOST_AUTO_TEST_CASE(a_key_file_that_does_not_exist_is_an_error_naming_the_path) {
  auto r = load_config_text("model:\n  api_key_file: /nonexistent/mneme/key\n"
                            "gateway:\n  auth_token_file: " + fixtures + "\n",
                            "x");
  auto dir = fs::path{fixtures}.string();
  BOOST_TEST(error_lines(r) ==
                 (std::vector<std::string>{
                   "model.api_key_file: /nonexistent/mneme/key does not exist",
                   "gateway.auth_token_file: " + dir + " is not a regular file"}),
             tt::per_element());
}

BOOST_AUTO_TEST_CASE(a_relative_key_file_resolves_against_the_directory_of_the_config_file) {
  auto r = load_config_file(fixtures + "every_key_changed.yaml");
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  auto want = (fs::path{fixtures} / "secret.key").lexically_normal().string();
  BOOST_TEST(r.config->model.api_key_file == want);
  BOOST_TEST(fs::path{r.config->model.api_key_file}.is_absolute());
}

BOOST_AUTO_TEST_CASE(a_secret_given_inline_and_as_a_file_is_rejected) {
  auto key = fixtures + "secret.key";
  auto r = load_config_text("model:\n  api_key: sk-a\n  api_key_file: " + key + "\n"
                            "auxiliary:\n  compression:\n    api_key: sk-b\n    api_key_file: " +
                                key + "\ngateway:\n  auth_token: t\n  auth_token_file: " + key +
                                "\n",
                            "x");
  BOOST_TEST(error_lines(r) ==
                 (std::vector<std::string>{
                   "model.api_key_file: is set together with model.api_key; keep one of them",
                   "auxiliary.compression.api_key_file: is set together with "
                   "auxiliary.compression.api_key; keep one of them",
                   "gateway.auth_token_file: is set together with gateway.auth_token; keep one "
                   "of them"}),
             tt::per_element());
}

BOOST_AUTO_TEST_CASE(a_file_that_cannot_be_read_is_one_error_naming_the_file) {
  auto missing = load_config_file("/nonexistent/mneme.yaml");
  BOOST_TEST(!missing.ok());
  BOOST_TEST(missing.describe_errors() ==
             "/nonexistent/mneme.yaml: cannot open the file: No such file or directory\n");
  auto directory = load_config_file(fixtures);
  BOOST_TEST(error_lines(directory) ==
                 std::vector<std::string>{"is a directory, not a configuration file"},
             tt::per_element());
}

BOOST_AUTO_TEST_CASE(described_errors_carry_origin_line_and_column) {
  auto r = load_config_text("compression:\n  threshold: 1.7\n", "my.yaml");
  BOOST_TEST(r.describe_errors() == "my.yaml:2:3: compression.threshold: 1.7 is outside 0.05..0.95\n");
}

// ---------------------------------------------------------------- render

// Keys the every_key_changed fixture leaves at their defaults, and why.
const std::set<std::string> unchangeable_in_fixture = {
  "model.api_key",                       // set as api_key_file instead (only one allowed)
  "model.api",                           // anthropic needs backend chat_completions, changed here
  "auxiliary.compression.api_key_file",  // set inline instead
  "gateway.auth_token_file",             // set inline instead
  "database.backend",                    // postgres needs a server (testing/pg_test_cluster.hpp)
  "database.url",                        // only with backend postgres
  "database.url_file",                   // only with backend postgres
  "gateway.node_id",                     // only with backend postgres
  "gateway.advertise_url",               // only with gateway.node_id
};

BOOST_AUTO_TEST_CASE(the_round_trip_fixture_changes_every_key_it_can) {
  auto r = load_config_file(fixtures + "every_key_changed.yaml");
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  app_config defaults;
  for (auto& path : config_key_paths()) {
    bool changed = config_value_text(*r.config, path) != config_value_text(defaults, path);
    BOOST_CHECK_MESSAGE(changed == (unchangeable_in_fixture.count(path) == 0),
                        path << (changed ? " changed unexpectedly" : " keeps its default"));
  }
}

BOOST_AUTO_TEST_CASE(the_effective_configuration_reloads_to_the_same_configuration) {
  auto r = load_config_file(fixtures + "every_key_changed.yaml");
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  auto text = render_effective_config(*r.config);
  auto again = load_config_text(text, "rendered");
  BOOST_TEST_REQUIRE(again.ok(), again.describe_errors() << text);
  BOOST_TEST(again.config->summarizer.api_key == "***");
  BOOST_TEST(again.config->gateway.auth_token == "***");
  again.config->summarizer.api_key = r.config->summarizer.api_key;
  again.config->gateway.auth_token = r.config->gateway.auth_token;
  expect_same_config(*again.config, *r.config);
  BOOST_TEST(render_effective_config(*again.config) == text);
}

BOOST_AUTO_TEST_CASE(the_effective_configuration_of_the_defaults_reloads_to_the_defaults) {
  auto again = load_config_text(render_effective_config(default_config()), "rendered");
  BOOST_TEST_REQUIRE(again.ok(), again.describe_errors());
  expect_same_config(*again.config, default_config());
}

BOOST_AUTO_TEST_CASE(secrets_are_masked_when_set_and_empty_when_unset) {
  auto r = load_config_file(fixtures + "every_key_changed.yaml");
  BOOST_TEST_REQUIRE(r.ok(), r.describe_errors());
  auto text = render_effective_config(*r.config);
  BOOST_TEST(text.find("sk-test-secret-aux") == std::string::npos);
  BOOST_TEST(text.find("tok-test-secret-gw") == std::string::npos);
  BOOST_TEST(*config_value_text(*r.config, "auxiliary.compression.api_key") == "\"***\"");
  BOOST_TEST(*config_value_text(*r.config, "gateway.auth_token") == "\"***\"");
  BOOST_TEST(*config_value_text(*r.config, "model.api_key") == "\"\"");
}

BOOST_AUTO_TEST_CASE(strings_with_quotes_newlines_and_cjk_survive_the_round_trip) {
  std::string prompt = "Line one.\nLine \"two\" \\ with a tab\there, a bell \a and 中文.";
  app_config c;
  c.gateway.system_prompt = prompt;
  c.compression.model_thresholds = {{"a\"b", 0.3}, {"é", 0.1 + 0.2}};
  auto again = load_config_text(render_effective_config(c), "rendered");
  BOOST_TEST_REQUIRE(again.ok(), again.describe_errors());
  BOOST_TEST(again.config->gateway.system_prompt == prompt);
  BOOST_TEST((again.config->compression.model_thresholds == c.compression.model_thresholds));
}

// ---------------------------------------------------------------- the mneme program

namespace {

// Runs the built `mneme` (MNEME_BINARY_DIR/mneme) with `args`: its exit code and output.
testing::program_result run_mneme(const std::vector<std::string>& args) {
  auto binary = std::string{MNEME_BINARY_DIR} + "/mneme";
  BOOST_TEST_REQUIRE(fs::exists(binary), binary << " is missing: build the mneme target");
  return testing::run_program("mneme", args);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

} // namespace

BOOST_AUTO_TEST_CASE(config_check_prints_the_effective_configuration_and_exits_0) {
  auto r = run_mneme({"config", "check", shipped_config});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(r.err.empty());
  auto printed = load_config_text(r.out, "stdout");
  BOOST_TEST_REQUIRE(printed.ok(), printed.describe_errors());
  expect_same_config(*printed.config, default_config());
}

BOOST_AUTO_TEST_CASE(config_check_masks_secrets_in_what_it_prints) {
  auto r = run_mneme({"config", "check", fixtures + "every_key_changed.yaml"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(r.out.find("sk-test-secret-aux") == std::string::npos);
  BOOST_TEST(r.out.find("tok-test-secret-gw") == std::string::npos);
  BOOST_TEST(r.out.find("api_key: \"***\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(config_check_reports_all_five_mistakes_on_stderr_and_exits_2) {
  auto file = fixtures + "five_mistakes.yaml";
  auto r = run_mneme({"config", "check", file});
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.out.empty());
  auto lines = lines_of(r.err);
  BOOST_TEST_REQUIRE(lines.size() == 6u, r.err);  // five errors and the summary line
  std::vector<std::string> want = {
    file + ":3:3: compression.enabled: \"yes\" is not a boolean (write true or false)",
    file + ":4:3: compression.threshold: 1.7 is outside 0.05..0.95",
    file + ":5:3: compression.treshold_tokens: unknown key (did you mean threshold_tokens?)",
    file + ":6:1: model: expected a mapping, got a list",
    file + ":8:3: gateway.port: \"abc\" is not an integer",
    file + ": configuration rejected (5 errors)",
  };
  BOOST_TEST(lines == want, tt::per_element());
}

BOOST_AUTO_TEST_CASE(config_check_of_a_missing_file_exits_2_naming_the_file) {
  auto r = run_mneme({"config", "check", "/nonexistent/mneme.yaml"});
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.out.empty());
  BOOST_TEST(r.err.find("/nonexistent/mneme.yaml: cannot open the file: No such file or "
                        "directory") != std::string::npos,
             r.err);
}

BOOST_AUTO_TEST_CASE(config_keys_lists_every_key_in_file_order_with_what_it_accepts) {
  auto r = run_mneme({"config", "keys"});
  BOOST_TEST(r.code == 0, r.err);
  auto lines = lines_of(r.out);
  auto keys = config_key_paths();
  BOOST_TEST_REQUIRE(lines.size() == keys.size());
  for (size_t i = 0; i < keys.size(); ++i)
    BOOST_TEST(lines[i].rfind(keys[i] + " ", 0) == 0u, lines[i]);
  auto threshold = std::find_if(lines.begin(), lines.end(), [](auto& l) {
    return l.rfind("compression.threshold ", 0) == 0;
  });
  BOOST_TEST_REQUIRE((threshold != lines.end()));
  BOOST_TEST(threshold->find("a number in 0.05..0.95") != std::string::npos, *threshold);
}

BOOST_AUTO_TEST_CASE(config_check_without_a_file_is_a_usage_error_with_exit_2) {
  auto r = run_mneme({"config", "check"});
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.err.find("FILE is required") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(embeddings_are_off_by_default_and_their_keys_are_checked) {
  BOOST_TEST(!default_config().embeddings.enabled);
  auto ok = load_config_text("embeddings:\n  enabled: true\n  base_url: builtin\n"
                             "  api_key_env: MY_EMBED_KEY_2\n",
                             "x");
  BOOST_TEST_REQUIRE(ok.ok(), ok.describe_errors());
  BOOST_TEST(ok.config->embeddings.enabled);
  BOOST_TEST(ok.config->embeddings.base_url == "builtin");
  BOOST_TEST(ok.config->embeddings.api_key_env == "MY_EMBED_KEY_2");
  auto bad_url = load_config_text(setting("embeddings.base_url", "ftp://x"), "x");
  BOOST_TEST(!bad_url.ok());
  BOOST_TEST(bad_url.describe_errors().find("embeddings.base_url") != std::string::npos);
  for (const char* name : {"2KEY", "MY-KEY", "sk-abc123 secret"}) {
    auto bad_env = load_config_text(setting("embeddings.api_key_env", "\"" + std::string{name}
                                                                        + "\""),
                                    "x");
    BOOST_TEST(!bad_env.ok(), name);
    BOOST_TEST(bad_env.describe_errors().find("embeddings.api_key_env") != std::string::npos);
  }
  auto unknown = load_config_text(setting("embeddings.dimension", "8"), "x");
  BOOST_TEST(!unknown.ok());
}

BOOST_AUTO_TEST_CASE(embedding_ceilings_below_their_timeouts_are_rejected) {
  auto r = load_config_text("embeddings:\n  timeout_seconds: 60\n  total_ceiling_seconds: 30\n"
                            "  backoff_initial_ms: 5000\n  backoff_max_ms: 1000\n",
                            "x");
  BOOST_TEST(!r.ok());
  BOOST_TEST(has_error(r, "embeddings.total_ceiling_seconds: 30 is below "
                          "embeddings.timeout_seconds (60)"),
             r.describe_errors());
  BOOST_TEST(has_error(r, "embeddings.backoff_max_ms: 1000 is below "
                          "embeddings.backoff_initial_ms (5000)"),
             r.describe_errors());
}

BOOST_AUTO_TEST_SUITE_END() // app_config_test
