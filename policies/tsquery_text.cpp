// A parsed recall query as tsquery text; see tsquery_text.hpp.
#include "policies/tsquery_text.hpp"

#include "policies/cjk_bigram.hpp"

namespace mneme {

namespace {

void quote_lexeme(std::string& out, const std::string& token) {
  out += '\'';
  for (char c : token) {
    if (c == '\'' || c == '\\')
      out += '\\';
    out += c;
  }
  out += '\'';
}

// One term as a lexeme or a phrase of lexemes; "" when it has no token.
std::string term_text(const query_term& t) {
  auto tokens = cjk_bigram_tokens(t.text);
  std::string out;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0)
      out += " <-> ";
    quote_lexeme(out, tokens[i].text);
    if (t.prefix && i + 1 == tokens.size())
      out += ":*";
  }
  return tokens.size() > 1 ? "(" + out + ")" : out;
}

// The clause's alternatives OR-ed, in parentheses; "" when none has a token.
std::string clause_text(const query_clause& c) {
  std::string out;
  for (const auto& t : c.any_of) {
    auto term = term_text(t);
    if (term.empty())
      continue;
    if (!out.empty())
      out += " | ";
    out += term;
  }
  return out.empty() ? out : "(" + out + ")";
}

} // namespace

std::string to_pg_tsquery(const parsed_query& q) {
  std::string positive;
  std::string negative;
  for (const auto& c : q.clauses) {
    auto text = clause_text(c);
    if (text.empty())
      continue;
    auto& side = c.negated ? negative : positive;
    if (!side.empty())
      side += " & ";
    side += c.negated ? "!" + text : text;
  }
  if (positive.empty())
    return {};
  return negative.empty() ? positive : positive + " & " + negative;
}

} // namespace mneme
