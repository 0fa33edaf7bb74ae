// The frequent-term shape of `mneme-bench recall`; see frequent_terms.hpp.
#include "apps/mneme-bench/frequent_terms.hpp"

#include <chrono>
#include <random>

#include "apps/mneme-bench/bench_checkpointer.hpp"
#include "policies/percentile.hpp"
#include "policies/utf8.hpp"
#include "store/message_store.hpp"
#include "store/sqlite/store_reader.hpp"

namespace mneme::bench {

namespace {

constexpr int32_t session_rows = 200;
constexpr int32_t rare_every_sessions = 50;
// Rows a user writes before the next user writes (concurrent users interleave).
constexpr int32_t interleave_rows = 20;

const char* const filler_words[] = {
  "the", "we", "it", "is", "to", "of", "and", "in", "for", "on", "with", "this", "from",
  "server", "deploy", "config", "request", "response", "retry", "cache", "queue", "worker",
  "message", "token", "build", "test", "release", "branch", "merge", "review", "ticket",
  "report", "meeting", "latency", "memory", "disk", "network", "cluster", "node", "version",
};
// Han filler without 数, 据, 日 and 志, so 数据 and 日志 occur only where planted.
const char* const filler_han =
  "的一是不了人我在有他这中大来上个到说们为子和你地出道也时年得就那要下以生会自着去之过家学"
  "对可她里后小么心多天而能好都然没于起还发成事只作当想看文无开手十用主行方又如前所本见经头面";

struct planted_word {
  const char* text;
  int percent; // of the rows
  bool cjk;
};
constexpr planted_word planted[] = {
  {"数据", 30, true}, {"日志", 26, true}, {"pipeline", 35, false}, {"ledger", 45, false}};

class row_writer {
public:
  explicit row_writer(uint64_t seed) : rng_(seed) {
    std::string han = filler_han;
    for (std::size_t i = 0; i + 3 <= han.size(); i += 3)
      han_.push_back(han.substr(i, 3));
  }
  uint64_t below(uint64_t n) { return rng_() % n; }

  // Filler of 40-400 bytes, English or Chinese, with each planted word at its rate.
  std::string text() {
    bool chinese = below(2) == 0;
    std::vector<std::string> parts;
    auto n = chinese ? 10 + below(100) : 6 + below(50);
    for (uint64_t i = 0; i < n; ++i)
      parts.push_back(chinese ? han_[below(han_.size())]
                              : std::string{filler_words[below(std::size(filler_words))]});
    for (auto& w : planted)
      if (below(100) < static_cast<uint64_t>(w.percent))
        parts.insert(parts.begin() + static_cast<std::ptrdiff_t>(below(parts.size() + 1)),
                     w.text);
    std::string out;
    for (auto& p : parts) {
      if (!chinese && !out.empty())
        out += ' ';
      out += p;
    }
    return out;
  }

private:
  std::mt19937_64 rng_;
  std::vector<std::string> han_;
};

// The i-th rare word: a Latin made-up word, or (odd i) a pair of Han extension A
// characters no filler uses.
std::string rare_word(int64_t i) {
  if (i % 2 == 0) {
    std::string w = "qz";
    for (auto v = i; v > 0 || w.size() < 5; v /= 26)
      w.push_back(static_cast<char>('a' + v % 26));
    return w + "vex";
  }
  std::string w;
  append_utf8(w, static_cast<char32_t>(0x3400 + i / 200 % 0x600));
  append_utf8(w, static_cast<char32_t>(0x3C00 + i % 200));
  return w;
}

using clock_type = std::chrono::steady_clock;

} // namespace

const char* plan_name(frequent_term_plan p) {
  return p == frequent_term_plan::rank_all ? "rank_all" : "newest_first";
}

const std::vector<std::string>& frequent_queries() {
  static const std::vector<std::string> q = {"数据", "日志", "pipeline", "ledger", "数据 日志",
                                             "pipeline ledger"};
  return q;
}

caf::expected<frequent_shape> add_frequent_term_users(message_store& store,
                                                      const frequent_shape_spec& spec) {
  frequent_shape out;
  row_writer w{20261206};
  struct writer_state {
    std::string user, session;
    int64_t written = 0, in_session = 0, sessions = 0;
  };
  std::vector<writer_state> users;
  for (int32_t u = 0; u < spec.users; ++u)
    users.push_back({"heavy-" + std::to_string(u), "", 0, session_rows, 0});
  std::map<std::string, int64_t> counts;
  int64_t rows = 0, rare = 0;
  for (bool any = true; any;) {
    any = false;
    for (auto& u : users) {
      if (u.written >= spec.rows_per_user)
        continue;
      any = true;
      std::vector<message> batch;
      for (int32_t i = 0; i < interleave_rows && u.written < spec.rows_per_user; ++i) {
        if (u.in_session >= session_rows) {
          if (!batch.empty()) {
            if (auto err = store.begin_group())
              return err;
            auto ids = store.insert_batch_in_group(batch);
            if (!ids) {
              store.abort_group();
              return std::move(ids.error());
            }
            if (auto err = store.commit_group())
              return err;
            batch.clear();
          }
          session_record rec;
          rec.user_id = u.user;
          rec.session_key = u.user + "-" + std::to_string(u.sessions);
          auto s = store.create_session(rec, 1764500000000 + u.sessions);
          if (!s)
            return std::move(s.error());
          u.session = s->id;
          u.in_session = 0;
          ++u.sessions;
        }
        message m;
        m.session_id = u.session;
        m.role = u.in_session % 2 == 0 ? msg_role::user : msg_role::assistant;
        m.content = w.text();
        if (u.in_session == 7 && u.sessions % rare_every_sessions == 1) {
          auto word = rare_word(rare++);
          m.content += " " + word;
          recall_probe p;
          p.label = "frequent/rare";
          p.request.user_id = u.user;
          p.request.query = word;
          p.session_id = u.session;
          out.rare_probes.push_back(std::move(p));
        }
        for (auto& pw : planted)
          counts[pw.text] += m.content.find(pw.text) != std::string::npos ? 1 : 0;
        m.timestamp_ms = 1764500000000 + rows;
        m.token_estimate = static_cast<int64_t>(m.content.size() / 4);
        batch.push_back(std::move(m));
        ++u.written;
        ++u.in_session;
        ++rows;
      }
      if (auto err = store.begin_group())
        return err;
      auto ids = store.insert_batch_in_group(batch);
      if (!ids) {
        store.abort_group();
        return std::move(ids.error());
      }
      if (auto err = store.commit_group())
        return err;
    }
  }
  for (auto& u : users)
    out.users.push_back(u.user);
  for (auto& [word, n] : counts)
    out.fractions[word] = rows == 0 ? 0 : static_cast<double>(n) / static_cast<double>(rows);
  return out;
}

caf::expected<std::map<frequent_term_plan, plan_timings>>
time_plans(store_reader& reader, const frequent_shape& shape,
           const std::vector<recall_request>& corpus_common,
           const std::vector<frequent_term_plan>& plans, int rounds) {
  std::map<frequent_term_plan, plan_timings> out;
  // One search per plan, back to back, so both plans see the same load.
  auto timed = [&](const recall_request& req, auto&& record) -> caf::error {
    for (auto plan : plans) {
      auto c0 = thread_cpu_seconds();
      auto t0 = clock_type::now();
      auto r = recall_search(reader.connection(), req, plan);
      auto ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
      auto cpu_ms = (thread_cpu_seconds() - c0) * 1000;
      if (!r)
        return std::move(r.error());
      record(out[plan], *r, ms, cpu_ms);
    }
    return {};
  };
  for (int round = 0; round < rounds; ++round) {
    for (auto& user : shape.users)
      for (auto& q : frequent_queries()) {
        recall_request req;
        req.user_id = user;
        req.query = q;
        auto err = timed(req, [](plan_timings& t, const recall_result& r, double ms, double cpu) {
          t.common_ms.push_back(ms);
          t.common_cpu_ms.push_back(cpu);
          std::vector<std::string> top;
          for (std::size_t i = 0; i < r.hits.size() && i < 3; ++i)
            top.push_back(r.hits[i].hit.session_id);
          t.common_top3.push_back(std::move(top));
        });
        if (err)
          return err;
      }
    for (auto& req : corpus_common) {
      auto err = timed(req, [](plan_timings& t, const recall_result&, double ms, double cpu) {
        t.corpus_common_ms.push_back(ms);
        t.corpus_common_cpu_ms.push_back(cpu);
      });
      if (err)
        return err;
    }
  }
  for (auto& p : shape.rare_probes) {
    auto err = timed(p.request, [&](plan_timings& t, const recall_result& r, double ms,
                                    double cpu) {
      t.rare_ms.push_back(ms);
      t.rare_cpu_ms.push_back(cpu);
      ++t.rare_probes;
      for (std::size_t i = 0; i < r.hits.size() && i < 3; ++i)
        if (r.hits[i].hit.session_id == p.session_id) {
          ++t.rare_found_at_3;
          break;
        }
    });
    if (err)
      return err;
  }
  return out;
}

void report_plans(nlohmann::json& j, const std::map<frequent_term_plan, plan_timings>& by_plan) {
  for (auto& [plan, t] : by_plan) {
    auto key = std::string{"plan_"} + plan_name(plan) + "_";
    auto both = [&](const std::string& what, const std::vector<double>& ms,
                    const std::vector<double>& cpu) {
      j[key + what + "_p50_ms"] = percentile_or_zero(ms, 0.50);
      j[key + what + "_p99_ms"] = percentile_or_zero(ms, 0.99);
      j[key + what + "_cpu_p50_ms"] = percentile_or_zero(cpu, 0.50);
      j[key + what + "_cpu_p99_ms"] = percentile_or_zero(cpu, 0.99);
    };
    both("common", t.common_ms, t.common_cpu_ms);
    both("rare", t.rare_ms, t.rare_cpu_ms);
    both("corpus_common", t.corpus_common_ms, t.corpus_common_cpu_ms);
    j[key + "rare_recall_at_3"] = t.rare_probes == 0 ? 1.0
                                  : static_cast<double>(t.rare_found_at_3)
                                      / static_cast<double>(t.rare_probes);
    j["plan_common_searches"] = t.common_top3.size();
  }
  if (by_plan.size() == 2) {
    auto& a = by_plan.begin()->second.common_top3;
    auto& b = std::next(by_plan.begin())->second.common_top3;
    int64_t differ = 0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
      differ += a[i] != b[i] ? 1 : 0;
    j["plan_top3_differ"] = differ;
  }
}

} // namespace mneme::bench
