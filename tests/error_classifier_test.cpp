// Tests of the HTTP answer classification (SPEC §2 T6-T9): realistic error
// bodies of OpenAI, Anthropic, DeepSeek, Qwen/DashScope, Moonshot, Zhipu,
// vLLM, llama.cpp, Gemini, OpenRouter, Azure and plain proxies, written from
// the shapes these services answer with; plus the status classes, the body
// scan bound and the trigger each kind fires.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "policies/error_classifier.hpp"
#include "tests/print_vocabulary.hpp"

BOOST_AUTO_TEST_SUITE(error_classifier_test)

namespace data = boost::unit_test::data;
using namespace mneme;
using kind = llm_error_kind;

namespace {

struct answer {
  const char* source;
  int status;
  std::string body;
};

std::ostream& operator<<(std::ostream& os, const answer& a) {
  return os << a.source << " HTTP " << a.status << " " << a.body;
}

void check(const answer& a, kind want) {
  BOOST_TEST(to_string(classify_http_answer(a.status, a.body)) == to_string(want));
}

} // namespace

BOOST_DATA_TEST_CASE(
    http_413_is_payload_too_large_whatever_the_body_says,
    data::make(std::vector<answer>{
      {"anthropic", 413,
       R"({"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}})"},
      {"nginx", 413,
       "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n"
       "<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>"},
      {"proxy naming the context", 413,
       R"({"error":{"message":"This model's maximum context length is 8192 tokens."}})"},
      {"empty", 413, ""},
    }),
    a) {
  check(a, kind::payload_too_large);
}

BOOST_DATA_TEST_CASE(
    a_429_about_long_context_or_extra_usage_is_a_long_context_rate_limit,
    data::make(std::vector<answer>{
      {"anthropic extra usage", 429,
       R"({"type":"error","error":{"type":"rate_limit_error","message":"Extra usage is required for long context requests."}})"},
      {"anthropic long context tpm", 429,
       R"({"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 400,000 input tokens per minute for long context requests. Please scale down the input tokens or try again later."}})"},
      {"proxy code", 429, R"({"error":{"code":"long_context_rate_limited","message":"slow down"}})"},
    }),
    a) {
  check(a, kind::long_context_rate_limit);
}

BOOST_DATA_TEST_CASE(
    other_429s_are_ordinary_rate_limits,
    data::make(std::vector<answer>{
      {"openai tpm", 429,
       R"({"error":{"message":"Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 28000, Requested 4000. Please try again in 4s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}})"},
      {"anthropic", 429,
       R"({"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 50,000 input tokens per minute."}})"},
      {"azure", 429,
       R"({"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-02-01 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 6 seconds."}})"},
      {"dashscope", 429,
       R"({"code":"Throttling.RateQuota","message":"Requests rate limit exceeded, please try again later.","request_id":"3b1f"})"},
      {"gemini", 429,
       R"([{"error":{"code":429,"message":"Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 15","status":"RESOURCE_EXHAUSTED"}}])"},
      {"openrouter", 429, R"({"error":{"message":"Rate limit exceeded: free-models-per-day.","code":429}})"},
      {"empty", 429, ""},
    }),
    a) {
  check(a, kind::rate_limited);
}

BOOST_DATA_TEST_CASE(
    a_400_saying_the_requested_output_does_not_fit_is_output_too_large,
    data::make(std::vector<answer>{
      {"openai", 400,
       R"({"error":{"message":"max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you provided 100000.","type":"invalid_request_error","param":"max_tokens","code":"invalid_value"}})"},
      {"anthropic input plus output", 400,
       R"({"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 195000 + 16000 > 200000, decrease input length or `max_tokens` and try again"}})"},
      {"anthropic output cap", 400,
       R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 128000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-20250514"}})"},
      {"deepseek", 400,
       R"({"error":{"message":"Invalid max_tokens value, the valid range of max_tokens is [1, 8192]","type":"invalid_request_error","param":null,"code":"invalid_request_error"}})"},
      {"dashscope", 400,
       R"({"error":{"code":"invalid_parameter_error","param":null,"message":"<400> InternalError.Algo.InvalidParameter: Range of max_tokens should be [1, 8192]","type":"invalid_request_error"}})"},
      {"vllm", 400,
       R"({"object":"error","message":"'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum context length is 32768 tokens and your request has 30000 input tokens (4096 > 32768 - 30000).","type":"BadRequestError","param":null,"code":400})"},
      {"tgi", 422,
       R"({"error":"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 8000 `inputs` tokens and 500 `max_new_tokens`","error_type":"validation"})"},
    }),
    a) {
  check(a, kind::output_too_large);
}

BOOST_DATA_TEST_CASE(
    overflow_phrases_in_a_4xx_or_5xx_body_are_a_context_overflow,
    data::make(std::vector<answer>{
      {"openai", 400,
       R"({"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130542 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})"},
      {"openai with completion", 400,
       R"({"error":{"message":"This model's maximum context length is 16385 tokens. However, you requested 20000 tokens (16000 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})"},
      {"openai configured limit", 400,
       R"({"error":{"message":"Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 290000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})"},
      {"anthropic", 400,
       R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}})"},
      {"deepseek", 400,
       R"({"error":{"message":"This model's maximum context length is 65536 tokens. However, you requested 72000 tokens (64000 in the messages, 8000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}})"},
      {"dashscope", 400,
       R"({"error":{"code":"invalid_parameter_error","param":null,"message":"<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 129024]","type":"invalid_request_error"},"id":"chatcmpl-1","request_id":"1"})"},
      {"chinese provider", 400, R"({"code":"InvalidParameter","message":"输入长度超过最大长度限制"})"},
      {"chinese provider context", 400, R"({"error":{"message":"请求的上下文长度超过模型限制","code":"10007"}})"},
      {"chinese escaped", 400,
       R"({"error":{"message":"\u8f93\u5165\u957f\u5ea6\u8d85\u8fc7\u6700\u5927\u957f\u5ea6"}})"},
      {"chinese escaped upper hex", 400, R"({"message":"\u4E0A\u4E0B\u6587\u957F\u5EA6 > 32768"})"},
      {"zhipu", 400, R"({"error":{"code":"1261","message":"Prompt 超长"}})"},
      {"moonshot", 400,
       R"({"error":{"message":"Invalid request: Your request exceeded model token limit: 131072","type":"invalid_request_error"}})"},
      {"vllm", 400,
       R"({"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 33000 tokens (30000 in the messages, 3000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400})"},
      {"llama.cpp", 400,
       R"({"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}})"},
      {"gemini", 400,
       R"([{"error":{"code":400,"message":"The input token count (1500000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}])"},
      {"openrouter", 400,
       R"({"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens (132000 of text input, 8000 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400}})"},
      {"azure", 400,
       R"({"error":{"message":"This model's maximum context length is 8192 tokens, however you requested 9000 tokens (7000 in your prompt; 2000 for the completion). Please reduce your prompt; or completion length.","type":"invalid_request_error","param":null,"code":"context_length_exceeded"}})"},
      {"mistral", 400,
       R"({"object":"error","message":"Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_error","param":null,"code":null})"},
      {"upper case", 400, R"({"error":"PROMPT IS TOO LONG"})"},
      {"422 too many tokens", 422, R"({"detail":"Too many tokens in the request"})"},
      {"openrouter upstream wrapped in 502", 502,
       R"({"error":{"message":"Provider returned error","code":502,"metadata":{"raw":"{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 210000 tokens > 200000 maximum\"}}","provider_name":"Anthropic"}}})"},
      {"litellm proxy 500", 500,
       R"({"error":{"message":"litellm.ContextWindowExceededError: litellm.BadRequestError: context window exceeded","type":null,"param":null,"code":"500"}})"},
      {"503 context window", 503, R"({"error":"input exceeds the context window of this deployment"})"},
    }),
    a) {
  check(a, kind::context_overflow);
}

BOOST_DATA_TEST_CASE(
    an_unsupported_parameter_is_never_an_overflow_even_when_it_names_max_tokens,
    data::make(std::vector<answer>{
      {"openai max_tokens", 400,
       R"({"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}})"},
      {"openai temperature value", 400,
       R"({"error":{"message":"Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}})"},
      {"openai unknown", 400,
       R"({"error":{"message":"Unknown parameter: 'reasoning_budget'.","type":"invalid_request_error","param":"reasoning_budget","code":"unknown_parameter"}})"},
      {"azure", 400,
       R"({"error":{"message":"Unrecognized request argument supplied: max_completion_tokens","type":"invalid_request_error","param":null,"code":null}})"},
      {"vllm pydantic", 400,
       R"({"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'max_output_tokens'), 'msg': 'Extra inputs are not permitted', 'input': 4096}]","type":"BadRequestError","param":null,"code":400})"},
      {"mentions the context too", 400,
       R"({"error":{"message":"Unsupported parameter: 'max_tokens' exceeds what this model's context length allows; use 'max_completion_tokens'.","code":"unsupported_parameter"}})"},
    }),
    a) {
  check(a, kind::unsupported_parameter);
}

BOOST_DATA_TEST_CASE(
    rejected_credentials_are_auth_errors,
    data::make(std::vector<answer>{
      {"openai", 401,
       R"({"error":{"message":"Incorrect API key provided: sk-abc***. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}})"},
      {"anthropic", 403,
       R"({"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}})"},
      {"azure", 401,
       R"({"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint."}})"},
      {"context words do not matter", 401, R"({"error":"context length unknown for anonymous users"})"},
    }),
    a) {
  check(a, kind::auth);
}

BOOST_DATA_TEST_CASE(
    payment_required_or_an_exhausted_balance_is_a_quota_error,
    data::make(std::vector<answer>{
      {"openai 429 insufficient_quota", 429,
       R"({"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}})"},
      {"deepseek", 402,
       R"({"error":{"message":"Insufficient Balance","type":"unknown_error","param":null,"code":"invalid_request_error"}})"},
      {"openrouter", 402,
       R"({"error":{"message":"Insufficient credits. Add more using https://openrouter.ai/settings/credits","code":402}})"},
      {"anthropic", 400,
       R"({"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}})"},
      {"dashscope", 400,
       R"({"code":"Arrearage","message":"Access denied, please make sure your account is in good standing.","request_id":"7c2e"})"},
      {"chinese provider", 400, R"({"error":{"message":"账户余额不足，请充值后重试"}})"},
      {"402 empty", 402, ""},
    }),
    a) {
  check(a, kind::quota);
}

BOOST_DATA_TEST_CASE(
    other_5xx_answers_are_server_errors,
    data::make(std::vector<answer>{
      {"openai", 500,
       R"({"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}})"},
      {"openai overloaded", 503,
       R"({"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}})"},
      {"anthropic overloaded", 529, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"},
      {"deepseek", 503, R"({"error":{"message":"Server overloaded, please try again later.","type":"server_error"}})"},
      {"go gateway timeout", 504, "upstream request failed: context deadline exceeded"},
      {"go gateway canceled", 502, R"({"error":"context canceled"})"},
      {"nginx", 502,
       "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
       "<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>"},
      {"vllm oom", 500,
       R"({"object":"error","message":"CUDA out of memory. Tried to allocate 2.00 GiB","type":"InternalServerError","param":null,"code":500})"},
      {"empty", 599, ""},
    }),
    a) {
  check(a, kind::server_error);
}

BOOST_DATA_TEST_CASE(
    other_4xx_answers_are_bad_requests,
    data::make(std::vector<answer>{
      {"openai model", 404,
       R"({"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}})"},
      {"openai schema", 400,
       R"({"error":{"message":"Invalid 'messages[3].tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.","type":"invalid_request_error","param":"messages[3].tool_calls","code":"empty_array"}})"},
      {"openai tool pairing", 400,
       R"({"error":{"message":"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.","type":"invalid_request_error","param":"messages.[4].role","code":null}})"},
      {"max_tokens of the wrong type", 400,
       R"({"error":{"message":"Invalid type for 'max_tokens': expected an integer, but got a string instead.","code":"invalid_type"}})"},
      {"azure content filter", 400,
       R"({"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400}})"},
      {"deepseek body", 422,
       "Failed to deserialize the JSON body into the target type: messages[0]: missing field `role` at line 1 column 30"},
      {"openrouter timeout", 408, R"({"error":{"message":"Request timed out","code":408}})"},
      {"vllm model", 404,
       R"({"object":"error","message":"The model `llama` does not exist.","type":"NotFoundError","param":null,"code":404})"},
      {"empty", 400, ""},
    }),
    a) {
  check(a, kind::bad_request);
}

BOOST_DATA_TEST_CASE(
    status_classes_decide_when_no_body_rule_applies,
    data::make({200, 201, 204, 299, 301, 302, 304, 399, 100, 101, 199, 0, -1, 600, 999})
        ^ data::make({kind::none, kind::none, kind::none, kind::none, kind::bad_request,
                      kind::bad_request, kind::bad_request, kind::bad_request, kind::malformed,
                      kind::malformed, kind::malformed, kind::malformed, kind::malformed,
                      kind::malformed, kind::malformed}),
    status, want) {
  // A 2xx is a success even when its body looks like an overflow error: the
  // client reads error objects inside 2xx bodies itself.
  const std::string body = R"({"error":{"message":"prompt is too long"}})";
  BOOST_TEST(to_string(classify_http_answer(status, body)) == to_string(want));
}

BOOST_AUTO_TEST_CASE(only_the_first_64_kib_of_a_body_are_examined) {
  BOOST_TEST(max_classified_body_bytes == 65536u);
  const std::string phrase = "context length";
  std::string inside(max_classified_body_bytes - phrase.size(), ' ');
  BOOST_TEST(to_string(classify_http_answer(400, inside + phrase))
             == to_string(kind::context_overflow));
  std::string beyond(max_classified_body_bytes - phrase.size() + 1, ' ');
  BOOST_TEST(to_string(classify_http_answer(400, beyond + phrase))
             == to_string(kind::bad_request));
}

BOOST_AUTO_TEST_CASE(random_binary_bodies_classify_by_status_without_crashing) {
  std::mt19937 gen{413429};
  std::uniform_int_distribution<int> byte{0, 255};
  for (int round = 0; round < 500; ++round) {
    std::string body(static_cast<std::size_t>(round * 7 % 300), '\0');
    for (auto& c : body) c = static_cast<char>(byte(gen));
    BOOST_REQUIRE(classify_http_answer(500, body) == kind::server_error);
    BOOST_REQUIRE(classify_http_answer(413, body) == kind::payload_too_large);
    BOOST_REQUIRE(classify_http_answer(200, body) == kind::none);
  }
}

BOOST_DATA_TEST_CASE(
    only_the_four_error_kinds_of_t6_to_t9_fire_a_trigger,
    data::make({kind::payload_too_large, kind::long_context_rate_limit, kind::output_too_large,
                kind::context_overflow, kind::none, kind::rate_limited,
                kind::unsupported_parameter, kind::auth, kind::quota, kind::server_error,
                kind::bad_request, kind::malformed, kind::empty_answer, kind::refused,
                kind::idle_timeout, kind::total_timeout, kind::network})
        ^ data::make({trigger::t6_payload_too_large, trigger::t7_long_context_rate_limit,
                      trigger::t8_output_too_large, trigger::t9_context_overflow,
                      trigger::none, trigger::none, trigger::none, trigger::none,
                      trigger::none, trigger::none, trigger::none, trigger::none,
                      trigger::none, trigger::none, trigger::none, trigger::none,
                      trigger::none}),
    k, want) {
  BOOST_TEST(to_string(error_trigger(k)) == to_string(want));
}

BOOST_AUTO_TEST_SUITE_END() // error_classifier_test
