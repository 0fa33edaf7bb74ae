// The streamed-answer reader (actors/llm/sse_answer.hpp) on data: a stream fed in any
// split assembles to the answer parse_chat_answer makes of the same answer whole; the
// pieces handed on concatenate to the stored content; tool calls assemble from their
// fragments; usage on a last chunk; \r\n endings, comments and multi-line data; a cut
// stream, an error event and a malformed event fail with their kinds; reasoning blocks
// never reach the client, whatever the split.
#include <boost/test/unit_test.hpp>

#include <memory>
#include <string>
#include <vector>

#include "actors/llm/sse_answer.hpp"
#include "tests/recording_stream.hpp"

BOOST_AUTO_TEST_SUITE(sse_answer_test)

using namespace mneme;
using namespace mneme::llm;

namespace {

std::string sse_chunk(const std::string& delta_json, const std::string& finish = "null") {
  return "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
         "\"delta\":" + delta_json + ",\"finish_reason\":" + finish + "}]}\n\n";
}

const std::string usage_chunk =
  "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":42,\"completion_tokens\":7}}\n\n";

// A text answer with its reasoning inline, usage on its own last chunk.
std::string text_stream() {
  return sse_chunk(R"({"role":"assistant","content":""})")
         + sse_chunk(R"({"content":"<thi"})") + sse_chunk(R"({"content":"nk>plan it</th"})")
         + sse_chunk(R"({"content":"ink>\n\nHello, "})") + sse_chunk(R"({"content":"数据库 < world"})")
         + sse_chunk("{}", "\"stop\"") + usage_chunk + "data: [DONE]\n\n";
}

// Two parallel calls, fragments as OpenAI sends them (interleaved).
std::string calls_stream() {
  return sse_chunk(R"({"role":"assistant","content":null})")
         + sse_chunk(R"({"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]})")
         + sse_chunk(R"({"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"read_file","arguments":""}}]})")
         + sse_chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]})")
         + sse_chunk(R"({"tool_calls":[{"index":1,"function":{"arguments":"{\"path\":\"/a\"}"}}]})")
         + sse_chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]})")
         + sse_chunk("{}", "\"tool_calls\"") + "data: [DONE]\n\n";
}

parsed_answer read_in_pieces(const std::string& stream, size_t piece,
                             std::shared_ptr<test::recording_stream> sink = nullptr) {
  sse_answer reader{sink};
  for (size_t at = 0; at < stream.size(); at += piece)
    reader.feed(std::string_view{stream}.substr(at, piece));
  return reader.finish(llm_purpose::chat);
}

std::string filtered(const std::string& text, size_t piece) {
  reasoning_filter f;
  std::string out;
  for (size_t at = 0; at < text.size(); at += piece)
    out += f.feed(std::string_view{text}.substr(at, piece));
  out += f.flush();
  // The stored text is trimmed at its end too; the pieces cannot know where the end is.
  out.erase(out.find_last_not_of(" \t\r\n") + 1);
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_text_stream_assembles_in_any_split_and_hands_on_what_is_stored) {
  for (size_t piece : {1u, 2u, 3u, 7u, 64u, 100000u}) {
    BOOST_TEST_CONTEXT("pieces of " << piece << " bytes") {
      auto sink = std::make_shared<test::recording_stream>();
      auto got = read_in_pieces(text_stream(), piece, sink);
      BOOST_REQUIRE(got.kind == llm_error_kind::none);
      BOOST_TEST(got.answer.content == "Hello, 数据库 < world");
      BOOST_TEST(got.answer.finish_reason == "stop");
      BOOST_TEST(got.answer.prompt_tokens == 42);
      BOOST_TEST(got.answer.completion_tokens == 7);
      BOOST_TEST(sink->text() == got.answer.content); // no reasoning reached the client
      BOOST_TEST(sink->relayed());
    }
  }
}

BOOST_AUTO_TEST_CASE(tool_calls_assemble_from_their_fragments_by_index) {
  for (size_t piece : {1u, 5u, 100000u}) {
    auto sink = std::make_shared<test::recording_stream>();
    auto got = read_in_pieces(calls_stream(), piece, sink);
    BOOST_REQUIRE(got.kind == llm_error_kind::none);
    BOOST_REQUIRE(got.answer.tool_calls.size() == 2u);
    BOOST_TEST(got.answer.tool_calls[0].id == "call_a");
    BOOST_TEST(got.answer.tool_calls[0].name == "get_weather");
    BOOST_TEST(got.answer.tool_calls[0].arguments == R"({"city":"Oslo"})");
    BOOST_TEST(got.answer.tool_calls[1].arguments == R"({"path":"/a"})");
    BOOST_TEST(got.answer.finish_reason == "tool_calls");
    BOOST_TEST(got.answer.content.empty());
    auto frags = sink->call_fragments();
    BOOST_REQUIRE(frags.size() == 5u);
    BOOST_TEST(frags[0].id == "call_a");
    BOOST_TEST(frags[0].name == "get_weather");
    BOOST_TEST(frags[2].index == 0u);
    BOOST_TEST(frags[2].id.empty()); // id and name on the first fragment only
    BOOST_TEST(frags[2].arguments == R"({"city":)");
  }
}

BOOST_AUTO_TEST_CASE(crlf_endings_comments_and_multi_line_data_are_read_as_sse) {
  std::string s = ": keep-alive\r\n\r\n"
                  "data: {\"choices\":[{\"delta\":\r\ndata: {\"content\":\"Hi\"}}]}\r\n\r\n"
                  "data:{\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\r\r";
  auto got = read_in_pieces(s, 1);
  BOOST_REQUIRE(got.kind == llm_error_kind::none);
  BOOST_TEST(got.answer.content == "Hi");
}

BOOST_AUTO_TEST_CASE(a_stream_cut_before_its_end_is_a_network_failure_and_no_answer) {
  auto whole = text_stream();
  auto cut = whole.substr(0, whole.find("\"stop\""));
  cut = cut.substr(0, cut.rfind("data:"));
  auto sink = std::make_shared<test::recording_stream>();
  auto got = read_in_pieces(cut, 9, sink);
  BOOST_TEST(got.kind == llm_error_kind::network);
  BOOST_TEST(got.detail.find("ended before its last event") != std::string::npos);
  BOOST_TEST(sink->relayed()); // the client saw part of it: the session must not retry
}

BOOST_AUTO_TEST_CASE(a_stream_with_a_finish_reason_but_no_done_is_complete) {
  auto whole = text_stream();
  auto got = read_in_pieces(whole.substr(0, whole.find("data: [DONE]")), 4);
  BOOST_TEST(got.kind == llm_error_kind::none);
}

BOOST_AUTO_TEST_CASE(a_string_stop_reason_in_the_finishing_chunk_is_the_stop_sequence) {
  auto stopped = sse_chunk(R"({"content":"1, 2"})")
                 + "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\","
                   "\"stop_reason\":\", 3\"}]}\n\n"
                 + "data: [DONE]\n\n";
  auto got = read_in_pieces(stopped, 5);
  BOOST_REQUIRE(got.kind == llm_error_kind::none);
  BOOST_TEST(got.answer.stop_sequence == ", 3");
  BOOST_TEST(read_in_pieces(text_stream(), 5).answer.stop_sequence.empty());
}

BOOST_AUTO_TEST_CASE(an_error_event_mid_stream_is_classified_like_an_http_error_answer) {
  auto s = sse_chunk(R"({"content":"Hel"})")
           + "data: {\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\",\"code\":429}}\n\n";
  auto got = read_in_pieces(s, 3);
  BOOST_TEST(got.kind == llm_error_kind::rate_limited);
  auto named = sse_chunk(R"({"content":"Hel"})")
               + "event: error\ndata: {\"error\":{\"message\":\"overloaded\"}}\n\n";
  BOOST_TEST(read_in_pieces(named, 100).kind == llm_error_kind::server_error);
}

BOOST_AUTO_TEST_CASE(a_malformed_event_or_an_absurd_call_index_is_malformed) {
  auto bad = sse_chunk(R"({"content":"Hel"})") + "data: {\"choices\": [{\n\n"
             + sse_chunk("{}", "\"stop\"");
  BOOST_TEST(read_in_pieces(bad, 5).kind == llm_error_kind::malformed);
  auto absurd = sse_chunk(R"({"tool_calls":[{"index":99999999,"function":{"arguments":"x"}}]})")
                + sse_chunk("{}", "\"tool_calls\"");
  BOOST_TEST(read_in_pieces(absurd, 100).kind == llm_error_kind::malformed);
}

BOOST_AUTO_TEST_CASE(a_stream_of_reasoning_only_is_an_empty_answer) {
  auto s = sse_chunk(R"({"reasoning_content":"thinking..."})") + sse_chunk("{}", "\"stop\"");
  auto got = read_in_pieces(s, 100);
  BOOST_TEST(got.kind == llm_error_kind::empty_answer);
  BOOST_TEST(got.detail.find("reasoning only") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_reasoning_filter_agrees_with_the_whole_text_stripper_in_every_split) {
  const std::vector<std::string> texts{
    "<think>a</think>Answer", "  lead <thinking>x<y</thinking> tail < 3 <b>bold</b>",
    "a <reasoning>r</reasoning>b<think>c</think>d", "no tags at all", "<think>never closed",
    "x <thin", "<<think>>z</think>>", "数据库 <think>思考</think>迁移"};
  for (const auto& t : texts)
    for (size_t piece = 1; piece <= t.size(); ++piece)
      BOOST_TEST(filtered(t, piece) == strip_reasoning_blocks(t),
                 "text '" << t << "' in pieces of " << piece);
}

BOOST_AUTO_TEST_SUITE_END() // sse_answer_test
