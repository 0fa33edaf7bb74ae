// The generated recall corpus and its probes; see recall_corpus.hpp.
#include "testing/recall_corpus.hpp"

#include <chrono>
#include <random>
#include <unordered_set>

#include "policies/utf8.hpp"
#include "store/recall.hpp"
#include "store/message_store.hpp"

namespace mneme {

namespace {

const char* const english_words[] = {
  "the", "a", "we", "it", "is", "to", "of", "and", "in", "that", "for", "on", "with", "as",
  "this", "be", "at", "by", "from", "or", "have", "not", "but", "what", "all", "were", "when",
  "can", "there", "use", "an", "each", "which", "do", "how", "if", "will", "up", "about",
  "out", "then", "them", "these", "so", "some", "would", "make", "like", "into", "time",
  "has", "look", "more", "write", "see", "number", "way", "could", "people", "than", "first",
  "water", "been", "call", "who", "now", "find", "long", "down", "day", "did", "get", "come",
  "made", "may", "part", "server", "deploy", "config", "database", "error", "request",
  "response", "timeout", "retry", "cache", "queue", "worker", "session", "message", "user",
  "token", "model", "prompt", "summary", "context", "window", "index", "search", "query",
  "build", "test", "release", "branch", "merge", "commit", "review", "ticket", "customer",
  "invoice", "payment", "account", "password", "login", "email", "report", "meeting",
  "schedule", "tomorrow", "yesterday", "please", "thanks", "sure", "maybe", "problem",
  "solution", "question", "answer", "latency", "memory", "disk", "network", "cluster",
  "node", "pod", "service", "container", "image", "version", "update", "install", "script",
  "function", "variable", "class", "method", "return", "value", "string", "list", "map",
};

// Common Han characters of the filler text; planted Han words never use them.
const char* const common_han =
  "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学"
  "对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面"
  "公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部"
  "正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关"
  "并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安"
  "表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共"
  "风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管"
  "夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品"
  "士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研";

const char* const hiragana_particles[] = {"は", "が", "を", "に", "で", "と", "の", "も",
                                          "から", "まで", "です", "ました", "ません"};

// Code points of a UTF-8 string made of 3-byte characters only.
std::vector<std::string> split_chars(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 3 <= s.size(); i += 3)
    out.push_back(s.substr(i, 3));
  return out;
}

class generator {
public:
  explicit generator(uint64_t seed) : rng_(seed) {
    common_ = split_chars(common_han);
    for (auto& c : common_)
      common_set_.insert(c);
    for (auto* w : english_words)
      used_.insert(w);
  }

  uint64_t below(uint64_t n) { return rng_() % n; }
  bool chance(uint64_t percent) { return below(100) < percent; }
  const char* pick_word() {
    return english_words[below(sizeof english_words / sizeof *english_words)];
  }

  // --- filler text of each language, sized like chat messages and tool output
  std::string english(std::size_t words) {
    std::string out;
    for (std::size_t i = 0; i < words; ++i) {
      if (i > 0) out += (i % 11 == 10) ? ". " : " ";
      out += pick_word();
    }
    return out + ".";
  }
  std::string chinese(std::size_t chars) {
    std::string out;
    for (std::size_t i = 0; i < chars; ++i) {
      out += common_[below(common_.size())];
      if (i % 17 == 16) out += "，";
    }
    return out + "。";
  }
  std::string japanese(std::size_t chunks) {
    std::string out;
    for (std::size_t i = 0; i < chunks; ++i) {
      out += common_[below(common_.size())];
      out += common_[below(common_.size())];
      out += hiragana_particles[below(sizeof hiragana_particles / sizeof *hiragana_particles)];
    }
    return out + "。";
  }
  std::string code(std::size_t lines) {
    std::string out;
    for (std::size_t i = 0; i < lines; ++i)
      out += "    let " + std::string{pick_word()} + "_" + pick_word() + " = "
             + pick_word() + "(" + std::to_string(below(1000)) + ");\n";
    return out;
  }
  std::string trace() {
    std::string out = "Traceback (most recent call last):\n";
    for (int i = 0; i < 6; ++i)
      out += "  File \"/srv/app/" + std::string{pick_word()} + ".py\", line "
             + std::to_string(below(900) + 1) + ", in " + pick_word() + "\n";
    return out + "KeyError: '" + pick_word() + "'\n";
  }
  std::string filler() {
    switch (below(10)) {
      case 0: case 1: case 2: return english(8 + below(60));
      case 3: case 4: return chinese(10 + below(120));
      case 5: return japanese(5 + below(30));
      case 6: return english(5 + below(15)) + " " + chinese(5 + below(30));
      case 7: return "```\n" + code(2 + below(12)) + "```";
      case 8: return trace();
      default: return chance(30) ? english(200 + below(400)) : english(3 + below(10));
    }
  }

  // --- unique planted tokens
  std::string made_up_word() {
    static const char cons[] = "bdfgklmnprstvz";
    static const char vow[] = "aeiou";
    for (;;) {
      std::string w;
      for (int s = 0; s < 3; ++s) {
        w.push_back(cons[below(sizeof cons - 1)]);
        w.push_back(vow[below(sizeof vow - 1)]);
        if (chance(40)) w.push_back(cons[below(sizeof cons - 1)]);
      }
      if (w.size() >= 8 && used_.insert(w).second)
        return w;
    }
  }
  std::string rare_han_word() {
    for (;;) {
      std::string w;
      for (int i = 0; i < 2; ++i) {
        std::string c;
        do {
          c.clear();
          append_utf8(c, static_cast<char32_t>(0x7000 + below(0x1FFF)));
        } while (common_set_.count(c) != 0);
        w += c;
      }
      if (used_.insert(w).second)
        return w;
    }
  }
  std::string katakana_word() {
    for (;;) {
      std::string w;
      for (int i = 0; i < 4; ++i)
        append_utf8(w, static_cast<char32_t>(0x30A1 + below(0x30F6 - 0x30A1)));
      if (used_.insert(w).second)
        return w;
    }
  }

private:
  std::mt19937_64 rng_;
  std::vector<std::string> common_;
  std::unordered_set<std::string> common_set_;
  std::unordered_set<std::string> used_;
};

// A planted fact: its text and the probes that look for it.
struct fact {
  std::string kind;
  std::string text;
  std::vector<std::pair<std::string, std::string>> queries; // form, query
};

fact make_fact(generator& g, const std::string& kind) {
  fact f;
  f.kind = kind;
  if (kind == "en" || kind == "archived" || kind == "rolled" || kind == "foreign") {
    auto w1 = g.made_up_word(), w2 = g.made_up_word();
    f.text = "note for later: the " + w1 + " service talks to " + w2 + " over port "
             + std::to_string(1024 + g.below(60000)) + " since the last " + g.pick_word();
    f.queries = {{"phrase", "\"the " + w1 + " service\""}, {"word", w2},
                 {"prefix", w1.substr(0, 6) + "*"}, {"substring", w2.substr(1, 6)}};
    if (kind != "en")
      f.queries.resize(2);
  } else if (kind == "zh") {
    auto h1 = g.rare_han_word(), h2 = g.rare_han_word();
    f.text = "我们把" + h1 + h2 + "模块迁移到了新的服务器上，" + g.chinese(8 + g.below(30));
    f.queries = {{"cjk2a", h1}, {"cjk2b", h2}, {"cjk4", h1 + h2}};
  } else if (kind == "ja") {
    auto k = g.katakana_word();
    f.text = g.japanese(3) + k + "の設定を変更しました。" + g.japanese(2 + g.below(8));
    f.queries = {{"word", k}, {"kana3", k.substr(0, 9)}};
  } else if (kind == "glued") {
    auto w = g.made_up_word();
    f.text = "请帮我修改" + w + "服务端的配置，" + g.chinese(5 + g.below(20));
    f.queries = {{"latin", w}};
  } else { // code
    auto w1 = g.made_up_word(), w2 = g.made_up_word();
    f.text = "ERROR 2026-11-30T10:00:00Z " + w1 + "Handler.java:" + std::to_string(g.below(900))
             + " NullPointerException in " + w2 + "_cache.get(key=" + g.pick_word() + ")\n"
             + g.trace();
    f.queries = {{"ident", w1 + "Handler"}, {"snake", w2 + "_cache"},
                 {"substring", w1.substr(2, 6)}};
  }
  return f;
}

message row(const std::string& sid, int i, std::string text) {
  message m;
  m.session_id = sid;
  m.role = i % 2 == 0 ? msg_role::user : msg_role::assistant;
  m.content = std::move(text);
  m.timestamp_ms = 1764496800000 + i * 1000;
  m.token_estimate = static_cast<int64_t>(m.content.size() / 4);
  return m;
}

caf::expected<std::vector<int64_t>> append_rows(message_store& store,
                                                const std::vector<message>& rows) {
  if (rows.empty())
    return std::vector<int64_t>{};
  if (auto err = store.begin_group())
    return err;
  auto ids = store.insert_batch_in_group(rows);
  if (!ids) {
    store.abort_group();
    return std::move(ids.error());
  }
  if (auto err = store.commit_group())
    return err;
  return std::move(ids->ids);
}

std::string user_name(int64_t u) {
  return "user-" + std::to_string(u);
}

} // namespace

caf::expected<corpus_report> generate_corpus(message_store& store, const corpus_spec& spec) {
  auto started = std::chrono::steady_clock::now();
  generator g{spec.seed};
  corpus_report report;
  static const char* const kinds[] = {"en", "zh", "ja", "glued", "code",
                                      "archived", "rolled", "foreign"};
  int64_t fact_no = 0;
  std::vector<message> pending;
  for (int64_t s = 0; report.messages < spec.messages; ++s) {
    auto user = s / spec.sessions_per_user;
    session_record rec;
    rec.user_id = user_name(user);
    rec.session_key = "chan-" + std::to_string(s);
    auto session = store.create_session(rec, 1764496800000 + s);
    if (!session)
      return std::move(session.error());
    const auto& sid = session->id;
    ++report.sessions;
    auto half = spec.messages_per_session / 2;
    int n = static_cast<int>(half + g.below(static_cast<uint64_t>(spec.messages_per_session) + 1));
    n = std::max(n, 8);
    std::vector<message> rows;
    for (int i = 0; i < n; ++i)
      rows.push_back(row(sid, i, g.filler()));
    bool plant = spec.fact_every_n_sessions > 0 && s % spec.fact_every_n_sessions == 0;
    if (!plant) {
      auto ids = append_rows(store, rows);
      if (!ids)
        return std::move(ids.error());
    } else {
      auto kind = std::string{kinds[fact_no++ % (sizeof kinds / sizeof *kinds)]};
      auto f = make_fact(g, kind);
      int at = 3 + static_cast<int>(g.below(static_cast<uint64_t>(n - 6)));
      rows[at].content = f.text;
      if (kind == "rolled") {
        std::vector<message> before(rows.begin(), rows.begin() + at);
        std::vector<message> after(rows.begin() + at, rows.end());
        auto a = append_rows(store, before);
        if (!a)
          return std::move(a.error());
        auto cp = store.create_checkpoint(sid, "before-fact", 1764496800000 + s);
        if (!cp)
          return std::move(cp.error());
        auto b = append_rows(store, after);
        if (!b)
          return std::move(b.error());
        auto undone = store.rollback_to_checkpoint(sid, "before-fact");
        if (!undone)
          return std::move(undone.error());
      } else {
        auto ids = append_rows(store, rows);
        if (!ids)
          return std::move(ids.error());
        if (kind == "archived") {
          compaction_commit c;
          c.session_id = sid;
          c.archive_ids.assign(ids->begin() + 2, ids->begin() + at + 2);
          c.summary = row(sid, 1, "Summary of the earlier conversation: " + g.english(30));
          auto sum = store.commit_compaction(c);
          if (!sum)
            return std::move(sum.error());
        }
      }
      for (auto& [form, query] : f.queries) {
        recall_probe p;
        p.label = kind + "/" + form;
        p.request.user_id = rec.user_id;
        p.request.query = query;
        p.session_id = sid;
        if (kind == "rolled") {
          p.expect = probe_expect::absent;
          report.probes.push_back(p);
          p.label += "+inactive";
          p.request.include_inactive = true;
          p.expect = probe_expect::found;
        } else if (kind == "foreign") {
          // Found by its owner; never by the next user, whose sessions share the
          // filler vocabulary.
          report.probes.push_back(p);
          p.label += "+other_user";
          p.request.user_id = user_name(user + 1);
          p.expect = probe_expect::absent;
        }
        report.probes.push_back(std::move(p));
      }
    }
    report.messages += n;
    for (auto& m : rows)
      report.content_bytes += static_cast<int64_t>(m.content.size());
  }
  report.ingest_seconds =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

caf::expected<probe_outcome> run_probes(recall_source& source,
                                        const std::vector<recall_probe>& probes) {
  probe_outcome out;
  for (auto& p : probes) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = source.search(p.request);
    out.latencies_ms.push_back(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (!r)
      return std::move(r.error());
    bool ok;
    if (p.expect == probe_expect::absent) {
      out.leaks += static_cast<int64_t>(r->hits.size());
      ok = r->hits.empty();
    } else {
      ++out.expected_found;
      ok = false;
      for (std::size_t i = 0; i < r->hits.size() && i < 3; ++i)
        ok = ok || r->hits[i].hit.session_id == p.session_id;
      out.found_at_3 += ok ? 1 : 0;
    }
    if (!ok && out.misses.size() < 50)
      out.misses.push_back(p.label + " " + p.request.query);
  }
  return out;
}

} // namespace mneme
