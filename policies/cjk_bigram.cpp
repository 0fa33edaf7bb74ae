// CJK bigram tokenizer; see cjk_bigram.hpp for the rules.
#include "policies/cjk_bigram.hpp"

#include <array>

#include "policies/utf8.hpp"

namespace mneme {

namespace {

// Halfwidth katakana U+FF66..U+FF9D to their fullwidth forms (voicing marks U+FF9E/F
// stay separators' neighbours: they map to the combining-free spacing marks).
constexpr std::array<char16_t, 0xFF9F - 0xFF66 + 1> halfwidth_katakana = {
  0x30F2, 0x30A1, 0x30A3, 0x30A5, 0x30A7, 0x30A9, 0x30E3, 0x30E5, 0x30E7, 0x30C3, // FF66-FF6F
  0x30FC, 0x30A2, 0x30A4, 0x30A6, 0x30A8, 0x30AA, 0x30AB, 0x30AD, 0x30AF, 0x30B1, // FF70-FF79
  0x30B3, 0x30B5, 0x30B7, 0x30B9, 0x30BB, 0x30BD, 0x30BF, 0x30C1, 0x30C4, 0x30C6, // FF7A-FF83
  0x30C8, 0x30CA, 0x30CB, 0x30CC, 0x30CD, 0x30CE, 0x30CF, 0x30D2, 0x30D5, 0x30D8, // FF84-FF8D
  0x30DB, 0x30DE, 0x30DF, 0x30E0, 0x30E1, 0x30E2, 0x30E4, 0x30E6, 0x30E8, 0x30E9, // FF8E-FF97
  0x30EA, 0x30EB, 0x30EC, 0x30ED, 0x30EF, 0x30F3, 0x309B, 0x309C,                 // FF98-FF9F
};

enum class char_class { separator, word, cjk };

char_class classify(char32_t c) {
  if (c < 0x80) {
    bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    return alnum ? char_class::word : char_class::separator;
  }
  if (is_cjk_letter(c))
    return char_class::cjk;
  return is_word_code_point(c) ? char_class::word : char_class::separator;
}

struct decoded {
  char32_t folded;
  std::size_t begin;
  std::size_t end;
};

} // namespace

bool is_word_code_point(char32_t c) {
  if (c < 0x80)
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  if (c >= 0xC0 && c <= 0x24F) return c != 0xD7 && c != 0xF7; // Latin-1 letters, Ext-A/B
  if (c >= 0x370 && c <= 0x3FF) return c != 0x37E && c != 0x387; // Greek
  if (c >= 0x400 && c <= 0x52F) return true;                       // Cyrillic
  if (c >= 0xFF10 && c <= 0xFF19) return true;                     // fullwidth digits
  if ((c >= 0xFF21 && c <= 0xFF3A) || (c >= 0xFF41 && c <= 0xFF5A)) return true;
  return false;
}

char32_t fold_code_point(char32_t c) {
  if (c < 0x80)
    return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if (c >= 0xFF01 && c <= 0xFF5E)                 // fullwidth ASCII → ASCII
    return fold_code_point(c - 0xFEE0);
  if (c >= 0xFF66 && c <= 0xFF9F)
    return halfwidth_katakana[c - 0xFF66];
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7))     // Latin-1 upper
    return c + 32;
  if (c == 0x178)                                // Ÿ
    return 0xFF;
  if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149
      && c != 0x17F) {                           // Latin Extended-A pairs
    bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (odd_upper) return (c % 2 == 1) ? c + 1 : c;
    return (c % 2 == 0) ? c + 1 : c;
  }
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2)    // Greek upper
    return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;   // Cyrillic upper
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

int tokenize_cjk_bigram(std::string_view text, void* ctx, bigram_token_sink sink) {
  std::string buf;
  std::size_t pos = 0;
  // One code point of look-behind inside a CJK run: the first half of the next bigram.
  decoded prev_cjk{0, 0, 0};
  bool in_cjk_run = false;
  bool emitted_in_run = false;
  auto end_cjk_run = [&]() -> int {
    int rc = 0;
    if (in_cjk_run && !emitted_in_run) { // a run of one character: the character itself
      buf.clear();
      append_utf8(buf, prev_cjk.folded);
      rc = sink(ctx, buf, prev_cjk.begin, prev_cjk.end, bigram_token_kind::cjk);
    }
    in_cjk_run = false;
    emitted_in_run = false;
    return rc;
  };
  while (pos < text.size()) {
    std::size_t begin = pos;
    char32_t c = next_code_point(text, pos);
    char_class cls = classify(c);
    if (cls == char_class::cjk) {
      decoded cur{fold_code_point(c), begin, pos};
      if (in_cjk_run) {
        buf.clear();
        append_utf8(buf, prev_cjk.folded);
        append_utf8(buf, cur.folded);
        if (int rc = sink(ctx, buf, prev_cjk.begin, cur.end, bigram_token_kind::cjk))
          return rc;
        emitted_in_run = true;
      }
      in_cjk_run = true;
      prev_cjk = cur;
      continue;
    }
    if (int rc = end_cjk_run())
      return rc;
    if (cls == char_class::separator)
      continue;
    // A word: consume letters/digits until a separator or a CJK letter.
    buf.clear();
    append_utf8(buf, fold_code_point(c));
    std::size_t chars = 1;
    std::size_t word_end = pos;
    while (pos < text.size()) {
      std::size_t next = pos;
      char32_t d = next_code_point(text, next);
      if (classify(d) != char_class::word)
        break;
      if (chars < max_word_chars)
        append_utf8(buf, fold_code_point(d));
      ++chars;
      pos = next;
      word_end = next;
    }
    if (int rc = sink(ctx, buf, begin, word_end, bigram_token_kind::word))
      return rc;
  }
  return end_cjk_run();
}

std::vector<bigram_token> collect_tokens(std::string_view text,
                                         int (*tokenize)(std::string_view, void*,
                                                         bigram_token_sink)) {
  std::vector<bigram_token> out;
  tokenize(text, &out,
           [](void* ctx, std::string_view tok, std::size_t b, std::size_t e,
              bigram_token_kind kind) {
             static_cast<std::vector<bigram_token>*>(ctx)->push_back(
               bigram_token{std::string{tok}, b, e, kind});
             return 0;
           });
  return out;
}

std::vector<bigram_token> cjk_bigram_tokens(std::string_view text) {
  return collect_tokens(text, tokenize_cjk_bigram);
}

} // namespace mneme
