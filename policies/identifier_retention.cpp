// What a summary kept; see identifier_retention.hpp for the rules.
#include "policies/identifier_retention.hpp"

#include <array>
#include <cctype>
#include <unordered_set>

#include "policies/utf8.hpp"

namespace mneme {

namespace {

constexpr std::size_t max_code_bytes = 200;
constexpr std::size_t max_quoted_bytes = 80;
constexpr std::size_t max_word_bytes = 200;
constexpr std::size_t max_han_before_suffix = 6;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}
bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_space(s.back()))
    s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// Collects identifiers once each, up to max_identifiers.
struct collector {
  std::vector<identifier> out;
  std::unordered_set<std::string> seen;

  bool full() const { return out.size() >= max_identifiers; }
  void add(identifier_kind kind, std::string_view text) {
    if (text.empty() || full())
      return;
    std::string s{text};
    if (!seen.insert(s).second)
      return;
    out.push_back(identifier{kind, std::move(s)});
  }
};

// --- rule 1: code spans and commands of fenced blocks

void inline_code(std::string_view line, collector& c) {
  std::size_t i = 0;
  while (i < line.size()) {
    auto open = line.find('`', i);
    if (open == std::string_view::npos)
      return;
    auto run = open;
    while (run < line.size() && line[run] == '`')
      ++run;
    const std::string_view fence = line.substr(open, run - open);
    auto close = line.find(fence, run);
    if (close == std::string_view::npos)
      return;
    auto inner = trim(line.substr(run, close - run));
    if (!inner.empty() && inner.size() <= max_code_bytes)
      c.add(identifier_kind::code, inner);
    i = close + fence.size();
  }
}

// --- rule 2: quoted names

struct quote_pair {
  std::string_view open, close;
};
constexpr std::array<quote_pair, 5> unicode_quotes{{
  {"\u201C", "\u201D"}, {"\u300C", "\u300D"}, {"\u300E", "\u300F"},
  {"\u300A", "\u300B"}, {"\u3010", "\u3011"},
}};

void quoted(std::string_view line, collector& c) {
  for (const auto& q : unicode_quotes) {
    std::size_t i = 0;
    while ((i = line.find(q.open, i)) != std::string_view::npos) {
      auto from = i + q.open.size();
      auto to = line.find(q.close, from);
      if (to == std::string_view::npos)
        break;
      auto inner = trim(line.substr(from, to - from));
      if (!inner.empty() && inner.size() <= max_quoted_bytes)
        c.add(identifier_kind::quoted, inner);
      i = to + q.close.size();
    }
  }
  std::size_t i = 0;
  while ((i = line.find('"', i)) != std::string_view::npos) {
    auto to = line.find('"', i + 1);
    if (to == std::string_view::npos)
      return;
    auto after = to + 1;
    while (after < line.size() && is_space(line[after]))
      ++after;
    const bool json_key = after < line.size() && line[after] == ':';
    auto inner = trim(line.substr(i + 1, to - i - 1));
    if (!json_key && !inner.empty() && inner.size() <= max_quoted_bytes)
      c.add(identifier_kind::quoted, inner);
    i = to + 1;
  }
}

// --- words: rules 3-6

constexpr std::array<std::string_view, 11> leading_marks{
  {"(", "[", "{", "<", "\"", "'", "`", "\u201C", "\u2018", "\u300C", "*"}};
constexpr std::array<std::string_view, 19> trailing_marks{
  {".", ",", ";", ":", "!", "?", ")", "]", "}", ">", "(", "[", "\"", "'", "`", "\u201D",
   "\u2019", "\u300D", "*"}};

std::string_view strip_marks(std::string_view w) {
  for (bool again = true; again && !w.empty();) {
    again = false;
    for (auto m : leading_marks)
      if (starts_with(w, m)) {
        w.remove_prefix(m.size());
        again = true;
      }
    for (auto m : trailing_marks)
      if (ends_with(w, m)) {
        w.remove_suffix(m.size());
        again = true;
      }
  }
  return w;
}

// The words of a line: split at whitespace and at CJK characters, marks stripped.
std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t start = std::string_view::npos;
  auto close = [&](std::size_t end) {
    if (start != std::string_view::npos) {
      auto w = strip_marks(line.substr(start, end - start));
      if (!w.empty() && w.size() <= max_word_bytes)
        words.push_back(w);
      start = std::string_view::npos;
    }
  };
  std::size_t pos = 0;
  while (pos < line.size()) {
    const std::size_t at = pos;
    const char32_t cp = next_code_point(line, pos);
    const bool separator = (cp < 0x80 && is_space(static_cast<char>(cp)))
                           || is_cjk_code_point(cp) || cp == replacement_character
                           || cp == 0x3001 || cp == 0x3002;
    if (separator)
      close(at);
    else if (start == std::string_view::npos)
      start = at;
  }
  close(line.size());
  return words;
}

bool url(std::string_view w, collector& c) {
  auto sep = w.find("://");
  if (sep == std::string_view::npos || sep == 0)
    return false;
  auto begin = sep;
  while (begin > 0) {
    char ch = w[begin - 1];
    if (!(is_alnum(ch) || ch == '+' || ch == '-' || ch == '.'))
      break;
    --begin;
  }
  if (begin == sep || !is_alpha(w[begin]) || sep + 3 >= w.size())
    return false;
  c.add(identifier_kind::url, w.substr(begin));
  return true;
}

bool path_byte(char ch) {
  return is_alnum(ch) || static_cast<unsigned char>(ch) >= 0x80
         || std::string_view{"_./\\~:@+=-%,"}.find(ch) != std::string_view::npos;
}

// "name.ext": a stem of 2+ [A-Za-z0-9_.-] with a letter, an extension of 1..10 letters
// and digits starting with a letter.
bool has_extension(std::string_view seg, std::size_t min_stem) {
  auto dot = seg.rfind('.');
  if (dot == std::string_view::npos || dot < min_stem || dot + 1 >= seg.size())
    return false;
  auto ext = seg.substr(dot + 1);
  if (ext.size() > 10 || !is_alpha(ext.front()))
    return false;
  for (char ch : ext)
    if (!is_alnum(ch))
      return false;
  return true;
}

bool file_name(std::string_view w) {
  if (!has_extension(w, 2))
    return false;
  bool letter = false;
  for (char ch : w.substr(0, w.rfind('.'))) {
    if (!(is_alnum(ch) || ch == '_' || ch == '-' || ch == '.'))
      return false;
    letter = letter || is_alpha(ch);
  }
  return letter;
}

bool path(std::string_view w, collector& c) {
  std::size_t separators = 0;
  bool alnum = false, only_digits = true;
  for (char ch : w) {
    if (!path_byte(ch))
      return false;
    if (ch == '/' || ch == '\\')
      ++separators;
    else if (is_alnum(ch) || static_cast<unsigned char>(ch) >= 0x80) {
      alnum = true;
      only_digits = only_digits && is_digit(ch);
    }
  }
  if (separators == 0) {
    if (!file_name(w))
      return false;
    c.add(identifier_kind::path, w);
    return true;
  }
  if (!alnum || only_digits)
    return false;
  const bool rooted = starts_with(w, "/") || starts_with(w, "./") || starts_with(w, "../")
                      || starts_with(w, "~/")
                      || (w.size() > 2 && is_alpha(w[0]) && w[1] == ':' && w[2] == '\\');
  auto last = w.substr(w.find_last_of("/\\") + 1);
  if (!(rooted || separators >= 2 || has_extension(last, 1)))
    return false;
  c.add(identifier_kind::path, w);
  return true;
}

constexpr std::array<std::string_view, 35> units{
  {"ns", "us", "\u00B5s", "ms", "s", "sec", "secs", "seconds", "min", "mins", "minutes",
   "h", "hr", "hours", "d", "days", "B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB",
   "TiB", "kb", "mb", "gb", "bytes", "%", "tokens", "rows", "px", "k", "K"}};

bool is_unit(std::string_view s) {
  for (auto u : units)
    if (s == u)
      return true;
  return false;
}

// The length of the number at the start of `w` (digits, with . or , between digits).
std::size_t number_prefix(std::string_view w) {
  std::size_t i = 0;
  while (i < w.size() && is_digit(w[i]))
    ++i;
  if (i == 0)
    return 0;
  while (i + 1 < w.size() && (w[i] == '.' || w[i] == ',') && is_digit(w[i + 1])) {
    ++i;
    while (i < w.size() && is_digit(w[i]))
      ++i;
  }
  return i;
}

std::string number_text(std::string_view num, std::string_view unit) {
  std::string s{num};
  if (unit != "%")
    s += ' ';
  s += unit;
  return s;
}

// A number with a unit glued to it, or with the next word as its unit (then `used_next`).
bool number(std::string_view w, std::string_view next, bool& used_next, collector& c) {
  used_next = false;
  auto n = number_prefix(w);
  if (n == 0)
    return false;
  auto rest = w.substr(n);
  if (!rest.empty()) {
    if (!is_unit(rest))
      return false;
    c.add(identifier_kind::number, number_text(w.substr(0, n), rest));
    return true;
  }
  if (!is_unit(next))
    return false;
  used_next = true;
  c.add(identifier_kind::number, number_text(w, next));
  return true;
}

bool ordinal_or_multiplier(std::string_view w) {
  auto n = number_prefix(w);
  if (n == 0)
    return false;
  auto rest = w.substr(n);
  return rest == "st" || rest == "nd" || rest == "rd" || rest == "th" || rest == "x";
}

bool id(std::string_view w, collector& c) {
  if (w.size() >= 2 && w[0] == '#') {
    bool digits = true;
    for (char ch : w.substr(1))
      digits = digits && is_digit(ch);
    if (digits) {
      c.add(identifier_kind::id, w);
      return true;
    }
  }
  if (w.size() < 3)
    return false;
  bool letter = false, digit = false, underscore_between = false, camel = false;
  for (std::size_t i = 0; i < w.size(); ++i) {
    char ch = w[i];
    if (!(is_alnum(ch) || ch == '_' || ch == '.' || ch == ':' || ch == '-'))
      return false;
    letter = letter || is_alpha(ch);
    digit = digit || is_digit(ch);
    if (ch == '_' && i > 0 && i + 1 < w.size() && is_alnum(w[i - 1]) && is_alnum(w[i + 1]))
      underscore_between = true;
    if (i > 0 && is_lower(w[i - 1]) && is_upper(ch))
      camel = true;
  }
  const bool mixed = letter && digit && !ordinal_or_multiplier(w);
  if (!(mixed || (underscore_between && letter) || camel))
    return false;
  c.add(identifier_kind::id, w);
  return true;
}

void word_rules(std::string_view line, collector& c) {
  auto words = words_of(line);
  for (std::size_t i = 0; i < words.size() && !c.full(); ++i) {
    auto w = words[i];
    auto next = i + 1 < words.size() ? words[i + 1] : std::string_view{};
    bool used_next = false;
    if (url(w, c) || path(w, c))
      continue;
    if (number(w, next, used_next, c)) {
      i += used_next ? 1 : 0;
      continue;
    }
    id(w, c);
  }
}

// --- rule 7: CJK proper nouns

bool is_katakana(char32_t cp) {
  return (cp >= 0x30A1 && cp <= 0x30FF) || (cp >= 0xFF66 && cp <= 0xFF9F);
}
bool is_han(char32_t cp) {
  return (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF)
         || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x3347F);
}

constexpr std::u32string_view han_suffixes[] = {
  U"研究所", U"研究院", U"委员会", U"公司", U"集团", U"银行", U"大学", U"学院", U"医院",
  U"市", U"省", U"县", U"区", U"镇", U"村", U"路", U"街", U"站", U"港", U"山", U"河",
  U"湖", U"寺"};
constexpr std::u32string_view function_chars =
  U"的在和与是了把被从到对向给为于及去来就也都很这那个一些我你他她它们有没不";

struct cjk_char {
  char32_t cp;
  std::size_t begin, end; // bytes of the line
};

void han_names(std::string_view line, const std::vector<cjk_char>& run, collector& c) {
  std::size_t floor = 0; // a name never reaches back over an earlier one
  for (std::size_t p = 0; p < run.size(); ++p) {
    for (auto suffix : han_suffixes) {
      if (p + suffix.size() > run.size())
        continue;
      bool match = true;
      for (std::size_t k = 0; k < suffix.size() && match; ++k)
        match = run[p + k].cp == suffix[k];
      if (!match)
        continue;
      std::size_t start = p > floor + max_han_before_suffix ? p - max_han_before_suffix : floor;
      for (std::size_t k = start; k < p; ++k)
        if (function_chars.find(run[k].cp) != std::u32string_view::npos)
          start = k + 1;
      const std::size_t need = suffix.size() == 1 ? 2 : 1;
      if (p - start >= need) {
        auto end = p + suffix.size();
        c.add(identifier_kind::cjk_name,
              line.substr(run[start].begin, run[end - 1].end - run[start].begin));
        floor = end;
        p = end - 1;
      }
      break;
    }
  }
}

void cjk_rules(std::string_view line, collector& c) {
  std::vector<cjk_char> katakana, han;
  auto flush_katakana = [&] {
    bool only_marks = true;
    for (auto& k : katakana)
      only_marks = only_marks && (k.cp == 0x30FC || k.cp == 0x30FB);
    if (katakana.size() >= 3 && !only_marks)
      c.add(identifier_kind::cjk_name,
            line.substr(katakana.front().begin, katakana.back().end - katakana.front().begin));
    katakana.clear();
  };
  auto flush_han = [&] {
    han_names(line, han, c);
    han.clear();
  };
  std::size_t pos = 0;
  while (pos < line.size()) {
    const std::size_t at = pos;
    const char32_t cp = next_code_point(line, pos);
    cjk_char ch{cp, at, pos};
    if (is_katakana(cp))
      katakana.push_back(ch);
    else
      flush_katakana();
    if (is_han(cp))
      han.push_back(ch);
    else
      flush_han();
  }
  flush_katakana();
  flush_han();
}

void extract_into(std::string_view text, collector& c) {
  bool fenced = false;
  std::size_t start = 0;
  while (start <= text.size() && !c.full()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos)
      end = text.size();
    auto line = text.substr(start, end - start);
    auto trimmed = trim(line);
    if (starts_with(trimmed, "```")) {
      fenced = !fenced;
    } else {
      if (fenced) {
        if (starts_with(trimmed, "$ "))
          c.add(identifier_kind::code, trim(trimmed.substr(2)).substr(0, max_code_bytes));
      } else {
        inline_code(line, c);
        quoted(line, c);
      }
      word_rules(line, c);
      cjk_rules(line, c);
    }
    start = end + 1;
  }
}

// "120 ms" <-> "120ms", "85%" <-> "85 %".
std::string other_spelling(const std::string& number) {
  auto space = number.find(' ');
  if (space != std::string::npos)
    return number.substr(0, space) + number.substr(space + 1);
  auto n = number_prefix(number);
  return number.substr(0, n) + " " + number.substr(n);
}

} // namespace

const char* to_string(identifier_kind k) {
  switch (k) {
    case identifier_kind::code: return "code";
    case identifier_kind::quoted: return "quoted";
    case identifier_kind::url: return "url";
    case identifier_kind::path: return "path";
    case identifier_kind::number: return "number";
    case identifier_kind::id: return "id";
    case identifier_kind::cjk_name: return "cjk_name";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, identifier_kind k) { return os << to_string(k); }

std::vector<identifier> extract_identifiers(const std::vector<std::string_view>& texts) {
  collector c;
  for (auto t : texts)
    extract_into(t, c);
  return std::move(c.out);
}

std::vector<identifier> extract_identifiers(std::string_view text) {
  return extract_identifiers(std::vector<std::string_view>{text});
}

bool summary_keeps(std::string_view summary, const identifier& id) {
  if (contains_ignoring_case(summary, id.text))
    return true;
  return id.kind == identifier_kind::number
         && contains_ignoring_case(summary, other_spelling(id.text));
}

identifier_retention retention_of(const std::vector<identifier>& in, std::string_view summary) {
  identifier_retention r;
  r.identifiers_in = static_cast<int64_t>(in.size());
  for (const auto& id : in) {
    if (summary_keeps(summary, id))
      ++r.identifiers_kept;
    else
      r.missing.push_back(id);
  }
  return r;
}

int64_t identifiers_in(const std::vector<std::string_view>& replaced) {
  return static_cast<int64_t>(extract_identifiers(replaced).size());
}

int64_t identifiers_kept(const std::vector<std::string_view>& replaced,
                         std::string_view summary) {
  return retention_of(extract_identifiers(replaced), summary).identifiers_kept;
}

} // namespace mneme
