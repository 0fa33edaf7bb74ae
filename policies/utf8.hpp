// Safe UTF-8 decoding, CJK classification and case-insensitive search for the
// pure policies (token estimate, truncation, CJK bigram tokenizing, model-name
// and error-body matching). Standard library only, no
// allocation, no exceptions; every function is a pure function of its
// arguments and may be called from any thread.
//
// Decoding contract: text is a byte string that SHOULD be UTF-8 but may be
// anything. A well-formed sequence (Unicode 15, Table 3-7: no overlongs, no
// surrogates, nothing above U+10FFFF) decodes to its code point; any other
// byte decodes to U+FFFD and consumes exactly that one byte, so every invalid
// byte counts as one character and decoding always makes progress.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mneme {

inline constexpr char32_t replacement_character = 0xFFFD;

// Decodes the code point starting at byte `pos` and advances `pos` past it
// (by 1 to 4 bytes; by exactly 1 on an invalid byte, returning U+FFFD).
// REQUIRES: pos < text.size()
inline char32_t next_code_point(std::string_view text, std::size_t& pos) {
  assert(pos < text.size());
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char b0 = byte(pos);
  if (b0 < 0x80) {
    ++pos;
    return b0;
  }
  std::size_t len = 0;
  char32_t cp = 0;
  unsigned char lo = 0x80, hi = 0xBF; // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2; cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3; cp = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;      // no overlongs
    else if (b0 == 0xED) hi = 0x9F; // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4; cp = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;      // no overlongs
    else if (b0 == 0xF4) hi = 0x8F; // nothing above U+10FFFF
  } else {
    ++pos; // stray continuation byte, C0/C1 or F5..FF
    return replacement_character;
  }
  if (text.size() - pos < len) {
    ++pos;
    return replacement_character;
  }
  for (std::size_t i = 1; i < len; ++i) {
    const unsigned char b = byte(pos + i);
    const unsigned char min = i == 1 ? lo : 0x80;
    const unsigned char max = i == 1 ? hi : 0xBF;
    if (b < min || b > max) {
      ++pos;
      return replacement_character;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  pos += len;
  return cp;
}

// The offset of the first byte that is not part of a well-formed sequence, or
// std::string_view::npos when all of `text` is well-formed UTF-8.
// (An invalid byte decodes to U+FFFD consuming one byte; an encoded U+FFFD takes three.)
inline std::size_t first_invalid_utf8_byte(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t at = pos;
    if (next_code_point(text, pos) == replacement_character && pos - at == 1)
      return at;
  }
  return std::string_view::npos;
}

// Han (unified ideographs, extensions A-I, compatibility ideographs, radicals,
// strokes), kana (incl. halfwidth), Hangul (syllables, jamo, halfwidth) and
// Bopomofo: the characters that are words or syllables of a CJK script. A CJK
// bigram tokenizer groups runs of these.
inline bool is_cjk_letter(char32_t c) {
  if (c < 0x1100) return false; // fast path: ASCII, Latin, Greek, Cyrillic, ...
  return (c >= 0x1100 && c <= 0x11FF)      // Hangul Jamo
         || (c >= 0x2E80 && c <= 0x2FDF)   // CJK radicals supplement, Kangxi radicals
         || (c >= 0x3040 && c <= 0x30FF)   // Hiragana, Katakana
         || (c >= 0x3100 && c <= 0x31FF)   // Bopomofo, Hangul compat. jamo, Kanbun, strokes, kana ext.
         || (c >= 0x3400 && c <= 0x4DBF)   // Han extension A
         || (c >= 0x4E00 && c <= 0x9FFF)   // Han unified ideographs
         || (c >= 0xA960 && c <= 0xA97F)   // Hangul Jamo extended-A
         || (c >= 0xAC00 && c <= 0xD7FF)   // Hangul syllables, Jamo extended-B
         || (c >= 0xF900 && c <= 0xFAFF)   // CJK compatibility ideographs
         || (c >= 0xFF66 && c <= 0xFFDC)   // halfwidth Katakana and Hangul
         || (c >= 0x1AFF0 && c <= 0x1B16F) // kana extended/supplement, small kana
         || (c >= 0x20000 && c <= 0x2FA1F) // Han extensions B-F, I, compat. supplement
         || (c >= 0x30000 && c <= 0x3347F);// Han extensions G, H, J
}

// Every character that counts as one token in the estimate (SPEC §2): the CJK
// letters above plus CJK punctuation and symbols (U+3000-303F, enclosed and
// compatibility blocks), ideographic description characters, vertical and
// compatibility forms, and the halfwidth/fullwidth forms block.
inline bool is_cjk_code_point(char32_t c) {
  if (c < 0x1100) return false;
  return is_cjk_letter(c)
         || (c >= 0x2FF0 && c <= 0x303F)   // ideographic description, CJK symbols & punctuation
         || (c >= 0x3200 && c <= 0x33FF)   // enclosed CJK letters, CJK compatibility
         || (c >= 0xFE10 && c <= 0xFE1F)   // vertical forms
         || (c >= 0xFE30 && c <= 0xFE4F)   // CJK compatibility forms
         || (c >= 0xFF00 && c <= 0xFFEF);  // halfwidth and fullwidth forms
}

// Appends the UTF-8 encoding of `c` to `out`.
// REQUIRES: c <= U+10FFFF and c is not a surrogate.
inline void append_utf8(std::string& out, char32_t c) {
  assert(c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF));
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// Number of code points in `text` under the decoding contract above.
std::size_t count_code_points(std::string_view text);

// Byte offset at which code point number `index` (0-based) starts; the size of
// `text` when it has `index` code points or fewer. Cutting at this offset never
// splits a well-formed sequence.
std::size_t byte_offset_of_code_point(std::string_view text, std::size_t index);

// True when `needle` occurs in `haystack` with ASCII letters compared
// case-insensitively; every other byte (UTF-8 included) compares exactly.
// An empty needle occurs everywhere.
bool contains_ignoring_case(std::string_view haystack, std::string_view needle);

} // namespace mneme
