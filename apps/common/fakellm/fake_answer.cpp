// Implementation of the fake LLM's deterministic answers (see fake_answer.hpp).
#include "apps/common/fakellm/fake_answer.hpp"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <unordered_set>

#include "policies/token_estimate.hpp"
#include "policies/utf8_cut.hpp"

namespace mneme::fakellm {

namespace {

constexpr std::string_view target_phrase = "target about ";
constexpr double identifier_share = 0.4;
constexpr size_t chat_echo_words = 12;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view strip_punctuation(std::string_view t) {
  constexpr std::string_view lead = "([{<\"'`*";
  constexpr std::string_view trail = ")]}>\"'`,;:.!?*";
  while (!t.empty() && lead.find(t.front()) != std::string_view::npos) t.remove_prefix(1);
  while (!t.empty() && trail.find(t.back()) != std::string_view::npos) t.remove_suffix(1);
  return t;
}

// name.ext with a name of >= 2 characters and an alphanumeric extension of 1-5.
bool looks_like_file_name(std::string_view t) {
  auto dot = t.rfind('.');
  if (dot == std::string_view::npos || dot < 2 || dot + 1 >= t.size()) return false;
  auto ext = t.substr(dot + 1);
  if (ext.size() > 5) return false;
  bool has_alpha = false;
  for (char c : ext) {
    if (!is_alpha(c) && !is_digit(c)) return false;
    has_alpha = has_alpha || is_alpha(c);
  }
  return has_alpha && is_alpha(t.front());
}

bool is_screaming_word(std::string_view t) {
  if (t.size() < 3) return false;
  for (char c : t)
    if (!is_upper(c) && c != '_' && !is_digit(c)) return false;
  return true;
}

bool is_identifier(std::string_view t) {
  if (t.size() < 2) return false;
  if (t.find("://") != std::string_view::npos) return true;
  if (t.find('/') != std::string_view::npos || t.find('\\') != std::string_view::npos)
    return true;
  if (std::any_of(t.begin(), t.end(), is_digit)) return true;
  if (t.find('_') != std::string_view::npos || t.find("::") != std::string_view::npos)
    return true;
  if ((ends_with(t, "Error") && t.size() > 5) || (ends_with(t, "Exception") && t.size() > 9))
    return true;
  return looks_like_file_name(t) || is_screaming_word(t);
}

template <class F>
void for_each_token(std::string_view text, F&& fn) {
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    size_t start = i;
    while (i < text.size() && !is_space(text[i])) ++i;
    if (i > start) fn(text.substr(start, i - start));
  }
}

bool mentions_error(std::string_view line) {
  std::string low(line);
  for (auto& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto word : {"error", "exception", "failed", "traceback", "fatal"})
    if (low.find(word) != std::string::npos) return true;
  return false;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Splits text into sentences at newlines and after ". ", "? ", "! " and "。".
std::vector<std::string_view> sentences(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  auto emit = [&](size_t end) {
    auto s = trim(text.substr(start, end - start));
    if (!s.empty()) out.push_back(s);
    start = end;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      emit(i + 1);
    } else if ((c == '.' || c == '?' || c == '!') && i + 1 < text.size() && text[i + 1] == ' ') {
      emit(i + 1);
    } else if (text.compare(i, 3, "\xE3\x80\x82") == 0) {  // "。"
      emit(i + 3);
      i += 2;
    }
  }
  emit(text.size());
  return out;
}

struct candidate {
  size_t position;
  std::string text;
  bool important;
  int64_t cost;
};

} // namespace

std::optional<int64_t> find_summary_target(std::string_view text) {
  size_t at = 0;
  while ((at = text.find(target_phrase, at)) != std::string_view::npos) {
    at += target_phrase.size();
    int64_t n = 0;
    size_t i = at;
    bool digits = false;
    for (; i < text.size() && (is_digit(text[i]) || (digits && text[i] == ',')); ++i) {
      if (text[i] == ',') continue;
      digits = true;
      if (n > 100'000'000) break;  // absurd; stop before overflow
      n = n * 10 + (text[i] - '0');
    }
    if (digits && text.substr(i, 7) == " tokens") return n;
  }
  return std::nullopt;
}

std::optional<int64_t> find_summary_target(const std::vector<message>& msgs) {
  for (const auto& m : msgs)
    if (auto n = find_summary_target(m.content)) return n;
  return std::nullopt;
}

std::vector<std::string> extract_identifiers(std::string_view text) {
  std::vector<std::string> out;
  std::unordered_set<std::string_view> seen;
  for_each_token(text, [&](std::string_view raw) {
    auto t = strip_punctuation(raw);
    if (is_identifier(t) && seen.insert(t).second) out.emplace_back(t);
  });
  return out;
}

std::string fake_summary(const std::vector<message>& msgs, int64_t target_tokens) {
  assert(target_tokens >= min_summary_target_tokens);
  std::string all_text;
  std::vector<candidate> lines;
  size_t non_system = 0;
  for (const auto& m : msgs) {
    if (m.role == msg_role::system) continue;
    ++non_system;
    all_text += m.content;
    all_text += '\n';
  }
  auto header = "Summary (extractive) of " + std::to_string(non_system) + " messages.\n";
  int64_t used = estimate_text_tokens(header);

  // Rule 2: identifiers, up to their share of the budget.
  std::string ids_line;
  auto ids = extract_identifiers(all_text);
  std::unordered_set<std::string> kept_ids;
  auto id_budget = static_cast<int64_t>(static_cast<double>(target_tokens) * identifier_share);
  int64_t id_used = estimate_text_tokens("Identifiers:\n");
  for (const auto& id : ids) {
    auto piece = " " + std::string(utf8_prefix(id, max_extract_line_chars));
    auto cost = estimate_text_tokens(piece);
    if (id_used + cost > id_budget) continue;
    id_used += cost;
    ids_line += piece;
    kept_ids.insert(id);
  }
  if (!ids_line.empty()) used += id_used;

  // Rule 3: lines, important ones first, then the most recent.
  auto all_sentences = sentences(all_text);
  for (size_t i = 0; i < all_sentences.size(); ++i) {
    auto s = utf8_prefix(all_sentences[i], max_extract_line_chars);
    bool important = mentions_error(s);
    if (!important)
      for_each_token(s, [&](std::string_view raw) {
        important = important || is_identifier(strip_punctuation(raw));
      });
    auto text = "- " + std::string(s) + "\n";
    auto cost = estimate_text_tokens(text);
    lines.push_back(candidate{i, std::move(text), important, cost});
  }
  std::vector<const candidate*> order;
  for (const auto& c : lines) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](const candidate* a, const candidate* b) {
    if (a->important != b->important) return a->important;
    return a->position > b->position;
  });
  const std::string key_header = "Key lines:\n";
  used += estimate_text_tokens(key_header);
  std::vector<const candidate*> chosen;
  for (const auto* c : order) {
    if (used + c->cost > target_tokens) continue;
    used += c->cost;
    chosen.push_back(c);
  }
  std::sort(chosen.begin(), chosen.end(),
            [](const candidate* a, const candidate* b) { return a->position < b->position; });

  std::string out = header;
  if (!ids_line.empty()) out += "Identifiers:" + ids_line + "\n";
  if (!chosen.empty()) {
    out += key_header;
    for (const auto* c : chosen) out += c->text;
  }
  // Each piece was costed with rounding up, so the whole never costs more.
  assert(estimate_text_tokens(out) <= target_tokens);
  return out;
}

std::string fake_chat_answer(const std::vector<message>& msgs, int64_t answer_tokens) {
  assert(answer_tokens >= 1);
  const message* last = nullptr;
  for (const auto& m : msgs)
    if (m.role == msg_role::user) last = &m;
  if (last == nullptr && !msgs.empty()) last = &msgs.back();
  std::vector<std::string_view> words;
  if (last != nullptr)
    for_each_token(last->content, [&](std::string_view w) { words.push_back(w); });

  std::string out = "Reply to:";
  for (size_t i = 0; i < words.size() && i < chat_echo_words; ++i) {
    out += ' ';
    out += words[i];
  }
  if (words.empty()) out += " an empty message";
  out += '.';
  for (size_t k = 0; estimate_text_tokens(out) < answer_tokens; ++k) {
    out += " Point " + std::to_string(k + 1) + ": ";
    out += words.empty() ? std::string_view("noted") : words[k % words.size()];
    out += '.';
  }
  auto max_bytes = static_cast<size_t>(answer_tokens * latin_chars_per_token);
  auto cut = utf8_prefix(out, std::max<size_t>(max_bytes, 1));
  if (cut.empty()) cut = utf8_prefix(out, 4);
  return std::string(cut);
}

} // namespace mneme::fakellm
