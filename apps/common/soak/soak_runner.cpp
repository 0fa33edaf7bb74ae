// One soak run; see soak_runner.hpp.
#include "apps/common/soak/soak_runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

// yaml-cpp 0.7's node headers trip GCC 12's -Wdangling-pointer inside the library.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#include <yaml-cpp/yaml.h>
#pragma GCC diagnostic pop

#include "actors/llm/llm_endpoint.hpp"
#include "actors/runtime.hpp"
#include "apps/common/app_config.hpp"
#include "apps/common/fake_llm/fake_llm_server.hpp"
#include "apps/common/soak/soak_driver.hpp"
#include "apps/common/soak/soak_ledger.hpp"
#include "apps/common/soak/soak_report.hpp"
#include "policies/soak_checks.hpp"
#include "policies/threshold.hpp"
#include "store/recall.hpp"
#include "store/store_reader.hpp"

namespace mneme::soak {

namespace {

using clock_type = std::chrono::steady_clock;
constexpr int exit_ok = 0;
constexpr int exit_failure = 1;
constexpr int exit_usage = 2;
constexpr size_t sampled_users = 5;       // users drawn one by one in the live plot
constexpr double piped_progress_every_s = 10;
constexpr double poll_budget_s = 2;       // one pass of session-state polling at most

double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

int64_t own_rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident))
    return 0;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

// `overlay` merged into `base`: mappings key by key, anything else replaced.
YAML::Node merged(const YAML::Node& base, const YAML::Node& overlay) {
  if (!overlay || overlay.IsNull())
    return YAML::Clone(base);
  if (!base || !base.IsMap() || !overlay.IsMap())
    return YAML::Clone(overlay);
  YAML::Node out = YAML::Clone(base);
  for (const auto& kv : overlay) {
    auto key = kv.first.as<std::string>();
    out[key] = merged(base[key], kv.second);
  }
  return out;
}

// The configuration: --config (or the defaults) under the scenario's `config:` block,
// through the one strict loader.
config_result load_merged_config(const soak_scenario& s, const std::string& config_file) {
  YAML::Node base;
  if (!config_file.empty()) {
    try {
      base = YAML::LoadFile(config_file);
    } catch (const YAML::Exception& e) {
      config_result r;
      r.origin = config_file;
      r.errors.push_back({"", std::string{"cannot read: "} + e.what(), 0, 0});
      return r;
    }
  }
  YAML::Node overlay;
  if (!s.config_yaml.empty())
    overlay = YAML::Load(s.config_yaml);
  auto doc = merged(base, overlay);
  if (!doc || doc.IsNull())
    return load_config_text("{}", "defaults");
  YAML::Emitter out;
  out << doc;
  auto origin = (config_file.empty() ? std::string{"defaults"} : config_file) + " + "
                + s.origin + " config:";
  return load_config_text(out.c_str(), origin);
}

class violation_log {
 public:
  explicit violation_log(std::ostream& out) : out_(out) {}
  // Records a violation once per (invariant, session); prints it when new.
  void add(violation v, bool tty) {
    if (!seen_.insert(v.invariant + "\n" + v.session).second)
      return;
    out_ << (tty ? "\r\033[K" : "") << fmt::format("VIOLATION {} {} at {:.0f} s: {}\n",
                                                   v.invariant, v.session, v.t_s, v.detail);
    all_.push_back(std::move(v));
  }
  const std::vector<violation>& all() const { return all_; }

 private:
  std::ostream& out_;
  std::set<std::string> seen_;
  std::vector<violation> all_;
};

int64_t faults_total(const fakellm::fake_llm_stats& st) {
  int64_t n = 0;
  for (auto x : st.injected)
    n += x;
  return n;
}

} // namespace

int run_soak(soak_scenario sc, const soak_options& opt, std::ostream& out, std::ostream& err) {
  if (opt.users)
    sc.users = *opt.users;
  if (opt.duration_s)
    sc.duration_s = *opt.duration_s;
  auto loaded = load_merged_config(sc, opt.config_file);
  if (!loaded.ok()) {
    err << loaded.describe_errors();
    return exit_usage;
  }
  app_config cfg = *loaded.config;

  fakellm::fake_llm_options fo;
  if (sc.fake_llm.window_tokens)
    fo.answers.window_tokens = *sc.fake_llm.window_tokens;
  if (sc.fake_llm.answer_tokens)
    fo.answers.answer_tokens = *sc.fake_llm.answer_tokens;
  fakellm::fake_llm_server server{fo};
  auto port = server.start();
  if (!port) {
    err << "fake LLM server: " << render_error(port.error()) << "\n";
    return exit_failure;
  }
  cfg.model.base_url = server.base_url();
  if (cfg.summarizer.base_url.empty() || cfg.summarizer.base_url == "builtin")
    cfg.summarizer.base_url = server.base_url();
  auto chat = llm::make_chat_pool_config(cfg.model, cfg.chat);
  auto summary = llm::make_summary_pool_config(cfg.summarizer, cfg.model, cfg.compression);
  if (!chat || !summary) {
    err << render_error(!chat ? chat.error() : summary.error()) << "\n";
    return exit_usage;
  }
  runtime_config rc;
  rc.compression = cfg.compression;
  rc.model = cfg.model;
  rc.chat = *chat;
  rc.summarizer = *summary;
  rc.database = cfg.database;
  rc.gateway = cfg.gateway;
  if (opt.db.empty()) {
    char tmpl[] = "/tmp/mneme-soak-XXXXXX";
    if (!mkdtemp(tmpl)) {
      err << "cannot create a temporary directory\n";
      return exit_failure;
    }
    rc.database.path = std::string{tmpl} + "/mneme.db";
    // A fresh scratch database: NORMAL sync (durable against a crash of this process,
    // which is what the run checks; not against power loss).
    rc.database.synchronous_full = false;
  } else {
    rc.database.path = opt.db;
  }

  auto th = compute_threshold(rc.compression, rc.model);
  int64_t answer_tokens = fo.answers.answer_tokens;
  int64_t live_bound =
    sc.invariants.max_live_tokens > 0
      ? sc.invariants.max_live_tokens
      : derived_live_bound(th.threshold, sc.invariants.live_bound_factor,
                           largest_message_tokens(sc.mix), answer_tokens);

  out << fmt::format("mneme soak: scenario {} ({}), {} users for {:.0f} s\n", sc.name, sc.origin,
                     sc.users, sc.duration_s);
  out << fmt::format("fake LLM    {} with {} fault rules\n", server.base_url(),
                     sc.fake_llm.plan.rules.size());
  out << fmt::format("database    {}\n", rc.database.path);
  out << fmt::format("threshold   {}\n", describe(th));
  out << fmt::format("live bound  {} tokens{}\n", live_bound,
                     sc.invariants.max_live_tokens > 0 ? " (scenario)" : " (derived)");
  out.flush();

  soak_result result;
  result.scenario = &sc;
  result.database = rc.database.path;
  result.threshold_tokens = th.threshold;
  result.live_bound = live_bound;

  caf::actor_system_config sys_cfg;
  register_mneme_types(sys_cfg);
  sys_cfg.set("logger.verbosity", caf::atom("quiet"));
  violation_log violations{out};
  auto begin = clock_type::now();
  {
    caf::actor_system sys{sys_cfg};
    auto started = runtime::start(sys, rc);
    if (!started) {
      err << "runtime: " << render_error(started.error()) << "\n";
      return exit_failure;
    }
    auto& rt = **started;
    auto ledger = std::make_shared<soak_ledger>(sc.users);
    if (auto e = server.set_scenario(sc.fake_llm)) {
      err << "fake LLM scenario: " << render_error(e) << "\n";
      return exit_usage;
    }
    auto t0 = clock_type::now();
    driver_params dp;
    dp.gateway = rt.gateway();
    dp.ledger = ledger;
    dp.users = sc.users;
    dp.seed = sc.seed;
    dp.think_ms = sc.think_ms;
    dp.mix = sc.mix;
    dp.turn_timeout = rt.turn_timeout();
    dp.t0 = t0;
    auto driver = spawn_driver(sys, dp);
    caf::scoped_actor self{sys};

    auto supervisor_stats_now = [&] {
      supervisor_stats st;
      self->request(rt.supervisor(), std::chrono::seconds(10), sv_stats_atom_v)
        .receive([&](supervisor_stats& s) { st = s; }, [&](caf::error&) {});
      return st;
    };
    int64_t poll_cursor = 0;
    std::map<std::string, std::pair<std::string, int64_t>> compactions_seen;
    std::map<std::string, std::vector<double>> compaction_times;
    auto& metrics = *rt.metrics();
    std::array<uint64_t, runtime_metrics::trigger_slots> seen_committed{}, seen_fallback{};
    // Committed compactions since the last call, from the runtime's counters.
    auto sample_compactions = [&](double t) {
      for (size_t tr = 0; tr < runtime_metrics::trigger_slots; ++tr) {
        auto committed = metrics.compactions[tr][static_cast<size_t>(
                                                     compaction_outcome_label::committed)]
                           .load(std::memory_order_relaxed);
        auto fallback = metrics.compactions[tr][static_cast<size_t>(
                                                    compaction_outcome_label::fallback)]
                          .load(std::memory_order_relaxed);
        for (; seen_committed[tr] < committed; ++seen_committed[tr])
          ledger->compacted({t, "", static_cast<trigger>(tr), false, 0, 0});
        for (; seen_fallback[tr] < fallback; ++seen_fallback[tr])
          ledger->compacted({t, "", static_cast<trigger>(tr), true, 0, 0});
      }
    };
    auto continuous_checks = [&](double t) {
      for (const auto& [key, peak] : ledger->live_peaks())
        if (peak > live_bound)
          violations.add({"live_bound", key,
                          fmt::format("live context {} tokens > bound {} (threshold {})", peak,
                                      live_bound, th.threshold), t},
                         opt.progress_tty);
      // Every session's state, also while its turns fail: the live context and the
      // compactions it committed since the last poll. A pass stops after its budget and
      // the next one continues where it stopped.
      auto pass_start = clock_type::now();
      for (int64_t n = 0; n < sc.users && since(pass_start) < poll_budget_s; ++n) {
        auto user = poll_cursor;
        poll_cursor = (poll_cursor + 1) % sc.users;
        auto key = user_key(user);
        self->request(rt.gateway(), std::chrono::milliseconds(500), gw_state_atom_v, key)
          .receive(
            [&](session_snapshot& snap) {
              ledger->observe_live(user, key, snap.live_tokens);
              int64_t total = 0;
              for (auto c : snap.compactions_by_trigger)
                total += c;
              auto& seen = compactions_seen[key];
              // A new session actor (reset, rehydration) starts its counts anew.
              auto fresh = total < seen.second || snap.record.id != seen.first;
              for (int64_t i = fresh ? 0 : seen.second; i < total; ++i)
                compaction_times[key].push_back(t);
              seen = {snap.record.id, total};
            },
            [&](caf::error&) {});
      }
      for (auto& [key, ts] : compaction_times) {
        auto n = max_in_window(ts, 3600);
        result.max_compactions_per_hour = std::max(result.max_compactions_per_hour, n);
        if (n > sc.invariants.max_compactions_per_hour)
          violations.add({"compaction_loop", key,
                          fmt::format("{} compactions within one hour > bound {}", n,
                                      sc.invariants.max_compactions_per_hour), t},
                         opt.progress_tty);
      }
      auto snap = ledger->snapshot();
      if (snap.timeouts > 0)
        violations.add({"turn_unanswered", "",
                        fmt::format("{} turns got no answer within {} ms", snap.timeouts,
                                    rt.turn_timeout().count()), t},
                       opt.progress_tty);
      auto sv = supervisor_stats_now();
      if (sv.restarts > 0)
        violations.add({"actor_failure", "",
                        fmt::format("{} session actors crashed and were restarted",
                                    sv.restarts), t},
                       opt.progress_tty);
    };

    std::deque<std::pair<double, double>> recent;   // (t, latency ms) of the last 10 s
    size_t turn_cursor = 0;
    double next_sample = 0, next_check = sc.invariants.check_every_s, next_line = 0;
    int64_t last_answered = 0;
    double last_rate_t = 0;
    double rate = 0;
    auto tick = [&](double t, bool draining) {
      if (t >= next_sample) {
        next_sample = t + 1;
        sample_compactions(t);
        auto raw = own_rss_bytes();
        result.rss_raw.push_back({t, raw});
        result.rss.push_back({t, raw - ledger->approx_bytes()});
        auto live = ledger->last_live_tokens();
        live_sample ls;
        ls.t_s = t;
        std::vector<double> v(live.begin(), live.end());
        ls.max = live.empty() ? 0 : *std::max_element(live.begin(), live.end());
        ls.p50 = static_cast<int64_t>(percentile(v, 50).value_or(0));
        ls.p90 = static_cast<int64_t>(percentile(v, 90).value_or(0));
        for (size_t i = 0; i < std::min(sampled_users, live.size()); ++i)
          ls.sampled.push_back(live[i]);
        result.live.push_back(std::move(ls));
      }
      for (const auto& e : ledger->turns_since(turn_cursor))
        if (e.ok)
          recent.emplace_back(e.t_s, e.latency_ms);
      while (!recent.empty() && recent.front().first < t - 10)
        recent.pop_front();
      if (t >= next_check) {
        next_check = t + sc.invariants.check_every_s;
        continuous_checks(t);
      }
      bool line_due = opt.progress_tty || t >= next_line;
      if (!line_due)
        return;
      next_line = t + piped_progress_every_s;
      auto snap = ledger->snapshot();
      if (t - last_rate_t >= 1 || last_rate_t == 0) {
        rate = t > last_rate_t ? static_cast<double>(snap.answered - last_answered)
                                   / (t - last_rate_t) : 0;
        last_answered = snap.answered;
        last_rate_t = t;
      }
      std::vector<double> lat;
      for (const auto& r : recent)
        lat.push_back(r.second);
      auto p99 = percentile(lat, 99).value_or(0);
      auto eta = draining ? std::string{"draining"}
                          : fmt::format("ETA {:.0f} s", std::max(0.0, sc.duration_s - t));
      auto line = fmt::format(
        "t={:>5.0f}s sessions {} turns {} ({:.1f}/s) tool rows {} failed {} compactions {} "
        "({} fallback) resets {} faults {} p99 {:.0f} ms max-live {} {} violations {}",
        t, snap.sessions, snap.answered, rate, snap.appended, snap.failed + snap.failed_appends,
        snap.compactions,
        snap.fallback_compactions, snap.resets, faults_total(server.stats()), p99,
        snap.max_live_tokens, eta, violations.all().size());
      if (opt.progress_tty)
        out << "\r\033[K" << line << std::flush;
      else
        out << line << "\n" << std::flush;
    };

    while (since(t0) < sc.duration_s) {
      std::this_thread::sleep_for(std::chrono::milliseconds(opt.progress_tty ? 250 : 500));
      tick(since(t0), false);
    }
    ledger->stopping.store(true);
    result.drive_s = since(t0);
    auto drain_until = result.drive_s + sc.invariants.drain_s;
    while (ledger->in_flight.load() > 0 && since(t0) < drain_until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      tick(since(t0), true);
    }
    double t_end = since(t0);
    if (auto left = ledger->in_flight.load(); left > 0)
      violations.add({"drain", "",
                      fmt::format("{} turns still in flight {:.0f} s after the end", left,
                                  sc.invariants.drain_s), t_end},
                     opt.progress_tty);
    self->send_exit(driver, caf::exit_reason::user_shutdown);
    tick(t_end, true);
    if (opt.progress_tty)
      out << "\n";
    continuous_checks(t_end);
    sample_compactions(t_end);
    auto sv = supervisor_stats_now();
    result.supervisor_restarts = sv.restarts;
    result.supervisor_exhausted = sv.exhausted;
    auto fstats = server.stats();
    result.faults_injected = faults_total(fstats);
    for (int k = 0; k < fakellm::fault_kind_count; ++k)
      if (fstats.injected[static_cast<size_t>(k)] > 0)
        result.faults_by_kind[std::string{to_string(static_cast<fakellm::fault_kind>(k))}] =
          fstats.injected[static_cast<size_t>(k)];
    result.llm_chat_requests = fstats.chat_requests;
    result.llm_summary_requests = fstats.summary_requests;

    // End of run: read back through a read-only connection beside the writer.
    out << "checking    every acknowledged message in the store, every marker in recall\n"
        << std::flush;
    auto reader = store_reader::open(rc.database);
    if (!reader) {
      violations.add({"store_readback", "", "cannot open the database read-only: "
                                               + render_error(reader.error()), t_end},
                     false);
    } else {
      session_filter all;
      all.limit = 100000;
      auto sessions = (*reader)->sessions(all);
      std::map<std::string, stored_rows> by_tag;
      if (!sessions) {
        violations.add({"store_readback", "", render_error(sessions.error()), t_end}, false);
      } else {
        for (const auto& rec : *sessions) {
          auto rows = (*reader)->range(rec.id, 1, std::numeric_limits<int64_t>::max());
          if (!rows) {
            violations.add({"store_readback", rec.id, render_error(rows.error()), t_end}, false);
            continue;
          }
          for (const auto& m : *rows) {
            if (m.is_summary)
              continue;
            if (auto tag = tag_of(m.content)) {
              auto& s = by_tag[*tag];
              s.tag = *tag;
              s.copies.push_back({rec.id, content_hash(m.content)});
            }
          }
        }
      }
      std::vector<stored_rows> stored;
      for (const auto& [tag, rows] : by_tag)
        stored.push_back(rows);
      result.ledger = compare_ledger(ledger->sent_records(), stored);
      if (result.ledger.lost > 0)
        violations.add({"lost_message", "",
                        fmt::format("{} acknowledged messages are not in the store, e.g. {}",
                                    result.ledger.lost, result.ledger.examples.front()), t_end},
                       false);
      if (result.ledger.duplicated > 0 || result.ledger.altered > 0)
        violations.add({"stored_not_once", "",
                        fmt::format("{} duplicated, {} altered, e.g. {}",
                                    result.ledger.duplicated, result.ledger.altered,
                                    result.ledger.examples.front()), t_end},
                       false);

      auto markers = ledger->markers();
      result.markers_planted = static_cast<int64_t>(markers.size());
      for (const auto& mk : markers) {
        recall_request req;
        req.user_id = mk.user_id;
        req.query = mk.marker;
        req.max_sessions = recall_max_sessions;
        auto found = recall_search((*reader)->connection(), req);
        // Its sessions: those that hold the message (a reset during the turn may have
        // answered from the new session while the row stayed in the old one).
        std::set<std::string> homes{mk.session_id};
        if (auto it = by_tag.find(mk.tag); it != by_tag.end()) {
          homes.clear();
          for (const auto& c : it->second.copies)
            homes.insert(c.session_id);
        }
        bool hit = false, archived = false;
        if (found)
          for (const auto& h : found->hits)
            if (homes.count(h.hit.session_id) > 0) {
              hit = true;
              archived = h.kind == recall_hit_kind::archived;
            }
        if (!hit) {
          ++result.markers_unfindable;
          violations.add({"unfindable_marker", mk.session_id,
                          fmt::format("'{}' of {} not found in its session{}", mk.marker,
                                      mk.user_id,
                                      found ? fmt::format(" ({} hits)", found->hits.size())
                                            : ": " + render_error(found.error())), t_end},
                         false);
        }
        result.markers_found_archived += archived ? 1 : 0;
      }
    }
    rt.stop();
    result.totals = ledger->snapshot();
    result.errors = ledger->errors();
    result.turns = ledger->turns();
    result.compactions = ledger->compactions();
  }
  server.stop();
  result.total_s = since(begin);

  for (const auto& c : result.compactions) {
    ++result.compactions_by_trigger[std::string{to_string(c.by)}];
    if (!c.used_fallback)
      continue;
    for (const auto& w : outage_windows(sc))
      if (w.purpose != "chat" && c.t_s >= w.from_s && c.t_s <= w.to_s + 5) {
        ++result.fallback_in_outage;
        break;
      }
  }
  if (sc.invariants.require_fallback_in_outage && result.fallback_in_outage == 0)
    violations.add({"fallback_in_outage", "",
                    fmt::format("no compaction with the local fallback inside a summarizer "
                                "outage ({} fallback compactions in all)",
                                result.totals.fallback_compactions), result.drive_s},
                   false);
  result.rss_check = check_rss_plateau(result.rss, sc.invariants.rss_max_growth);
  if (result.rss_check.conclusive && !result.rss_check.plateaued)
    violations.add({"rss_plateau", "",
                    fmt::format("RSS grew {:.1f} % over the second half ({} -> {} bytes), "
                                "bound {:.0f} %", result.rss_check.growth * 100,
                                result.rss_check.mid_bytes, result.rss_check.max_late_bytes,
                                sc.invariants.rss_max_growth * 100), result.drive_s},
                   false);
  result.violations = violations.all();

  std::string why;
  auto md = write_report(result, opt.report_dir, why);
  auto j = report_json(result);
  out << fmt::format("result      {}: {} sent, {} stored, {} lost, {} unfindable markers of {}, "
                     "{} compactions ({} fallback), max live {} / bound {}, {} faults injected\n",
                     result.violations.empty() ? "PASSED" : "FAILED", result.ledger.sent,
                     result.ledger.stored, result.ledger.lost, result.markers_unfindable,
                     result.markers_planted, result.totals.compactions,
                     result.totals.fallback_compactions, result.totals.max_live_tokens,
                     live_bound, result.faults_injected);
  for (const auto& v : result.violations)
    out << fmt::format("violation   {} {}: {}\n", v.invariant, v.session, v.detail);
  if (md.empty()) {
    err << "report: " << why << "\n";
    return exit_failure;
  }
  out << fmt::format("report      {} (report.json and the plots beside it)\n", md);
  return result.violations.empty() ? exit_ok : exit_failure;
}

} // namespace mneme::soak
