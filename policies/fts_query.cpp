// Recall query sanitizing and routing; see fts_query.hpp.
#include "policies/fts_query.hpp"

#include "policies/cjk_bigram.hpp"
#include "policies/utf8.hpp"
#include "policies/utf8_cut.hpp"

namespace mneme {

namespace {

bool is_space(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
         || c == 0x3000 || c == 0xA0;
}

// A lexical item of the user's text: a bare word or a quoted phrase.
struct lexeme {
  std::string text;   // cleaned: valid UTF-8, no control characters
  bool quoted = false;
};

// Splits `raw` into lexemes: quoted phrases (an unbalanced quote runs to the end)
// and whitespace-separated words. Invalid UTF-8 and control characters are dropped.
std::vector<lexeme> lex(std::string_view raw) {
  std::vector<lexeme> out;
  std::size_t pos = 0;
  lexeme cur;
  bool in_word = false;
  auto flush = [&] {
    if (!cur.text.empty() || cur.quoted)
      out.push_back(std::move(cur));
    cur = lexeme{};
    in_word = false;
  };
  while (pos < raw.size()) {
    char32_t c = next_code_point(raw, pos);
    if (c == replacement_character || c < 0x20 || c == 0x7F) {
      if (cur.quoted || !in_word)
        continue;
      flush();
      continue;
    }
    if (cur.quoted) {
      if (c == '"') flush();
      else append_utf8(cur.text, c);
      continue;
    }
    if (c == '"') {
      flush();
      cur.quoted = true;
      continue;
    }
    if (is_space(c)) {
      if (in_word) flush();
      continue;
    }
    in_word = true;
    append_utf8(cur.text, c);
  }
  flush();
  return out;
}

// Characters of `text` that an index would keep (words and CJK letters).
struct term_shape {
  std::size_t chars = 0;
  bool has_cjk = false;
};

term_shape shape_of(std::string_view text) {
  term_shape s;
  std::size_t pos = 0;
  while (pos < text.size()) {
    char32_t c = next_code_point(text, pos);
    if (is_cjk_letter(c)) {
      s.has_cjk = true;
      ++s.chars;
    } else if (is_word_code_point(c)) {
      ++s.chars;
    }
  }
  return s;
}

std::string cut(std::string text, std::size_t max_bytes) {
  text.resize(utf8_prefix_length(text, max_bytes));
  return text;
}

void quote_into(std::string& out, std::string_view text) {
  out.push_back('"');
  for (char ch : text) {
    if (ch == '"') out.push_back('"');
    out.push_back(ch);
  }
  out.push_back('"');
}

} // namespace

bool parsed_query::has_positive_clause() const {
  for (auto& c : clauses)
    if (!c.negated) return true;
  return false;
}

bool parsed_query::has_cjk() const {
  for (auto& c : clauses)
    for (auto& t : c.any_of)
      if (t.has_cjk && !c.negated) return true;
  return false;
}

bool parsed_query::all_terms_at_least(std::size_t n) const {
  for (auto& c : clauses)
    if (!c.negated)
      for (auto& t : c.any_of)
        if (t.chars < n) return false;
  return has_positive_clause();
}

parsed_query parse_user_query(std::string_view raw) {
  parsed_query q;
  if (raw.size() > max_query_bytes) {
    q.truncated = true;
    raw = utf8_prefix(raw, max_query_bytes);
  }
  std::size_t terms = 0;
  bool pending_or = false;
  bool pending_not = false;
  for (auto& lx : lex(raw)) {
    if (!lx.quoted && lx.text == "OR") {
      pending_or = !q.clauses.empty();
      continue;
    }
    if (!lx.quoted && lx.text == "NOT") {
      pending_not = true;
      pending_or = false;
      continue;
    }
    if (!lx.quoted && lx.text == "AND")
      continue;
    query_term t;
    t.phrase = lx.quoted;
    std::string text = std::move(lx.text);
    if (!lx.quoted) {
      // Trailing stars mark a prefix; a lone "*" is nothing.
      while (!text.empty() && text.back() == '*') {
        text.pop_back();
        t.prefix = true;
      }
    }
    text = cut(std::move(text), max_term_bytes);
    auto shape = shape_of(text);
    if (shape.chars == 0) { // nothing an index could match: drop, keep operators sane
      pending_or = pending_or && !q.clauses.empty();
      continue;
    }
    if (terms == max_terms) {
      q.truncated = true;
      break;
    }
    ++terms;
    t.text = std::move(text);
    t.chars = shape.chars;
    t.has_cjk = shape.has_cjk;
    if (pending_or && !q.clauses.back().negated && !pending_not) {
      q.clauses.back().any_of.push_back(std::move(t));
    } else {
      query_clause c;
      c.negated = pending_not;
      c.any_of.push_back(std::move(t));
      q.clauses.push_back(std::move(c));
    }
    pending_or = false;
    pending_not = false;
  }
  return q;
}

std::string to_fts5_match(const parsed_query& q, match_dialect dialect) {
  if (!q.has_positive_clause())
    return {};
  auto render_clause = [&](std::string& out, const query_clause& c) {
    bool group = c.any_of.size() > 1;
    if (group) out.push_back('(');
    for (std::size_t i = 0; i < c.any_of.size(); ++i) {
      if (i > 0) out += " OR ";
      quote_into(out, c.any_of[i].text);
      if (c.any_of[i].prefix && dialect == match_dialect::word)
        out += " *";
    }
    if (group) out.push_back(')');
  };
  std::string out;
  for (auto& c : q.clauses) {
    if (c.negated) continue;
    if (!out.empty()) out += " AND ";
    render_clause(out, c);
  }
  for (auto& c : q.clauses) {
    if (!c.negated) continue;
    out += " NOT ";
    render_clause(out, c);
  }
  return out;
}

std::string_view to_string(recall_route r) {
  switch (r) {
    case recall_route::unicode61: return "unicode61";
    case recall_route::cjk_bigram: return "cjk_bigram";
    case recall_route::trigram: return "trigram";
    case recall_route::substring_scan: return "substring_scan";
  }
  return "unknown";
}

std::vector<recall_route> plan_routes(const parsed_query& q) {
  std::vector<recall_route> routes;
  if (!q.has_positive_clause())
    return routes;
  if (!q.has_cjk())
    routes.push_back(recall_route::unicode61);
  routes.push_back(recall_route::cjk_bigram);
  if (q.all_terms_at_least(3))
    routes.push_back(recall_route::trigram);
  routes.push_back(recall_route::substring_scan);
  return routes;
}

std::string like_pattern(std::string_view term) {
  std::string out = "%";
  for (char ch : term) {
    if (ch == '%' || ch == '_' || ch == '\\') out.push_back('\\');
    out.push_back(ch);
  }
  out.push_back('%');
  return out;
}

} // namespace mneme
