// The built-in tools inside a session's tool loop (issue 29 item 7, seed 004;
// policies/builtin_tools.hpp decides, this file turns the decisions into requests):
//   session_search -> the recall pool (deps.recall), as the user of this session;
//   memory         -> the storage actor's facts (st_facts/st_fact_put/st_fact_del), as
//                     the user of this session, source_session = this session;
//   skill_view     -> the process's skill set (find_skill): the SKILL.md is the result.
// Every request is asynchronous (then_forgetting): the session actor keeps handling
// messages while recall or storage work.
//
// The loop after an answer (after_answer, called where a turn used to end after T2):
//   1. the answer's calls are split: builtin ones (offered builtins, by name) and the
//      client's;
//   2. every builtin call runs in call order; its result (bounded) is stored as a tool
//      row answering it and reported in turn_reply::builtin_calls;
//   3. client calls left -> the turn ends with only those as tool_calls (pending: the
//      client's tool_results answer them; the builtin ones are answered already);
//      none -> the round cap (tool_rounds_in_loop counts every round, builtin or not),
//      then oversized rows, then pre_call_check (T1, window guard) and the next call;
//   4. a text answer (no calls) ends the loop: every skill_view result still live is
//      replaced by its unloaded marker (one row replacement commit), then the turn ends.
// Failures: a builtin that fails (recall unavailable or overloaded, a storage error, an
// unknown skill) stores an error text as its result and the loop goes on; a failed
// append of a result ends the turn with that error (like a client result's append).
#include <algorithm>
#include <memory>

#include <nlohmann/json.hpp>

#include "actors/gateway/skills_loader.hpp"
#include "actors/session/session_skills.hpp"
#include "actors/session/session_state.hpp"
#include "policies/builtin_tools.hpp"
#include "policies/client_text.hpp"
#include "policies/skills_index.hpp"
#include "policies/tool_loop.hpp"

namespace mneme::session_detail {

namespace {

using json = nlohmann::json;
using result_fn = std::function<void(std::string)>;

// The names of the client's tools (`tools_json` is a JSON array checked by the API).
std::vector<std::string> client_tool_names(const std::string& tools_json) {
  std::vector<std::string> names;
  auto doc = json::parse(tools_json, nullptr, false);
  if (!doc.is_array())
    return names;
  for (const auto& t : doc) {
    if (!t.is_object())
      continue;
    auto f = t.find("function");
    if (f == t.end() || !f->is_object())
      continue;
    auto n = f->find("name");
    if (n != f->end() && n->is_string())
      names.push_back(n->get<std::string>());
  }
  return names;
}

// The client's array when it is a non-empty JSON array, else "".
std::string_view client_tools(const std::string& tools_json) {
  auto first = tools_json.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || tools_json[first] != '[')
    return {};
  auto next = tools_json.find_first_not_of(" \t\r\n", first + 1);
  if (next == std::string::npos || tools_json[next] == ']')
    return {}; // "[]": cleared
  return tools_json;
}

const session_state::tool_offer& offer_of(const session_state& st) {
  auto& o = st.offer;
  const bool builtins = st.turn_opts.builtin_tools;
  if (o.ready && o.source == st.tools_json && o.builtins == builtins)
    return o;
  auto client = client_tools(st.tools_json);
  o.offered = offer_builtins(builtins ? st.params.builtin_tools : builtin_set{},
                             client.empty() ? std::vector<std::string>{}
                                            : client_tool_names(st.tools_json));
  o.tools = merge_tools_json(client, o.offered);
  o.source = st.tools_json;
  o.builtins = builtins;
  o.ready = true;
  return o;
}

tool_args parse_arguments(const std::string& text) {
  tool_args a;
  auto doc = json::parse(text, nullptr, false);
  if (!doc.is_object())
    return a;
  a.object = true;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    tool_arg v;
    if (it->is_string()) {
      v.type = tool_arg::kind::string;
      v.text = it->get<std::string>();
    } else if (it->is_number_integer()) {
      v.type = tool_arg::kind::integer;
      v.number = it->get<int64_t>();
    }
    a.values.emplace(it.key(), std::move(v));
  }
  return a;
}

search_view view_of(const recall_hit& h) {
  search_view v;
  v.session_id = h.hit.session_id;
  v.kind = std::string{to_string(h.kind)};
  v.snippet = h.snippet;
  v.first = h.first;
  v.window = h.window;
  v.last = h.last;
  return v;
}

void run_search(session_ptr self, builtin_request r, result_fn done) {
  auto& st = self->state;
  if (!st.deps.recall) {
    done(builtin_failure("session_search: recall is unavailable"));
    return;
  }
  recall_request req;
  req.user_id = st.record.user_id; // tenant scope: this session's user, never another
  req.query = r.query;
  // One more: the current session's own conversation may take a slot; it is left out.
  req.max_sessions = std::min<int32_t>(r.limit + 1, recall_max_sessions);
  if (auto mode = parse_recall_mode(r.mode))
    req.mode = *mode; // validated by the policy; "" keeps automatic
  then_forgetting(
    self, self->request(st.deps.recall, st.params.storage_timeout, rc_search_atom_v, std::move(req)),
    [self, r, done](recall_result& res) {
      auto& st = self->state;
      std::vector<search_view> views;
      for (const auto& h : res.hits) {
        if (h.hit.session_id == st.record.id)
          continue;
        if (static_cast<int32_t>(views.size()) >= r.limit)
          break;
        views.push_back(view_of(h));
      }
      done(render_search_result(r.query, views));
    },
    [done](caf::error& err) { done(builtin_failure("session_search: " + render_error(err))); });
}

void run_memory(session_ptr self, builtin_request r, result_fn done) {
  auto& st = self->state;
  auto fail = [done](caf::error& err) { done(builtin_failure("memory: " + render_error(err))); };
  switch (r.action) {
    case memory_action::set: {
      fact_record f;
      f.user_id = st.record.user_id;
      f.key = r.key;
      f.value = r.value;
      f.source_session = st.record.id;
      then_forgetting(
        self, self->request(st.deps.storage, st.params.storage_timeout, st_fact_put_atom_v,
                            std::move(f), st.now()),
        [r, done](fact_record&) { done(render_memory_result(r, {})); }, fail);
      return;
    }
    case memory_action::remove:
      then_forgetting(
        self, self->request(st.deps.storage, st.params.storage_timeout, st_fact_del_atom_v,
                            st.record.user_id, r.key, st.now()),
        [r, done](fact_record&) { done(render_memory_result(r, {})); },
        [r, done](caf::error& err) {
          if (err == errc::not_found)
            done("No fact '" + r.key + "' is remembered; nothing deleted.");
          else
            done(builtin_failure("memory: " + render_error(err)));
        });
      return;
    case memory_action::get:
    case memory_action::search: {
      fact_query q;
      q.user_id = st.record.user_id;
      q.text = r.action == memory_action::get ? r.key : r.query;
      q.limit = r.action == memory_action::get ? 1000 : builtin_facts_list_limit;
      auto ask_storage = [self, r, done, fail](fact_query q) {
        auto& st = self->state;
        then_forgetting(
          self, self->request(st.deps.storage, st.params.storage_timeout, st_facts_atom_v, q),
          [r, done](std::vector<fact_record>& found) {
            std::vector<fact_line> lines;
            for (auto& f : found)
              if (f.active && (r.action == memory_action::search || f.key == r.key))
                lines.push_back({std::move(f.key), std::move(f.value)});
            done(render_memory_result(r, lines));
          },
          fail);
      };
      // A search by meaning too when embeddings are on (store/fact_vectors.hpp); the
      // embedder's failure or silence leaves it to the words.
      if (r.action != memory_action::search || !st.deps.embedder || q.text.empty()) {
        ask_storage(std::move(q));
        return;
      }
      auto text = q.text;
      auto shared_q = std::make_shared<fact_query>(std::move(q));
      then_forgetting(
        self, self->request(st.deps.embedder, st.params.query_embed_timeout, em_query_atom_v,
                            std::move(text)),
        [shared_q, ask_storage](std::vector<float>& v) {
          shared_q->query_vector = std::move(v);
          ask_storage(std::move(*shared_q));
        },
        [shared_q, ask_storage](caf::error&) { ask_storage(std::move(*shared_q)); });
      return;
    }
  }
}

void run_skill_view(session_ptr self, const builtin_request& r, result_fn done) {
  auto& st = self->state;
  for (const auto& m : st.live)
    if (auto loaded = loaded_skill_name(m.content); loaded && *loaded == r.name) {
      done("Skill '" + r.name + "' is already loaded above in this conversation.");
      return;
    }
  auto found = find_skill(r.name);
  if (!found) {
    done(builtin_failure("skill_view: no skill '" + r.name
                         + "'; the skills index in the system prompt lists the names"));
    return;
  }
  if (st.params.metrics)
    st.params.metrics->skill_loads.fetch_add(1, std::memory_order_relaxed);
  st.log().info("session={} event=skill_view name={}", st.record.id, r.name);
  done(skill_view_result(found->name, found->text, st.params.builtin_result_max_bytes));
}

// Runs one builtin call; `done` gets its result text (unbounded).
void run_call(session_ptr self, builtin_tool t, const tool_call& c, result_fn done) {
  auto r = validate_builtin_call(t, parse_arguments(c.arguments));
  if (!r.ok()) {
    done(r.error);
    return;
  }
  switch (t) {
    case builtin_tool::session_search: run_search(self, std::move(r), std::move(done)); return;
    case builtin_tool::memory: run_memory(self, std::move(r), std::move(done)); return;
    case builtin_tool::skill_view: run_skill_view(self, r, std::move(done)); return;
  }
}

// Runs calls[i..] one after the other, storing each result, then `next`.
void run_calls(session_ptr self, std::shared_ptr<std::vector<tool_call>> calls, size_t i,
               std::function<void()> next) {
  if (i >= calls->size()) {
    next();
    return;
  }
  const auto& c = (*calls)[i];
  auto t = builtin_of(c.name, offered_builtins(self->state));
  if (!t) { // the offer changed meanwhile (not expected inside one turn): skip safely
    run_calls(self, calls, i + 1, next);
    return;
  }
  run_call(self, *t, c, [self, calls, i, next](std::string text) {
    auto& st = self->state;
    const auto& c = (*calls)[i];
    message row;
    row.role = msg_role::tool;
    row.tool_call_id = c.id;
    row.tool_name = c.name;
    row.content = c.name == tool_name_of(builtin_tool::skill_view)
                    ? std::move(text) // skill_view_result is bounded with its markers whole
                    : bound_result(text, st.params.builtin_result_max_bytes);
    builtin_call_report report{c.id, c.name, c.arguments,
                               static_cast<int64_t>(row.content.size())};
    st.log().info("session={} event=builtin_call name={} result_bytes={}", st.record.id,
                  c.name, report.result_bytes);
    append_row(self, std::move(row),
               [self, calls, i, next, report](int64_t) {
                 self->state.reply.builtin_calls.push_back(report);
                 run_calls(self, calls, i + 1, next);
               },
               [self](caf::error err) { end_turn(self, std::move(err)); });
  });
}

// Step 4: unloads the loop's skill_view results, then ends the turn.
void unload_then_end(session_ptr self) {
  auto& st = self->state;
  if (st.compacting) {
    st.after_compaction.emplace_back([self] { unload_then_end(self); });
    return;
  }
  auto plan = plan_skill_view_unload(st.live);
  if (plan.empty()) {
    end_turn(self, caf::error{});
    return;
  }
  commit_skill_unload(self, std::move(plan), "skill_view", [self](caf::expected<int64_t> id) {
    if (!id) // the answer is stored: the turn succeeds; the next loop end retries
      self->state.log().warn("session={} event=skill_view_unload_failed error={}",
                             self->state.record.id, log_quoted(render_error(id.error())));
    end_turn(self, caf::error{});
  });
}

} // namespace

const std::string& tools_to_send(const session_state& st) {
  return offer_of(st).tools;
}

const builtin_set& offered_builtins(const session_state& st) {
  return offer_of(st).offered;
}

void after_answer(session_ptr self) {
  if (end_context_after_answer(self))
    return; // the context service's agent runs its own tools
  auto& st = self->state;
  if (st.reply.tool_calls.empty()) {
    unload_then_end(self);
    return;
  }
  auto split = split_calls(st.reply.tool_calls, offered_builtins(st));
  if (split.builtin.empty()) {
    end_turn(self, caf::error{});
    return;
  }
  st.reply.tool_calls = split.client; // only the client's calls are pending
  bool client_left = !split.client.empty();
  auto calls = std::make_shared<std::vector<tool_call>>(std::move(split.builtin));
  run_calls(self, calls, 0, [self, client_left] {
    auto& st = self->state;
    if (client_left) {
      end_turn(self, caf::error{});
      return;
    }
    auto rounds = tool_rounds_in_loop(st.live);
    if (decide_next_round(rounds, std::max<int64_t>(1, st.params.max_tool_rounds))
        == round_verdict::cap_reached) {
      end_at_round_cap(self);
      return;
    }
    // The next model call of the loop, checked like a client continuation's.
    st.attempts.new_turn();
    st.preflight_passes = 0;
    evict_oversized_rows(self, [self] { pre_call_check(self); });
  });
}

} // namespace mneme::session_detail
