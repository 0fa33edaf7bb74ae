// What a summary kept (issue 45): the identifiers of the rows a compaction replaced,
// and how many of them the summary still contains. The compaction log records the two
// counts (identifiers_in, identifiers_kept); the retry below compression.min_retention
// (policies/retention_retry.hpp) names the missing ones to the summarizer.
//
// Pure functions on text: no clock, no I/O, no exceptions (allocation aside); any
// thread. Any bytes are accepted (invalid UTF-8 decodes to U+FFFD and is never part
// of an identifier).
//
// What an identifier is (rules in the order they run; an identifier found twice, by
// one rule or two, counts once — the first rule names its kind):
//   1. code       the text of an inline code span `...` (1..200 bytes, one line), and
//                 the command of a line starting with "$ " inside a fenced block
//                 (```); a fenced block is otherwise not one identifier (no summary
//                 keeps a block verbatim): rules 3-5 still run over its lines.
//   2. quoted     1..80 bytes on one line between “ ”, 「 」, 『 』, 《 》, 【 】 or
//                 ASCII double quotes; an ASCII-quoted text followed by ':' is a JSON
//                 key and is skipped (tool results would flood the count with keys).
//                 Single quotes are not used: apostrophes ("don't") make them ambiguous.
//   3. url        a word holding "scheme://" (scheme of ASCII letters, digits, + - .).
//   4. path       a word with '/' or '\' that starts with / ./ ../ ~/ or a drive
//                 ("C:\"), or holds two separators, or whose last segment has an
//                 extension ("src/main.cpp"; "and/or" and "1/2" are not paths); and a
//                 file name without a directory: a stem of 2+ characters of
//                 [A-Za-z0-9_-] and an extension starting with a letter
//                 ("mneme.yaml"; "e.g" is not one).
//   5. number     a number with a unit, glued or one space apart ("120ms", "120 ms",
//                 "3.5 GB", "85%", "200k tokens"); kept under either spelling. Units:
//                 ns us µs ms s sec secs seconds min mins minutes h hr hours d days
//                 B KB MB GB TB KiB MiB GiB TiB bytes % tokens rows px k.
//   6. id         an issue number ("#123"), or a word of [A-Za-z0-9_.:-] of 3+ bytes
//                 that mixes letters and digits ("E0425", "req_7f3a9", "v1.2.3",
//                 a UUID or commit hash; not an ordinal such as "21st"), or holds an
//                 underscore between letters ("max_tokens", "ERR_CONN_RESET"), or is
//                 camelCase ("getUserById": a lower-case letter then an upper-case
//                 one inside the word).
//   7. cjk_name   CJK proper nouns, without a dictionary: a run of 3+ katakana
//                 (loanwords and foreign names: "データベース", "トヨタ"; ー included),
//                 and a Han run ending in an organisation or place suffix (公司 集团
//                 银行 大学 学院 医院 研究所 研究院 委员会 市 省 县 区 镇 村 路 街 站
//                 港 山 河 湖 寺), taken with up to 6 Han characters before the suffix
//                 and cut after the last function character (的 在 和 与 是 了 把 被 从
//                 到 对 向 给 为 于 及 去 来 就 也 都 很 这 那 个 一 些 我 你 他 她 它 们
//                 有 没 不); a one-character suffix needs 2 characters before it ("城市"
//                 is a word, "北京市" a name). "我在北京市工作" → "北京市". Names in CJK
//                 quotes are rule 2. Hangul is not covered.
// Words (rules 3-6) are the text split at whitespace and at CJK characters, with
// leading ( [ { < " ' ` * “ ‘ 「 and trailing . , ; : ! ? ) ] } > ( [ " ' ` * ” ’ 」
// stripped.
//
// When a summary keeps an identifier: its text occurs in the summary (ASCII letters
// compared case-insensitively, every other byte exactly); a number also counts under
// its other spelling ("120ms" for "120 ms" and back).
//
// Invariants: identifiers_kept <= identifiers_in; identifiers_in <= max_identifiers;
// the result depends only on the texts, not on their order beyond first appearance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace mneme {

enum class identifier_kind : unsigned char { code, quoted, url, path, number, id, cjk_name };

const char* to_string(identifier_kind k);
std::ostream& operator<<(std::ostream& os, identifier_kind k);

struct identifier {
  identifier_kind kind = identifier_kind::id;
  std::string text;
};

// At most this many identifiers are taken from one set of texts (the first ones).
inline constexpr std::size_t max_identifiers = 4096;

// The identifiers of `texts`, each once, in order of first appearance.
std::vector<identifier> extract_identifiers(const std::vector<std::string_view>& texts);
std::vector<identifier> extract_identifiers(std::string_view text);

// True when `summary` keeps `id` (see above).
bool summary_keeps(std::string_view summary, const identifier& id);

struct identifier_retention {
  int64_t identifiers_in = 0;
  int64_t identifiers_kept = 0;
  std::vector<identifier> missing; // in order of first appearance
  // kept / in; 1 when there was nothing to keep.
  double ratio() const {
    return identifiers_in == 0 ? 1.0
                               : static_cast<double>(identifiers_kept)
                                   / static_cast<double>(identifiers_in);
  }
};

// How many of `in` (extract_identifiers of the replaced rows) `summary` keeps.
identifier_retention retention_of(const std::vector<identifier>& in, std::string_view summary);

// The two counts of `summary` against the texts it replaced.
int64_t identifiers_in(const std::vector<std::string_view>& replaced);
int64_t identifiers_kept(const std::vector<std::string_view>& replaced, std::string_view summary);

} // namespace mneme
