// Strict reading and writing of single YAML scalars for the configuration loader.
// The loader (apps/common/config/app_config.cpp) hands each scalar's text and whether it was
// quoted; these functions decide what it means. Pure functions, no state: any thread.
//
// Accepted forms (documented in configs/mneme.yaml):
//   boolean  true | false (also True/TRUE/False/FALSE, the YAML 1.2 core schema);
//            yes/no/on/off/y/n/1/0 are rejected because YAML 1.1 and 1.2 disagree on them.
//   integer  plain decimal digits with an optional sign; no fraction, no exponent,
//            no hex/octal, no leading zero (`010` is 8 in YAML 1.1), no `_`
//            separators; must fit 64 bits.
//   number   plain decimal (`0.5`, `.5`, `1`, `1e-3`); no .inf/.nan.
//   A quoted scalar ("8077", '0.5', "true") is a string and is never read as a number
//   or a boolean.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mneme {

// One scalar as written in the file.
struct yaml_scalar {
  std::string text;
  bool quoted = false;  // written as '...' / "..." or tagged !!str
};

// Each parser returns the value, or std::nullopt with `why` set to a reason that names
// the offending value, e.g. `"abc" is not an integer`.
std::optional<bool> parse_config_bool(const yaml_scalar& s, std::string& why);
std::optional<int64_t> parse_config_int(const yaml_scalar& s, std::string& why);
std::optional<double> parse_config_number(const yaml_scalar& s, std::string& why);

// The scalar as shown inside an error message: plain numbers stay bare (`1.7`), anything
// else is double-quoted (`"abc"`); long text is shortened.
std::string show_scalar(const yaml_scalar& s);

// Shortest text that reads back as exactly `x` (e.g. 0.1 -> "0.1", 2.0 -> "2").
// REQUIRES: x is finite.
std::string format_config_number(double x);

// `text` as a YAML double-quoted scalar that reads back as exactly `text`.
std::string yaml_quote(std::string_view text);

} // namespace mneme
