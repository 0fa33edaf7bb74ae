// The configuration of every mneme program: one YAML file (SPEC §9, layout of Hermes'
// config.yaml) read once at start by this one strict loader into the plain parameter
// structs that the policies, the store and the actors take at spawn. Actors never read
// the file. The loader reports every problem at once, each with the key's dotted path;
// it never throws and reads no environment variable.
//
// Thread safety: all functions are reentrant; call them from main (or any thread)
// before the actor system starts. The returned structs are plain values.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/embedding_params.hpp"
#include "actors/gateway_params.hpp"
#include "actors/llm_params.hpp"
#include "policies/compression_params.hpp"
#include "store/store_params.hpp"

namespace mneme {

// The `logging:` block.
struct logging_params {
  std::string level = "info";  // trace|debug|info|warn|error|critical|off
  std::string file;            // empty = standard error
};

struct app_config {
  compression_params compression;  // `compression:`
  model_params model;              // `model:` (name, window, endpoint)
  chat_pool_params chat;           // `model:` max_concurrency, max_queue, timeout
  summarizer_params summarizer;    // `auxiliary.compression:`
  store_params database;           // `database:`
  gateway_params gateway;          // `gateway:`
  logging_params logging;          // `logging:`
  embedding_params embeddings;     // `embeddings:` (issue 48)
};

// One rejected setting.
struct config_error {
  std::string path;    // dotted key path ("compression.threshold"); "" = the whole file
  std::string reason;  // e.g. "1.7 is outside 0.05..0.95"
  int line = 0;        // 1-based position in the file; 0 = not tied to a position
  int column = 0;
};

// "compression.threshold: 1.7 is outside 0.05..0.95" (just the reason when path is "").
std::string to_string(const config_error& e);

// Either a complete configuration or every error found.
// Invariant: config.has_value() == errors.empty().
struct config_result {
  std::string origin;                 // file path or the name given to load_config_text
  std::optional<app_config> config;
  std::vector<config_error> errors;   // in file order, then cross-key checks

  bool ok() const { return config.has_value(); }
  // One line per error: "origin:line:column: path: reason".
  std::string describe_errors() const;
};

// Loads a configuration file. A relative api_key_file / auth_token_file is resolved
// against the file's directory (the struct then holds the resolved path). A file that
// cannot be read is an error with path "".
config_result load_config_file(const std::string& path);

// The configuration a program runs on: the embedded defaults when `path` is empty, else
// the file. Invalid: its errors (describe_errors) go to `err` and the answer is empty.
std::optional<app_config> config_or_defaults(const std::string& path, std::ostream& err);

// Loads configuration text; `origin` names it in messages. Relative *_file paths are
// taken relative to the current directory and kept as written.
config_result load_config_text(std::string_view yaml, std::string origin);

// The effective configuration as YAML: every key, defaults filled in, `api_key` and
// `auth_token` shown as "***" when set and "" when empty. Loading the text gives back
// `cfg` except for those two secrets.
std::string render_effective_config(const app_config& cfg);

// Every key the loader knows, as dotted paths, in file order
// ("compression.enabled", ..., "auxiliary.compression.timeout", ...).
std::vector<std::string> config_key_paths();

// The value of one key in `cfg` as it would appear in render_effective_config
// (secrets masked); std::nullopt for an unknown path.
std::optional<std::string> config_value_text(const app_config& cfg, std::string_view path);

} // namespace mneme
