// The in-process soak target; see soak_inprocess_target.hpp.
#include "apps/common/soak/soak_inprocess_target.hpp"

#include <unistd.h>

#include <cassert>
#include <fstream>
#include <limits>

#include "apps/common/soak/soak_driver.hpp"
#include "messages/mneme_types.hpp"
#include "store/compaction_log.hpp"
#include "store/sqlite/sqlite_recall.hpp"
#include "store/sqlite/store_reader.hpp"

namespace mneme::soak {

namespace {

int64_t own_rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident))
    return 0;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

} // namespace

inprocess_target::inprocess_target(std::unique_ptr<fakellm::fake_llm_server> llm,
                                   fakellm::scenario faults, runtime_config rc)
  : llm_(std::move(llm)), faults_(std::move(faults)), rc_(std::move(rc)) {}

caf::expected<std::unique_ptr<inprocess_target>>
inprocess_target::start(std::unique_ptr<fakellm::fake_llm_server> llm, fakellm::scenario faults,
                        runtime_config rc) {
  for (size_t i = 0; i < faults.plan.rules.size(); ++i)
    if (auto why = fakellm::validate(faults.plan.rules[i]); !why.empty())
      return caf::make_error(errc::config_invalid,
                             "fake_llm.faults[" + std::to_string(i) + "]: " + why);
  std::unique_ptr<inprocess_target> t{
    new inprocess_target(std::move(llm), std::move(faults), std::move(rc))};
  auto host = runtime_host::start(t->rc_);
  if (!host)
    return std::move(host.error());
  t->host_ = std::move(*host);
  t->rt_ = &t->host_->rt();
  t->self_ = std::make_unique<caf::scoped_actor>(t->host_->system());
  return t;
}

inprocess_target::~inprocess_target() { shutdown(); }

void inprocess_target::start_driving(const drive_plan& plan) {
  ledger_ = plan.ledger;
  // The scenario's clock starts with the drive (its fault windows are run time).
  auto set = llm_->set_scenario(faults_);
  assert(!set && "validated by start()");
  (void)set;
  driver_params dp;
  dp.gateway = rt_->gateway();
  dp.ledger = plan.ledger;
  dp.users = plan.users;
  dp.seed = plan.seed;
  dp.think_ms = plan.think_ms;
  dp.mix = plan.mix;
  dp.turn_timeout = rt_->turn_timeout();
  dp.t0 = plan.t0;
  driver_ = spawn_driver(host_->system(), dp);
}

void inprocess_target::stop_driving() {
  if (driver_)
    (*self_)->send_exit(driver_, caf::exit_reason::user_shutdown);
}

std::chrono::milliseconds inprocess_target::turn_timeout() const { return rt_->turn_timeout(); }

int64_t inprocess_target::max_tool_rounds() const { return rc_.gateway.max_tool_rounds; }

std::optional<session_poll> inprocess_target::poll_session(const std::string& key,
                                                           const std::string&) {
  // The in-process driver talks to the gateway with the key as it is (no namespace).
  std::optional<session_poll> out;
  (*self_)->request(rt_->gateway(), std::chrono::milliseconds(500), gw_state_atom_v, key)
    .receive(
      [&](session_snapshot& snap) {
        session_poll p;
        p.session_id = snap.record.id;
        p.live_tokens = snap.live_tokens;
        for (auto c : snap.compactions_by_trigger)
          p.compactions += c;
        p.threshold_tokens = snap.threshold_tokens;
        p.context_window = snap.context_window;
        out = std::move(p);
      },
      [&](caf::error&) {});
  return out;
}

std::optional<compaction_counts> inprocess_target::compactions() {
  const auto& m = *rt_->metrics();
  compaction_counts c;
  for (size_t tr = 0; tr < runtime_metrics::trigger_slots; ++tr) {
    c.committed[tr] = m.compactions[tr][static_cast<size_t>(compaction_outcome_label::committed)]
                        .load(std::memory_order_relaxed);
    c.fallback[tr] = m.compactions[tr][static_cast<size_t>(compaction_outcome_label::fallback)]
                       .load(std::memory_order_relaxed);
  }
  return c;
}

std::optional<supervisor_stats> inprocess_target::supervisor() {
  std::optional<supervisor_stats> out;
  (*self_)->request(rt_->supervisor(), std::chrono::seconds(10), sv_stats_atom_v)
    .receive([&](supervisor_stats& s) { out = s; }, [&](caf::error&) {});
  return out;
}

std::optional<rss_figures> inprocess_target::rss() {
  auto raw = own_rss_bytes();
  return rss_figures{raw, raw - (ledger_ ? ledger_->approx_bytes() : 0)};
}

fault_figures inprocess_target::faults() {
  auto st = llm_->stats();
  fault_figures f;
  for (int k = 0; k < fakellm::fault_kind_count; ++k) {
    auto n = st.injected[static_cast<size_t>(k)];
    f.total += n;
    if (n > 0)
      f.by_kind[std::string{to_string(static_cast<fakellm::fault_kind>(k))}] = n;
  }
  f.chat_requests = st.chat_requests;
  f.summary_requests = st.summary_requests;
  f.pairing_audited = true;
  f.orphan_tool_calls = st.orphan_tool_calls;
  f.orphan_tool_results = st.orphan_tool_results;
  f.requests_with_orphans = st.requests_with_orphans;
  return f;
}

std::vector<std::string> inprocess_target::each_session(
  const std::function<std::string(store_reader& reader, const std::string& session_id)>& visit) {
  auto reader = store_reader::open(rc_.database);
  if (!reader)
    return {"cannot open the database read-only: " + render_error(reader.error())};
  session_filter all;
  all.limit = 100000;
  auto sessions = (*reader)->sessions(all);
  if (!sessions)
    return {render_error(sessions.error())};
  std::vector<std::string> problems;
  for (const auto& rec : *sessions)
    if (auto problem = visit(**reader, rec.id); !problem.empty())
      problems.push_back(rec.id + ": " + problem);
  return problems;
}

std::vector<std::string> inprocess_target::visit_stored_rows(
  const std::function<void(const std::string&, const std::string&)>& visit) {
  return each_session([&](store_reader& reader, const std::string& id) {
    auto rows = reader.range(id, 1, std::numeric_limits<int64_t>::max());
    if (!rows)
      return render_error(rows.error());
    for (const auto& m : *rows)
      if (!m.is_summary)
        visit(id, m.content);
    return std::string{};
  });
}

std::vector<std::string> inprocess_target::visit_compaction_log(
  const std::function<void(const compaction_log_entry&)>& visit) {
  return each_session([&](store_reader& reader, const std::string& id) {
    auto log = reader.compaction_log(id, compaction_log_max_rows);
    if (!log)
      return render_error(log.error());
    for (const auto& e : *log)
      visit(e);
    return std::string{};
  });
}

caf::expected<std::string> inprocess_target::ask(const std::string& key,
                                                 const std::string& user,
                                                 const std::string& text) {
  caf::expected<std::string> out{caf::error{}};
  (*self_)->request(rt_->gateway(), rt_->turn_timeout(), gw_message_atom_v, key, user, text)
    .receive([&](turn_reply& r) { out = std::move(r.answer); },
             [&](caf::error& err) { out = std::move(err); });
  return out;
}

caf::expected<std::vector<marker_hit>> inprocess_target::search(const std::string& user_id,
                                                                const std::string& query) {
  if (!reader_) {
    auto opened = store_reader::open(rc_.database);
    if (!opened)
      return std::move(opened.error());
    reader_ = std::move(*opened);
  }
  recall_request req;
  req.user_id = user_id;
  req.query = query;
  req.max_sessions = recall_max_sessions;
  auto found = recall_search(reader_->connection(), req);
  if (!found)
    return std::move(found.error());
  std::vector<marker_hit> hits;
  for (const auto& h : found->hits)
    hits.push_back({h.hit.session_id, h.kind == recall_hit_kind::archived});
  return hits;
}

void inprocess_target::shutdown() {
  reader_.reset();
  if (host_)
    host_->stop();
  self_.reset();
  rt_ = nullptr;
  host_.reset();
  if (llm_)
    llm_->stop();
}

} // namespace mneme::soak
