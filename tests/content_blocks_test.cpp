// Tests of the content-block policy (policies/content_blocks.hpp): what the Anthropic
// door does with each block type for each upstream, and the "[TYPE] {JSON}" row form
// that keeps a block in a text row and gives it back, in order, beside the text.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "policies/content_blocks.hpp"

BOOST_AUTO_TEST_SUITE(content_blocks_test)

using namespace mneme;

namespace {

struct block_case {
  const char* type;
  block_place place;
  bool messages_api;
  block_action want;
};

} // namespace

BOOST_AUTO_TEST_CASE(every_block_type_has_one_action_per_upstream_and_place) {
  const std::vector<block_case> cases{
    // An upstream speaking the Messages API takes every block, known or not.
    {"image", block_place::user, true, block_action::pass},
    {"document", block_place::user, true, block_action::pass},
    {"search_result", block_place::tool_result, true, block_action::pass},
    {"thinking", block_place::assistant, true, block_action::pass},
    {"redacted_thinking", block_place::assistant, true, block_action::pass},
    {"server_tool_use", block_place::assistant, true, block_action::pass},
    {"web_search_tool_result", block_place::assistant, true, block_action::pass},
    {"brand_new_block", block_place::user, true, block_action::pass},
    // An OpenAI-compatible upstream: images of a user message become image_url parts,
    // thinking of an assistant message is dropped, the rest is refused.
    {"image", block_place::user, false, block_action::image_part},
    {"image", block_place::tool_result, false, block_action::refuse},
    {"image", block_place::assistant, false, block_action::refuse},
    {"thinking", block_place::assistant, false, block_action::drop},
    {"redacted_thinking", block_place::assistant, false, block_action::drop},
    {"thinking", block_place::user, false, block_action::refuse},
    {"document", block_place::user, false, block_action::refuse},
    {"search_result", block_place::tool_result, false, block_action::refuse},
    {"server_tool_use", block_place::assistant, false, block_action::refuse},
    {"web_search_tool_result", block_place::assistant, false, block_action::refuse},
    {"brand_new_block", block_place::user, false, block_action::refuse},
  };
  for (const auto& c : cases)
    BOOST_TEST(to_string(anthropic_block_action(c.type, c.place, c.messages_api))
                 == to_string(c.want),
               c.type << " place " << static_cast<int>(c.place) << " messages_api "
                      << c.messages_api);
}

BOOST_AUTO_TEST_CASE(block_lines_and_text_lines_split_back_in_their_order) {
  std::string img = R"({"type":"image","source":{"type":"url","url":"https://x/a.png"}})";
  std::string doc = R"({"type":"document","source":{"type":"text","data":"a\nb"}})";
  std::string content = "look at this\nand this\n" + block_line("image", img) + "\nbetween\n"
                        + block_line("document", doc);
  BOOST_TEST(has_block_lines(content));
  auto pieces = split_block_lines(content);
  BOOST_REQUIRE(pieces.size() == 4u);
  BOOST_TEST(!pieces[0].block);
  BOOST_TEST(pieces[0].text == "look at this\nand this");
  BOOST_TEST(pieces[1].block);
  BOOST_TEST(pieces[1].type == "image");
  BOOST_TEST(pieces[1].text == img);
  BOOST_TEST(pieces[2].text == "between");
  BOOST_TEST(pieces[3].type == "document");
  BOOST_TEST(pieces[3].text == doc);
}

BOOST_AUTO_TEST_CASE(text_that_only_looks_like_a_block_stays_text) {
  for (std::string text : {"[image]", "[image] not json", "[Image] {\"type\":\"image\"}",
                           "[] {}", "[image]{\"a\":1}", "plain words", ""}) {
    BOOST_TEST(!has_block_lines(text), text);
    auto pieces = split_block_lines(text);
    BOOST_REQUIRE(pieces.size() == 1u);
    BOOST_TEST(!pieces[0].block);
    BOOST_TEST(pieces[0].text == text);
  }
}

BOOST_AUTO_TEST_CASE(a_row_of_one_block_is_that_block_alone) {
  auto line = block_line("redacted_thinking", R"({"type":"redacted_thinking","data":"x"})");
  BOOST_TEST(line == R"([redacted_thinking] {"type":"redacted_thinking","data":"x"})");
  auto pieces = split_block_lines(line);
  BOOST_REQUIRE(pieces.size() == 1u);
  BOOST_TEST(pieces[0].block);
  BOOST_TEST(pieces[0].type == "redacted_thinking");
}

BOOST_AUTO_TEST_SUITE_END()
