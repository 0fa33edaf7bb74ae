// Tests of the OpenAI door's fast body reader (apps/common/api/doors/openai_chat/
// openai_fast_body.hpp): which bodies it takes and which it leaves to the full decoder,
// and that decode_openai_chat answers every body — taken or not, valid or refused —
// exactly as the full decoder does (tests/openai_body_agreement.hpp; the fuzz target
// fuzz_openai_body checks the same on generated bodies).
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/common/api/doors/openai_chat/openai_fast_body.hpp"
#include "tests/openai_body_agreement.hpp"

BOOST_AUTO_TEST_SUITE(openai_fast_body_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

struct body_case {
  const char* what;
  std::string body;
  bool taken; // the fast reader takes it
};

std::ostream& operator<<(std::ostream& os, const body_case& c) {
  return os << c.what;
}

const std::string user_hi = R"({"role":"user","content":"hi"})";

std::string with_messages(const std::string& msgs, const std::string& more = "") {
  return R"({"model":"m",)" + more + R"("messages":[)" + msgs + "]}";
}

const body_case body_cases[] = {
  {"plain rows and the stream fields",
   with_messages(R"({"role":"system","content":"be brief"},)" + user_hi
                   + R"(,{"role":"assistant","content":"hello"})",
                 R"("stream":true,"stream_options":{"include_usage":true},"user":"alice",)"),
   true},
  {"the developer role", with_messages(R"({"role":"developer","content":"rules"},)" + user_hi),
   true},
  {"a tool round: calls with null content, a named tool row",
   with_messages(user_hi + R"(,{"role":"assistant","content":null,"tool_calls":[{"id":"c1",)"
                 R"("type":"function","index":0,"function":{"name":"ls","arguments":"{}"}}]},)"
                 R"({"role":"tool","tool_call_id":"c1","name":"ls","content":"a b"})"),
   true},
  {"the fields an SDK answer carries, holding scalars or arrays of them",
   with_messages(user_hi + R"(,{"role":"assistant","content":"x","refusal":null,)"
                 R"("annotations":[],"audio":null,"function_call":null,)"
                 R"("reasoning_content":"r"})"),
   true},
  {"ignored fields with nested arrays of scalars",
   with_messages(user_hi + R"(,{"role":"assistant","content":"x","annotations":[[1,"a"],[]],)"
                 R"("refusal":null})"),
   true},
  {"tools, sampling, metadata and SDK nulls after the messages",
   R"({"messages":[)" + user_hi + R"(],"tools":[{"type":"function","function":{"name":"ls",)"
     R"("parameters":{"type":"object","properties":{}}}}],"temperature":0.5,)"
     R"("max_completion_tokens":64,"tool_choice":null,"metadata":{"session_id":"s1"},)"
     R"("seed":7,"stop":["\n"],"n":1})",
   true},
  {"escapes and characters beyond the BMP",
   with_messages(R"({"role":"user","content":"caf\u00e9 \ud83d\ude00 \"q\" \\ \n\t\/ 数据"})"),
   true},
  {"content parts go to the full decoder",
   with_messages(R"({"role":"user","content":[{"type":"text","text":"a"},)"
                 R"({"type":"text","text":"b"}]})"),
   false},
  {"an ignored field holding an object goes to the full decoder",
   with_messages(user_hi + R"(,{"role":"assistant","content":"x","audio":{"id":"a1"}})"),
   false},
  {"a key twice in a message", with_messages(R"({"role":"user","role":"tool","content":"x"})"),
   false},
  {"a key twice at the top", with_messages(user_hi, R"("model":"n",)"), false},
  {"a key twice inside tools",
   R"({"messages":[)" + user_hi + R"(],"tools":[{"type":"function","type":"function",)"
     R"("function":{"name":"ls"}}]})",
   false},
  {"messages twice", R"({"messages":[)" + user_hi + R"(],"messages":[)" + user_hi + "]}",
   false},
  {"an unknown message field", with_messages(R"({"role":"user","content":"x","foo":1})"), false},
  {"an unknown role", with_messages(R"({"role":"robot","content":"x"})"), false},
  {"a tool row without its call id", with_messages(R"({"role":"tool","content":"x"})"), false},
  {"a call id on a user row",
   with_messages(R"({"role":"user","content":"x","tool_call_id":"c1"})"), false},
  {"an empty call id on a user row is dropped",
   with_messages(R"({"role":"user","content":"x","tool_call_id":""})"), true},
  {"an assistant row with neither content nor calls",
   with_messages(R"({"role":"assistant","content":null})"), false},
  {"a call of another type",
   with_messages(R"({"role":"assistant","tool_calls":[{"id":"c","type":"web",)"
                 R"("function":{"name":"f"}}]})"),
   false},
  {"a call without a function name",
   with_messages(R"({"role":"assistant","tool_calls":[{"id":"c","function":{}}]})"), false},
  {"a null name on a user row", with_messages(R"({"role":"user","content":"x","name":null})"),
   false},
  {"a number for content", with_messages(R"({"role":"user","content":7})"), false},
  {"empty messages", R"({"messages":[]})", false},
  {"messages not an array", R"({"messages":{"role":"user"}})", false},
  {"no messages", R"({"model":"m"})", false},
  {"a top-level array", "[" + user_hi + "]", false},
  {"cut off", with_messages(user_hi).substr(0, 30), false},
  {"trailing bytes", with_messages(user_hi) + " x", false},
  {"invalid UTF-8", with_messages(R"({"role":"user","content":"a)" + std::string{"\xff"} + "\"}"),
   false},
  {"a refused field after good messages (n = 2)", with_messages(user_hi, R"("n":2,)"), true},
  {"n = 1 written as a double is refused as nlohmann types it",
   with_messages(user_hi, R"("n":1.0,)"), true},
  {"numbers forwarded with nlohmann's types: unsigned, signed, double, beyond int64",
   with_messages(user_hi, R"("temperature":1,"top_p":1.0,"seed":-3,)"
                          R"("max_tokens":18446744073709551615,"logit_bias":{"50256":-100,)"
                          R"("7":1e-2},"presence_penalty":-0.5,)"),
   true},
  {"-0 forwarded is 0 (simdjson's int64, nlohmann's signed integer: equal everywhere)",
   with_messages(user_hi, R"("seed":-0,)"), true},
  {"-0.0 forwarded", with_messages(user_hi, R"("seed":-0.0,"temperature":-0.0,)"), true},
  {"a number beyond a double goes to the full decoder",
   with_messages(user_hi, R"("temperature":1e400,)"), false},
  {"an integer beyond uint64 goes to the full decoder",
   with_messages(user_hi, R"("seed":184467440737095516150,)"), false},
  {"escaped keys are the keys they spell",
   with_messages(R"({"r\u006fle":"user","content":"x"})", R"("stre\u0061m":true,)"), true},
  {"nesting deeper than 1,024 levels in a forwarded field",
   with_messages(user_hi,
                 R"("metadata":)" + std::string(1100, '[') + std::string(1100, ']') + ","),
   false},
  {"a bad stream flag after good messages", with_messages(user_hi, R"("stream":"yes",)"), true},
};

} // namespace

BOOST_DATA_TEST_CASE(the_door_answers_every_body_as_the_full_decoder_does,
                     data::make(body_cases), c) {
  auto seen = test::openai_body_agreement(c.body);
  BOOST_TEST(seen.taken == c.taken);
  BOOST_TEST(seen.agrees);
}

BOOST_AUTO_TEST_CASE(a_long_transcript_is_read_by_the_fast_reader_row_for_row) {
  nlohmann::json body{{"model", "m"}, {"stream", true}};
  auto& msgs = body["messages"];
  for (int i = 0; i < 200; ++i) {
    if (i % 4 == 1) {
      msgs.push_back({{"role", "assistant"}, {"content", nullptr},
                      {"tool_calls", {{{"id", "c" + std::to_string(i)}, {"type", "function"},
                                       {"function", {{"name", "grep"},
                                                     {"arguments", R"({"q":"x"})"}}}}}}});
      msgs.push_back({{"role", "tool"}, {"tool_call_id", "c" + std::to_string(i)},
                      {"content", "line " + std::to_string(i)}});
    } else {
      msgs.push_back({{"role", i % 2 ? "assistant" : "user"},
                      {"content", "row " + std::to_string(i)}});
    }
  }
  auto text = body.dump();
  auto fast = api::fast_openai_body(text);
  BOOST_REQUIRE(fast.has_value());
  BOOST_TEST(fast->messages.size() == msgs.size());
  BOOST_TEST(fast->messages[1].tool_calls.at(0).arguments == R"({"q":"x"})");
  BOOST_TEST(fast->messages[2].tool_call_id == "c1");
  BOOST_TEST(!fast->rest.contains("messages")); // the rows are not kept twice
  BOOST_TEST(fast->rest["stream"] == true);
  auto seen = test::openai_body_agreement(text);
  BOOST_TEST(seen.taken);
  BOOST_TEST(seen.agrees);
}

BOOST_AUTO_TEST_SUITE_END() // openai_fast_body_test
