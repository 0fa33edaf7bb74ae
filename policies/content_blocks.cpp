// Content blocks in text rows; see content_blocks.hpp.
#include "policies/content_blocks.hpp"

namespace mneme {

std::string_view to_string(block_action a) {
  switch (a) {
    case block_action::pass: return "pass";
    case block_action::image_part: return "image_part";
    case block_action::drop: return "drop";
    case block_action::refuse: return "refuse";
  }
  return "unknown";
}

block_action anthropic_block_action(std::string_view type, block_place place,
                                    bool upstream_messages_api) {
  if (upstream_messages_api)
    return block_action::pass;
  if (type == "image" && place == block_place::user)
    return block_action::image_part;
  if ((type == "thinking" || type == "redacted_thinking") && place == block_place::assistant)
    return block_action::drop;
  return block_action::refuse;
}

std::string block_line(std::string_view type, std::string_view json) {
  std::string out;
  out.reserve(type.size() + json.size() + 3);
  out += '[';
  out += type;
  out += "] ";
  out += json;
  return out;
}

namespace {

bool type_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// The TYPE of a block line, "" when `line` is not one.
std::string_view block_type_of(std::string_view line) {
  if (line.size() < 6 || line.front() != '[' || line.back() != '}')
    return {};
  size_t close = 1;
  while (close < line.size() && type_char(line[close]))
    ++close;
  if (close == 1 || close + 2 >= line.size() || line[close] != ']' || line[close + 1] != ' '
      || line[close + 2] != '{')
    return {};
  return line.substr(1, close - 1);
}

} // namespace

bool has_block_lines(std::string_view content) {
  size_t at = 0;
  while (at <= content.size()) {
    auto end = content.find('\n', at);
    auto line = content.substr(at, end == std::string_view::npos ? std::string_view::npos
                                                                 : end - at);
    if (!block_type_of(line).empty())
      return true;
    if (end == std::string_view::npos)
      break;
    at = end + 1;
  }
  return false;
}

std::vector<content_piece> split_block_lines(std::string_view content) {
  std::vector<content_piece> out;
  bool open_text = false; // the last piece is text that takes more lines
  size_t at = 0;
  while (true) {
    auto end = content.find('\n', at);
    auto line = content.substr(at, end == std::string_view::npos ? std::string_view::npos
                                                                 : end - at);
    auto type = block_type_of(line);
    if (!type.empty()) {
      content_piece p;
      p.block = true;
      p.type = std::string{type};
      p.text = std::string{line.substr(type.size() + 3)};
      out.push_back(std::move(p));
      open_text = false;
    } else if (open_text) {
      out.back().text += '\n';
      out.back().text += line;
    } else {
      content_piece p;
      p.text = std::string{line};
      out.push_back(std::move(p));
      open_text = true;
    }
    if (end == std::string_view::npos)
      break;
    at = end + 1;
  }
  return out;
}

} // namespace mneme
