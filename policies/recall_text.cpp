// Text handling shared by the recall backends; see recall_text.hpp.
#include "policies/recall_text.hpp"

#include <algorithm>

#include "policies/utf8_cut.hpp"

namespace mneme {

namespace {

std::size_t find_term(const std::string& hay_lower, const query_term& t) {
  return hay_lower.find(ascii_lower(t.text));
}

bool clause_matches(const std::string& hay_lower, const query_clause& c) {
  for (auto& t : c.any_of)
    if (find_term(hay_lower, t) != std::string::npos) return true;
  return false;
}

void quote_lexeme(std::string& out, std::string_view token) {
  out += '\'';
  for (char c : token) {
    if (c == '\'' || c == '\\')
      out += '\\';
    out += c;
  }
  out += '\'';
}

bool token_matches(const std::string& doc_token, const match_phrase& p, std::size_t i) {
  const auto& want = p.tokens[i];
  if (p.prefix && i + 1 == p.tokens.size())
    return doc_token.compare(0, want.size(), want) == 0;
  return doc_token == want;
}

bool phrase_at(const std::vector<bigram_token>& doc, std::size_t at, const match_phrase& p) {
  if (at + p.tokens.size() > doc.size())
    return false;
  for (std::size_t i = 0; i < p.tokens.size(); ++i)
    if (!token_matches(doc[at + i].text, p, i))
      return false;
  return true;
}

struct span {
  std::size_t first; // token indexes, inclusive
  std::size_t last;
  std::size_t phrase;
};

} // namespace

std::string ascii_lower(std::string_view s) {
  std::string out{s};
  for (auto& ch : out)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  return out;
}

bool text_matches_query(const std::string& lower, const parsed_query& q) {
  if (!q.has_positive_clause())
    return false;
  for (auto& c : q.clauses)
    if (clause_matches(lower, c) == c.negated)
      return false;
  return true;
}

std::string scan_snippet(std::string_view text, const std::string& lower, const parsed_query& q) {
  std::size_t at = std::string::npos, len = 0;
  for (auto& c : q.clauses) {
    if (c.negated) continue;
    for (auto& t : c.any_of) {
      auto p = find_term(lower, t);
      if (p < at) { at = p; len = t.text.size(); }
    }
  }
  if (at == std::string::npos)
    return {};
  auto begin =
    utf8_boundary_at_or_before(text, at > scan_snippet_context ? at - scan_snippet_context : 0);
  auto end =
    utf8_boundary_at_or_before(text, std::min(text.size(), at + len + scan_snippet_context));
  std::string out;
  if (begin > 0) out += "…";
  out.append(text.substr(begin, at - begin));
  out.append(snippet_open);
  out.append(text.substr(at, len));
  out.append(snippet_close);
  out.append(text.substr(at + len, end - (at + len)));
  if (end < text.size()) out += "…";
  return out;
}

token_query to_tsquery(const parsed_query& q, const term_tokenizer& tokenize) {
  token_query out;
  std::string positive, negative;
  for (auto& c : q.clauses) {
    std::vector<std::string> alternatives;
    for (auto& t : c.any_of) {
      match_phrase p;
      p.tokens = tokenize(t.text);
      p.prefix = t.prefix;
      if (p.tokens.empty())
        continue;
      std::string rendered;
      for (std::size_t i = 0; i < p.tokens.size(); ++i) {
        if (i > 0) rendered += " <-> ";
        quote_lexeme(rendered, p.tokens[i]);
      }
      if (p.prefix) rendered += ":*";
      alternatives.push_back(p.tokens.size() > 1 ? "(" + rendered + ")" : rendered);
      if (!c.negated)
        out.phrases.push_back(std::move(p));
    }
    if (alternatives.empty()) {
      if (!c.negated) // a clause nothing can satisfy
        return token_query{};
      continue;
    }
    std::string clause = "(";
    for (std::size_t i = 0; i < alternatives.size(); ++i)
      clause += (i > 0 ? " | " : "") + alternatives[i];
    clause += ")";
    auto& into = c.negated ? negative : positive;
    into += (into.empty() ? "" : " & ") + std::string{c.negated ? "!" : ""} + clause;
  }
  if (positive.empty())
    return token_query{};
  out.tsquery = negative.empty() ? positive : positive + " & " + negative;
  return out;
}

std::vector<int64_t> phrase_hits(const std::vector<bigram_token>& doc,
                                 const std::vector<match_phrase>& phrases) {
  std::vector<int64_t> hits(phrases.size(), 0);
  for (std::size_t at = 0; at < doc.size(); ++at)
    for (std::size_t p = 0; p < phrases.size(); ++p)
      if (phrase_at(doc, at, phrases[p]))
        ++hits[p];
  return hits;
}

double bm25_without_idf(const std::vector<int64_t>& hits, int64_t doc_tokens, double avg_tokens) {
  constexpr double k1 = 1.2;
  constexpr double b = 0.75;
  double score = 0;
  for (auto tf : hits) {
    auto f = static_cast<double>(tf);
    score += f * (k1 + 1) / (f + k1 * (1 - b + b * static_cast<double>(doc_tokens) / avg_tokens));
  }
  return -score;
}

std::string token_snippet(std::string_view text, const std::vector<bigram_token>& doc,
                          const std::vector<match_phrase>& phrases) {
  if (doc.empty())
    return std::string{utf8_prefix(text, scan_snippet_context)};
  std::vector<span> spans;
  for (std::size_t at = 0; at < doc.size(); ++at)
    for (std::size_t p = 0; p < phrases.size(); ++p)
      if (phrase_at(doc, at, phrases[p]))
        spans.push_back({at, at + phrases[p].tokens.size() - 1, p});
  std::size_t window = std::min(snippet_max_tokens, doc.size());
  std::size_t best_start = 0;
  std::size_t best_distinct = 0, best_hits = 0;
  for (auto& s : spans) {
    auto width = s.last - s.first + 1;
    std::size_t start = width >= window ? s.first : s.first - std::min(s.first, (window - width) / 2);
    start = std::min(start, doc.size() - window);
    std::vector<bool> seen(phrases.size(), false);
    std::size_t distinct = 0, inside = 0;
    for (auto& o : spans)
      if (o.first >= start && o.last < start + window) {
        ++inside;
        if (!seen[o.phrase]) { seen[o.phrase] = true; ++distinct; }
      }
    if (distinct > best_distinct || (distinct == best_distinct && inside > best_hits)) {
      best_start = start;
      best_distinct = distinct;
      best_hits = inside;
    }
  }
  auto last = best_start + window - 1;
  auto from = best_start == 0 ? 0 : doc[best_start].begin;
  auto to = last + 1 == doc.size() ? text.size() : doc[last].end;
  std::string out;
  if (best_start > 0) out += "…";
  // Byte ranges of the matches inside the window, overlapping ones merged (CJK
  // bigrams overlap by one character).
  std::vector<std::pair<std::size_t, std::size_t>> marks;
  for (auto& s : spans)
    if (s.first >= best_start && s.last <= last)
      marks.emplace_back(doc[s.first].begin, doc[s.last].end);
  std::sort(marks.begin(), marks.end());
  auto at = from;
  for (std::size_t i = 0; i < marks.size();) {
    auto [b, e] = marks[i];
    for (++i; i < marks.size() && marks[i].first < e; ++i)
      e = std::max(e, marks[i].second);
    out.append(text.substr(at, b - at));
    out.append(snippet_open);
    out.append(text.substr(b, e - b));
    out.append(snippet_close);
    at = e;
  }
  out.append(text.substr(at, to - at));
  if (last + 1 < doc.size()) out += "…";
  return out;
}

} // namespace mneme
