// The recall columns of a PostgreSQL message row; see pg_search_columns.hpp.
#include "store/pg/pg_search_columns.hpp"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "policies/cjk_bigram.hpp"
#include "policies/utf8.hpp"
#include "store/word_tokens.hpp"

namespace mneme {

namespace {

// A tsvector holds at most 256 positions per lexeme, each at most 16383.
constexpr std::size_t pg_max_positions = 256;
constexpr std::uint16_t pg_max_position = 16383;

struct lexeme_sink {
  std::unordered_map<std::string, std::vector<std::uint16_t>> lexemes;
  std::uint16_t position = 0;
  std::size_t literal_bytes = 0; // an upper bound of the literal written so far
};

int add_lexeme(void* ctx, std::string_view token, std::size_t, std::size_t, bigram_token_kind) {
  auto& s = *static_cast<lexeme_sink*>(ctx);
  // Later tokens than the last position keep that position.
  s.position = s.position < pg_max_position ? s.position + 1 : pg_max_position;
  if (token.size() > pg_max_lexeme_bytes)
    return 0; // PostgreSQL refuses longer lexemes: such a word is found by substring
  auto [it, added] = s.lexemes.try_emplace(std::string{token});
  auto& positions = it->second;
  // Each new lexeme: quotes, escapes (at most one per byte), ':', ' '; each position: ',' + 5 digits.
  auto grows = (added ? 2 * token.size() + 4 : 0) + 6;
  if (s.literal_bytes + grows > pg_words_max_literal_bytes) {
    if (added)
      s.lexemes.erase(it);
    return 1; // stop tokenizing
  }
  if (positions.size() < pg_max_positions
      && (positions.empty() || positions.back() != s.position)) {
    positions.push_back(s.position);
    s.literal_bytes += grows;
  }
  return 0;
}

// The tsvector literal of the tokens `tokenize` gives `content`.
std::string literal_of(std::string_view content,
                       int (*tokenize)(std::string_view, void*, bigram_token_sink)) {
  lexeme_sink sink;
  tokenize(content, &sink, add_lexeme);
  // PostgreSQL's order (byte-wise, as std::string compares) with ascending positions:
  // tsvectorin then finds its input sorted and unique instead of sorting every token.
  std::vector<std::pair<const std::string*, const std::vector<std::uint16_t>*>> sorted;
  sorted.reserve(sink.lexemes.size());
  for (const auto& [lexeme, positions] : sink.lexemes)
    sorted.emplace_back(&lexeme, &positions);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return *a.first < *b.first; });
  std::string out;
  out.reserve(sink.literal_bytes);
  for (const auto& [lexeme, positions] : sorted) {
    if (!out.empty())
      out += ' ';
    out += '\'';
    for (char c : *lexeme) {
      if (c == '\'' || c == '\\')
        out += '\\';
      out += c;
    }
    out += '\'';
    char sep = ':';
    for (auto p : *positions) {
      out += sep;
      out += std::to_string(p);
      sep = ',';
    }
  }
  return out;
}

} // namespace

std::string pg_tsvector_literal(std::string_view content) {
  return literal_of(content, tokenize_cjk_bigram);
}

std::string pg_unicode61_literal(std::string_view content) {
  return literal_of(content, tokenize_unicode61);
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
