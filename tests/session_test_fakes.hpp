// Test doubles for the session actor's deterministic-scheduler tests: an in-memory
// store speaking the session_storage_actor interface, and scripted LLM pools speaking
// llm_pool_actor. Everything runs on the test thread under CAF's test_coordinator, so
// the shared script objects need no locking. tests/session_harness.hpp wires them to a
// session actor; tests use them through it. session_backends spawns them.
#pragma once

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "caf/all.hpp"

#include "actors/session/session_actor.hpp"
#include "tests/deterministic_system.hpp"

namespace mneme::test {

// The rows and sessions the fake store holds. Rows are kept in live-context order
// (a summary takes the place of the first row it replaced); nothing is deleted.
struct fake_db {
  std::vector<message> rows;
  std::map<std::string, session_record> sessions;
  int64_t next_id = 1;
  int commits = 0;
  int trigger_writes = 0;
  bool fail_commits = false;
  std::map<std::string, std::string> tools; // per session key (store/session_tools.hpp)
  // The compaction log: committed rows as their commit carried them, then the others.
  std::vector<compaction_log_entry> attempts;

  std::vector<message> live(const std::string& sid) const {
    std::vector<message> out;
    for (const auto& m : rows)
      if (m.session_id == sid && m.active)
        out.push_back(m);
    return out;
  }
  // Stores `m` under a new id (its session must exist): the id.
  caf::expected<int64_t> append(message m) {
    if (!sessions.count(m.session_id))
      return caf::make_error(errc::not_found, "unknown session");
    m.id = next_id++;
    rows.push_back(m);
    return m.id;
  }
  size_t count(const std::string& sid) const {
    size_t n = 0;
    for (const auto& m : rows)
      n += m.session_id == sid ? 1 : 0;
    return n;
  }
};

// The st_append_atom handler of the fake stores (this one and the gateway's,
// tests/gateway_harness.hpp).
inline auto fake_append(std::shared_ptr<fake_db> db) {
  return [db](st_append_atom, message& m) -> caf::result<int64_t> {
    auto id = db->append(std::move(m));
    if (!id)
      return id.error();
    return *id;
  };
}

inline session_storage_actor::behavior_type fake_store(std::shared_ptr<fake_db> db) {
  return {
    fake_append(db),
    [db](st_live_atom, const std::string& sid) { return db->live(sid); },
    [db](st_compact_atom, compaction_commit& c) -> caf::result<message> {
      if (db->fail_commits)
        return caf::make_error(errc::storage_failed, "injected commit failure");
      size_t first = db->rows.size();
      for (size_t i = 0; i < db->rows.size(); ++i)
        for (auto id : c.archive_ids)
          if (db->rows[i].id == id) {
            first = std::min(first, i);
            db->rows[i].active = false;
            db->rows[i].compacted = true;
          }
      auto s = c.summary;
      s.id = db->next_id++;
      s.session_id = c.session_id;
      s.is_summary = true;
      s.replaced_first_id = c.archive_ids.front();
      s.replaced_last_id = c.archive_ids.back();
      db->rows.insert(db->rows.begin() + static_cast<std::ptrdiff_t>(first), s);
      if (c.update_triggers)
        db->sessions[c.session_id].triggers = c.triggers;
      if (c.has_log) {
        auto e = c.log;
        e.outcome = "committed";
        e.summary_id = s.id;
        db->attempts.push_back(e);
      }
      ++db->commits;
      return s;
    },
    // in_place: false: the parent's live rows around the slice are copied into a child
    // session "<parent>.child", the summary between them; the slice is archived.
    [db](st_child_atom, compaction_commit& c, int64_t now) -> caf::result<std::vector<message>> {
      if (db->fail_commits)
        return caf::make_error(errc::storage_failed, "injected commit failure");
      auto child = db->sessions[c.session_id];
      child.parent_id = c.session_id;
      child.id = c.session_id + ".child";
      child.started_at_ms = now;
      if (c.update_triggers)
        child.triggers = c.triggers;
      db->sessions[c.session_id].ended_at_ms = now;
      db->sessions[child.id] = child;
      bool summary_placed = false;
      for (auto m : db->live(c.session_id)) {
        bool archived = std::find(c.archive_ids.begin(), c.archive_ids.end(), m.id)
                        != c.archive_ids.end();
        if (archived && !summary_placed) {
          m = c.summary;
          m.is_summary = true;
          m.replaced_first_id = c.archive_ids.front();
          m.replaced_last_id = c.archive_ids.back();
          summary_placed = true;
        } else if (archived) {
          continue;
        }
        m.id = db->next_id++;
        m.session_id = child.id;
        db->rows.push_back(m);
      }
      for (auto& m : db->rows)
        if (m.session_id == c.session_id
            && std::find(c.archive_ids.begin(), c.archive_ids.end(), m.id) != c.archive_ids.end()) {
          m.active = false;
          m.compacted = true;
        }
      ++db->commits;
      return db->live(child.id);
    },
    [db](st_replace_atom, replacement_commit& c) -> caf::result<std::vector<message>> {
      if (db->fail_commits)
        return caf::make_error(errc::storage_failed, "injected commit failure");
      std::vector<message> out;
      for (size_t r = 0; r < c.rows.size(); ++r) {
        auto at = std::find_if(db->rows.begin(), db->rows.end(),
                               [&](const message& m) { return m.id == c.positions[r]; });
        auto row = c.rows[r];
        row.id = db->next_id++;
        row.session_id = c.session_id;
        row.is_summary = true;
        db->rows.insert(at, row);
        out.push_back(row);
      }
      for (auto& m : db->rows)
        if (std::find(c.archive_ids.begin(), c.archive_ids.end(), m.id) != c.archive_ids.end()) {
          m.active = false;
          m.compacted = true;
        }
      if (c.update_triggers)
        db->sessions[c.session_id].triggers = c.triggers;
      ++db->commits;
      return out;
    },
    [db](st_session_atom, const std::string& sid) -> caf::result<session_record> {
      auto i = db->sessions.find(sid);
      if (i == db->sessions.end())
        return caf::make_error(errc::not_found, "unknown session " + sid);
      return i->second;
    },
    [db](st_put_triggers_atom, const std::string& sid, trigger_state& t) -> caf::ok_atom {
      db->sessions[sid].triggers = t;
      ++db->trigger_writes;
      return caf::ok_atom_v;
    },
    [db](st_tools_put_atom, const std::string& key, const std::string&,
         const std::string& tools, int64_t) -> caf::ok_atom {
      db->tools[key] = tools;
      return caf::ok_atom_v;
    },
    [db](st_tools_get_atom, const std::string& key) -> std::string {
      auto i = db->tools.find(key);
      return i == db->tools.end() ? std::string{} : i->second;
    },
    // Facts (the built-in memory tool): not kept by this fake.
    [](st_fact_put_atom, fact_record&, int64_t) -> caf::result<fact_record> {
      return caf::make_error(errc::internal, "fake store: no facts");
    },
    [](st_fact_del_atom, const std::string&, const std::string&,
       int64_t) -> caf::result<fact_record> {
      return caf::make_error(errc::internal, "fake store: no facts");
    },
    [](st_facts_atom, fact_query&) -> std::vector<fact_record> { return {}; },
    [db](st_clog_put_atom, compaction_log_entry& e) -> int64_t {
      db->attempts.push_back(e);
      return static_cast<int64_t>(db->attempts.size());
    },
  };
}

// A scripted LLM pool: answers are taken from `script` in order; an empty script
// gives the default answer. A held request is answered only when the test releases it.
struct llm_script {
  std::deque<caf::expected<chat_answer>> script;
  std::string default_content = "fine";
  bool report_estimate_as_usage = true;   // prompt_tokens = the request's estimate
  bool down = false;                      // every call: llm_refused
  // Every chat call carrying rows of these sessions: llm_context_overflow.
  std::set<std::string> overflow_sessions;
  bool hold = false;                      // keep requests pending (see release)
  std::vector<chat_request> requests;     // every request received, in order
  std::vector<caf::typed_response_promise<chat_answer>> held;
  std::vector<caf::expected<chat_answer>> held_answers;
};

// The fake pool also takes (ok_atom): deliver every held answer, inside the actor.
using fake_pool_actor = llm_pool_actor::extend<caf::reacts_to<caf::ok_atom>>;

// Delivers every held answer.
inline void release_held(llm_script& s) {
  for (size_t i = 0; i < s.held.size(); ++i) {
    if (s.held_answers[i])
      s.held[i].deliver(std::move(*s.held_answers[i]));
    else
      s.held[i].deliver(s.held_answers[i].error());
  }
  s.held.clear();
  s.held_answers.clear();
  s.hold = false;
}

inline fake_pool_actor::behavior_type fake_pool(fake_pool_actor::pointer self,
                                                std::shared_ptr<llm_script> s) {
  return {
    [self, s](llm_call_atom, chat_request& req) -> caf::result<chat_answer> {
      int64_t estimate = 0;
      for (const auto& m : req.messages)
        estimate += m.token_estimate;
      s->requests.push_back(req);
      caf::expected<chat_answer> answer{chat_answer{}};
      bool overflows = std::any_of(req.messages.begin(), req.messages.end(),
                                   [&](const message& m) {
                                     return s->overflow_sessions.count(m.session_id) > 0;
                                   });
      if (s->down) {
        answer = caf::make_error(errc::llm_refused, "fake pool down");
      } else if (overflows) {
        answer = caf::make_error(errc::llm_context_overflow, "fake pool: context overflow");
      } else if (!s->script.empty()) {
        answer = std::move(s->script.front());
        s->script.pop_front();
      } else {
        chat_answer a;
        a.content = s->default_content;
        answer = a;
      }
      if (answer && answer->prompt_tokens == 0 && s->report_estimate_as_usage)
        answer->prompt_tokens = estimate;
      if (s->hold) {
        auto p = self->make_response_promise<chat_answer>();
        s->held.push_back(p);
        s->held_answers.push_back(std::move(answer));
        return p;
      }
      if (!answer)
        return answer.error();
      return std::move(*answer);
    },
    [](llm_stats_atom) { return llm_pool_stats{}; },
    [s](caf::ok_atom) { release_held(*s); },
  };
}

// The harness clock's start and the timestamp of the rows the harnesses seed.
constexpr time_ms t0 = 1'700'000'000'000;

// The fakes above on a deterministic system: the store over `db`, the chat and summary
// pools on their scripts, and `clock_ms`, the clock the actors under test read. Stops
// them when destroyed. The base of tests/session_harness.hpp and
// tests/gateway_harness.hpp.
struct session_backends : deterministic_system {
  std::shared_ptr<fake_db> db = std::make_shared<fake_db>();
  std::shared_ptr<llm_script> chat = std::make_shared<llm_script>();
  std::shared_ptr<llm_script> summarizer = std::make_shared<llm_script>();
  session_storage_actor store;
  fake_pool_actor chat_pool;
  fake_pool_actor summary_pool;
  time_ms clock_ms = t0;

  session_backends() {
    store = sys.spawn(fake_store, db);
    chat_pool = sys.spawn(fake_pool, chat);
    summary_pool = sys.spawn(fake_pool, summarizer);
    summarizer->default_content = "short summary";
  }

  ~session_backends() {
    for (auto a : {caf::actor_cast<caf::actor>(store), caf::actor_cast<caf::actor>(chat_pool),
                   caf::actor_cast<caf::actor>(summary_pool)})
      self->send_exit(a, caf::exit_reason::user_shutdown);
    sched.run();
  }
};

} // namespace mneme::test
