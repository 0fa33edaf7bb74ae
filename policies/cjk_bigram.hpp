// The CJK bigram tokenizer of the recall index (SPEC §4): turns text into the tokens
// the `cjk` FTS5 index stores and its queries look up. Pure and reentrant; called
// from the SQLite tokenizer callback on any connection's thread (store/sqlite/fts_tokenizers)
// and from tests. No allocation on the hot path except the per-token fold buffer.
//
// Rules, in order of the text:
//   1. A run of CJK letters (`is_cjk_letter`: Han, kana, Hangul) becomes its
//      overlapping 2-character tokens ("我爱数据库" → 我爱 爱数 数据 据库); a run of one
//      character becomes that character.
//   2. A run of letters and digits of other scripts is one word token, folded:
//      ASCII and Latin-1/Latin Extended-A/Greek/Cyrillic upper case → lower case,
//      fullwidth ASCII (Ｕ Ｓ Ｂ １) → ASCII, halfwidth katakana → fullwidth (inside rule 1).
//      Words longer than `max_word_chars` are cut there (queries are cut the same way).
//   3. Everything else (spaces, punctuation, symbols, emoji, U+FFFD from invalid
//      bytes) separates tokens and is not indexed.
// So a Latin word glued to CJK ("修改youer服务端") yields 修改 · youer · 服务 务端, and
// "youer" finds it. Offsets are byte offsets into the input, as FTS5 expects.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mneme {

inline constexpr std::size_t max_word_chars = 64;

enum class bigram_token_kind : unsigned char { word, cjk };

// Receives one token: its folded UTF-8 text and the byte range [begin, end) of the
// source text it came from. A non-zero return stops tokenizing and is returned.
using bigram_token_sink = int (*)(void* ctx, std::string_view token, std::size_t begin,
                                  std::size_t end, bigram_token_kind kind);

// Tokenizes `text` (any bytes; invalid UTF-8 never crashes) into `sink`.
// Returns 0, or the first non-zero value the sink returned.
int tokenize_cjk_bigram(std::string_view text, void* ctx, bigram_token_sink sink);

struct bigram_token {
  std::string text;
  std::size_t begin = 0;
  std::size_t end = 0;
  bigram_token_kind kind = bigram_token_kind::word;
};

// Every token `tokenize` (this tokenizer or another with its signature) gives `text`.
std::vector<bigram_token> collect_tokens(std::string_view text,
                                         int (*tokenize)(std::string_view, void*,
                                                         bigram_token_sink));

// Convenience for tests and query planning: every token of `text`.
std::vector<bigram_token> cjk_bigram_tokens(std::string_view text);

// Folds one code point per rule 2 (case and width); CJK letters are returned as is
// except halfwidth katakana, which map to their fullwidth forms.
char32_t fold_code_point(char32_t c);

// True for the characters of rule 2 words: letters and digits outside CJK.
bool is_word_code_point(char32_t c);

} // namespace mneme
