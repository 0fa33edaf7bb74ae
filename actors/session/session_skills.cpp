// Skills on demand inside a session; see session_skills.hpp.
#include "actors/session/session_skills.hpp"

#include <algorithm>
#include <cassert>
#include <memory>

#include "actors/gateway/skills_loader.hpp"
#include "policies/client_text.hpp"
#include "policies/row_replacement.hpp"
#include "policies/skills_index.hpp"
#include "policies/token_estimate.hpp"

namespace mneme::session_detail {

namespace {

// The live rows holding a loaded copy of `name`, as replacements by the marker.
std::vector<row_replacement> unload_plan(const std::vector<message>& live,
                                         const std::string& name) {
  std::vector<row_replacement> plan;
  auto marker = unloaded_skill_marker(name);
  for (std::size_t i = 0; i < live.size(); ++i) {
    auto loaded = loaded_skill_name(live[i].content);
    if (!loaded || *loaded != name || live[i].id == 0)
      continue;
    row_replacement r;
    r.index = i;
    r.original_id = live[i].id;
    r.content = marker;
    r.tokens_reclaimed = std::max<int64_t>(
      1, estimate_text_tokens(live[i].content) - estimate_text_tokens(marker));
    plan.push_back(std::move(r));
  }
  return plan;
}

caf::result<int64_t> load(session_ptr self, const std::string& name) {
  auto& st = self->state;
  for (const auto& m : st.live)
    if (auto loaded = loaded_skill_name(m.content); loaded && *loaded == name && m.id != 0)
      return m.id;
  auto found = find_skill(name);
  if (!found)
    return caf::make_error(errc::not_found, "no skill '" + name + "' in gateway.skills_dir");
  message row;
  row.role = msg_role::system;
  row.content = loaded_skill_content(*found);
  auto promise = self->make_response_promise<int64_t>();
  auto me = caf::actor_cast<session_actor>(self);
  then_forgetting(self,
      self->request(me, st.params.storage_timeout, ss_append_atom_v, std::move(row)),
      [self, promise](int64_t id) mutable {
        if (self->state.params.metrics)
          self->state.params.metrics->skill_loads.fetch_add(1, std::memory_order_relaxed);
        promise.deliver(id);
      },
          [promise](caf::error& err) mutable { promise.deliver(std::move(err)); });
  st.log().info("session={} event=skill_load name={}", st.record.id, name);
  return promise;
}

caf::result<int64_t> unload(session_ptr self, const std::string& name) {
  auto& st = self->state;
  if (st.compacting)
    return caf::make_error(errc::compaction_in_flight,
                           "session " + st.record.id + ": a compaction is running");
  auto plan = unload_plan(st.live, name);
  if (plan.empty())
    return caf::make_error(errc::not_found, "skill '" + name + "' is not loaded");
  auto promise = self->make_response_promise<int64_t>();
  commit_skill_unload(self, std::move(plan), name,
                      [promise](caf::expected<int64_t> id) mutable {
                        if (id)
                          promise.deliver(*id);
                        else
                          promise.deliver(std::move(id.error()));
                      });
  return promise;
}

} // namespace

void commit_skill_unload(session_ptr self, std::vector<row_replacement> plan,
                         const std::string& name,
                         std::function<void(caf::expected<int64_t>)> done) {
  auto& st = self->state;
  assert(!st.compacting && !plan.empty());
  auto applied = apply_replacements(st.live, plan);
  if (applied.status != replace_status::applied) {
    done(caf::make_error(errc::internal,
                         "skill unload: " + std::string{to_string(applied.status)}));
    return;
  }
  replacement_commit c;
  c.session_id = st.record.id;
  c.archive_ids = applied.archived_ids;
  std::vector<int64_t> originals;
  for (const auto& r : plan) {
    auto row = applied.live[r.index];
    row.session_id = st.record.id;
    c.rows.push_back(std::move(row));
    c.positions.push_back(r.original_id);
    originals.push_back(r.original_id);
  }
  st.compacting = true; // one pipeline at a time: the live order must not move
  auto finish = [self]() {
    auto& st = self->state;
    st.compacting = false;
    auto waiting = std::move(st.after_compaction);
    st.after_compaction.clear();
    for (auto& w : waiting)
      w();
  };
  then_forgetting(self,
      self->request(st.deps.storage, st.params.storage_timeout, st_replace_atom_v, std::move(c)),
      [self, done, finish, originals, name](std::vector<message>& stored) mutable {
        auto& st = self->state;
        // Rows appended meanwhile sit after the tail; each original is found by id.
        for (std::size_t i = 0; i < stored.size() && i < originals.size(); ++i) {
          auto it = std::find_if(st.live.begin(), st.live.end(), [&](const message& m) {
            return m.id == originals[i];
          });
          if (it == st.live.end())
            continue;
          if (stored[i].token_estimate <= 0)
            stored[i].token_estimate = estimate_message_tokens(stored[i]);
          st.live_tokens += stored[i].token_estimate - it->token_estimate;
          *it = stored[i];
        }
        if (st.params.metrics && !stored.empty())
          st.params.metrics->skill_unloads.fetch_add(1, std::memory_order_relaxed);
        st.log().info("session={} event=skill_unload name={} rows={}", st.record.id, name,
                      stored.size());
        finish();
        if (stored.empty())
          done(caf::make_error(errc::internal, "skill unload: nothing stored"));
        else
          done(stored.back().id);
      },
      [self, done, finish, name](caf::error& err) mutable {
        self->state.log().warn("session={} event=skill_unload_failed name={} error={}",
                               self->state.record.id, log_quoted(name),
                               log_quoted(render_error(err)));
        finish();
        done(std::move(err));
      });
}

caf::result<int64_t> on_skill(session_ptr self, const std::string& name, bool load_it) {
  return load_it ? load(self, name) : unload(self, name);
}

} // namespace mneme::session_detail
