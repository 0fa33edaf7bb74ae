// Implementation of the HTTP answer classification; rules in error_classifier.hpp.
#include "policies/error_classifier.hpp"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "policies/utf8.hpp"

namespace mneme {

namespace {

// A list of phrases, each also kept in its JSON-escaped form when it holds
// non-ASCII characters (servers that escape everything send "\u8d85\u8fc7"
// for "超过"). Built once; read-only afterwards.
class phrase_set {
public:
  phrase_set(std::initializer_list<std::string_view> phrases) {
    for (auto p : phrases) {
      forms_.emplace_back(p);
      std::string escaped = json_escaped(p);
      if (escaped != p) forms_.push_back(std::move(escaped));
    }
  }

  bool found_in(std::string_view text) const {
    return std::any_of(forms_.begin(), forms_.end(),
                       [&](const std::string& f) { return contains_ignoring_case(text, f); });
  }

private:
  static std::string json_escaped(std::string_view utf8) {
    std::string out;
    auto append_unit = [&](unsigned unit) { // REQUIRES: unit <= 0xFFFF
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += hex[(unit >> shift) & 0xF];
    };
    for (std::size_t pos = 0; pos < utf8.size();) {
      const char32_t c = next_code_point(utf8, pos);
      if (c < 0x80) {
        out += static_cast<char>(c);
      } else if (c <= 0xFFFF) {
        append_unit(static_cast<unsigned>(c));
      } else {
        const unsigned v = static_cast<unsigned>(c) - 0x10000;
        append_unit(0xD800 + (v >> 10));
        append_unit(0xDC00 + (v & 0x3FF));
      }
    }
    return out;
  }

  std::vector<std::string> forms_;
};

const phrase_set& long_context_phrases() {
  static const phrase_set set{"long context", "long-context", "long_context", "extra usage",
                              "extra_usage"};
  return set;
}

const phrase_set& quota_phrases() {
  static const phrase_set set{"insufficient_quota", "exceeded your current quota",
                              "insufficient balance", "insufficient_balance",
                              "insufficient credits", "credit balance is too low",
                              "arrearage", "余额不足", "欠费"};
  return set;
}

const phrase_set& unsupported_parameter_phrases() {
  static const phrase_set set{"unsupported parameter", "unsupported_parameter",
                              "unsupported value", "unsupported_value",
                              "unrecognized request argument", "unknown parameter",
                              "unknown_parameter", "extra inputs are not permitted",
                              "extra_forbidden", "不支持的参数", "不支持该参数"};
  return set;
}

const phrase_set& output_parameter_phrases() {
  static const phrase_set set{"max_tokens", "max_completion_tokens", "max_output_tokens",
                              "max_new_tokens", "maxoutputtokens", "max output tokens",
                              "output tokens", "completion tokens", "requested output",
                              "最大输出"};
  return set;
}

const phrase_set& does_not_fit_phrases() {
  static const phrase_set set{"too large", "too big", "exceed", "at most", "range of",
                              "maximum allowed", "must be less", "must be <=", "greater than",
                              "larger than", "less than or equal", "超出", "超过", "范围"};
  return set;
}

const phrase_set& overflow_phrases() {
  static const phrase_set set{
    "context length", "context_length", "maximum context", "context window",
    "context_window", "contextwindowexceeded", "context limit", "context size",
    "prompt is too long", "prompt too long", "maximum prompt length", "too many tokens",
    "too many input tokens", "input is too long", "input too long", "input length",
    "input tokens exceed", "input token count", "exceeded model token limit",
    "reduce the length of the messages",
    "超过最大长度", "超出最大长度", "上下文长度", "上下文窗口", "最大上下文", "输入长度", "超长"};
  return set;
}

llm_error_kind classify_client_error(std::string_view body) {
  if (unsupported_parameter_phrases().found_in(body)) return llm_error_kind::unsupported_parameter;
  if (output_parameter_phrases().found_in(body) && does_not_fit_phrases().found_in(body))
    return llm_error_kind::output_too_large;
  if (overflow_phrases().found_in(body)) return llm_error_kind::context_overflow;
  return llm_error_kind::bad_request;
}

} // namespace

llm_error_kind classify_http_answer(int status, std::string_view body) {
  body = body.substr(0, std::min(body.size(), max_classified_body_bytes));
  if (status >= 200 && status <= 299) return llm_error_kind::none;
  if (status < 200 || status > 599) return llm_error_kind::malformed;
  if (status <= 399) return llm_error_kind::bad_request;
  if (status == 413) return llm_error_kind::payload_too_large;
  if (status == 429) {
    if (long_context_phrases().found_in(body)) return llm_error_kind::long_context_rate_limit;
    if (quota_phrases().found_in(body)) return llm_error_kind::quota;
    return llm_error_kind::rate_limited;
  }
  if (status == 401 || status == 403) return llm_error_kind::auth;
  if (status == 402 || quota_phrases().found_in(body)) return llm_error_kind::quota;
  if (status <= 499) return classify_client_error(body);
  if (overflow_phrases().found_in(body)) return llm_error_kind::context_overflow;
  return llm_error_kind::server_error;
}

} // namespace mneme
