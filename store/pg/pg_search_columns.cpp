// The recall columns of a PostgreSQL message row; see pg_search_columns.hpp.
#include "store/pg/pg_search_columns.hpp"

#include "policies/cjk_bigram.hpp"
#include "policies/utf8.hpp"
#include "store/word_tokens.hpp"

namespace mneme {

namespace {

struct literal_sink {
  std::string out;
  std::size_t position = 0;
  bool full = false;
};

int add_lexeme(void* ctx, std::string_view token, std::size_t, std::size_t, bigram_token_kind) {
  auto& s = *static_cast<literal_sink*>(ctx);
  // A tsvector position is at most 16383; later tokens keep that position.
  s.position = s.position < 16383 ? s.position + 1 : 16383;
  if (token.size() > pg_max_lexeme_bytes)
    return 0; // PostgreSQL refuses longer lexemes: such a word is found by substring
  if (s.out.size() + token.size() + 16 > pg_words_max_literal_bytes) {
    s.full = true;
    return 1; // stop tokenizing
  }
  if (!s.out.empty())
    s.out += ' ';
  s.out += '\'';
  for (char c : token) {
    if (c == '\'' || c == '\\')
      s.out += '\\';
    s.out += c;
  }
  s.out += "':";
  s.out += std::to_string(s.position);
  return 0;
}

} // namespace

std::string pg_tsvector_literal(std::string_view content) {
  literal_sink sink;
  tokenize_cjk_bigram(content, &sink, add_lexeme);
  return std::move(sink.out);
}

std::string pg_unicode61_literal(std::string_view content) {
  literal_sink sink;
  tokenize_unicode61(content, &sink, add_lexeme);
  return std::move(sink.out);
}

std::string pg_search_text(std::string_view content) {
  if (first_invalid_utf8_byte(content) == std::string_view::npos
      && content.find('\0') == std::string_view::npos)
    return std::string{content};
  std::string out;
  out.reserve(content.size());
  for (std::size_t pos = 0; pos < content.size();) {
    auto c = next_code_point(content, pos);
    append_utf8(out, c == 0 ? U' ' : c);
  }
  return out;
}

} // namespace mneme
