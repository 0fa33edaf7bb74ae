// Writing a soak run's report; see soak_report.hpp.
#include "apps/common/soak/soak_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "apps/common/api/json_codec.hpp"
#include "apps/common/soak/soak_figures.hpp"
#include "policies/percentile.hpp"

namespace mneme::soak {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr double compaction_bucket_s = 10;
constexpr double latency_bucket_s = 5;

json latency_json(const std::vector<turn_event>& turns) {
  std::vector<double> ms;
  for (const auto& t : turns)
    if (t.ok)
      ms.push_back(t.latency_ms);
  json j = json::object();
  for (int p : {50, 90, 99, 100})
    j[p == 100 ? std::string{"max"} : fmt::format("p{}", p)] =
      latency_figure(percentile(ms, p / 100.0));
  return j;
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path)
    return false;
  std::string p = path;
  size_t start = 0;
  while (start <= p.size()) {
    auto end = p.find(':', start);
    auto dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::error_code ec;
    if (!dir.empty() && fs::exists(fs::path(dir) / program, ec))
      return true;
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return false;
}

// "pngcairo", "png" or "svg": the first terminal the installed gnuplot knows.
std::string gnuplot_terminal(const fs::path& dir) {
  auto probe = dir / ".terminals.txt";
  auto cmd = fmt::format("gnuplot -e 'set terminal' > '{}' 2>&1 < /dev/null", probe.string());
  std::string terminals;
  if (std::system(cmd.c_str()) == 0) {
    std::ifstream in(probe);
    terminals.assign(std::istreambuf_iterator<char>(in), {});
  }
  fs::remove(probe);
  if (terminals.find("pngcairo") != std::string::npos)
    return "pngcairo";
  if (terminals.find(" png ") != std::string::npos || terminals.find("\npng") != std::string::npos)
    return "png";
  return "svg";
}

struct plot {
  std::string name;   // file stem
  std::string title;
};

// The retention plot's series: a committed attempt by the mode that wrote its summary
// (summarizer, fallback, ...), an attempt that did not commit by its outcome (retried:
// the first summary, below compression.min_retention). Only attempts whose replaced rows
// held identifiers have a retention.
std::map<std::string, std::vector<const retention_point*>> retention_series(const soak_result& r) {
  std::map<std::string, std::vector<const retention_point*>> series;
  for (const auto& p : r.retention)
    if (p.identifiers_in > 0)
      series[p.outcome == "committed" ? p.mode : p.outcome].push_back(&p);
  return series;
}

double retention_of(const retention_point& p) {
  return static_cast<double>(p.identifiers_kept) / static_cast<double>(p.identifiers_in);
}

json retention_json(const soak_result& r) {
  json by = json::object();
  int64_t with_identifiers = 0;
  for (const auto& [name, points] : retention_series(r)) {
    std::vector<double> values;
    int64_t in = 0, kept = 0;
    for (const auto* p : points) {
      values.push_back(retention_of(*p));
      in += p->identifiers_in;
      kept += p->identifiers_kept;
    }
    with_identifiers += static_cast<int64_t>(points.size());
    auto rounded = [](std::optional<double> v) {
      return v ? json(std::round(*v * 1000) / 1000) : json(nullptr);
    };
    by[name] = {{"attempts", points.size()}, {"identifiers_in", in},
                {"identifiers_kept", kept}, {"p10", rounded(percentile(values, 0.10))},
                {"median", rounded(percentile(values, 0.50))}};
  }
  return {{"attempts_logged", r.retention.size()}, {"with_identifiers", with_identifiers},
          {"by_series", by}};
}

void write_data(const soak_result& r, const fs::path& dir) {
  {
    std::ofstream live(dir / "live_tokens.dat");
    live << "# t_s max p50 p90";
    size_t k = r.live.empty() ? 0 : r.live.front().sampled.size();
    for (size_t i = 0; i < k; ++i)
      live << " user" << i;
    live << "\n";
    for (const auto& s : r.live) {
      live << fmt::format("{:.1f} {} {} {}", s.t_s, s.max, s.p50, s.p90);
      for (auto v : s.sampled)
        live << " " << v;
      live << "\n";
    }
  }
  {
    std::set<std::string> triggers;
    std::map<int64_t, std::map<std::string, int64_t>> buckets;
    for (const auto& c : r.compactions) {
      auto name = std::string{to_string(c.by)} + (c.used_fallback ? "+fallback" : "");
      triggers.insert(name);
      ++buckets[static_cast<int64_t>(c.t_s / compaction_bucket_s)][name];
    }
    std::ofstream out(dir / "compactions.dat");
    out << "# t_s";
    for (const auto& t : triggers)
      out << " " << t;
    out << "\n";
    auto last = static_cast<int64_t>(r.drive_s / compaction_bucket_s) + 1;
    for (int64_t b = 0; b <= last; ++b) {
      out << b * compaction_bucket_s;
      for (const auto& t : triggers)
        out << " " << buckets[b][t];
      out << "\n";
    }
  }
  {
    std::map<int64_t, std::vector<double>> buckets;
    for (const auto& t : r.turns)
      if (t.ok)
        buckets[static_cast<int64_t>(t.t_s / latency_bucket_s)].push_back(t.latency_ms);
    std::ofstream out(dir / "latency.dat");
    out << "# t_s p50_ms p90_ms p99_ms\n";
    for (const auto& [b, ms] : buckets)
      out << fmt::format("{} {:.1f} {:.1f} {:.1f}\n", static_cast<double>(b) * latency_bucket_s,
                         *percentile(ms, 0.50), *percentile(ms, 0.90), *percentile(ms, 0.99));
  }
  {
    // One gnuplot data block (`index N`) per series, in retention_series' order.
    std::ofstream out(dir / "retention.dat");
    out << "# t_s retention identifiers_in identifiers_kept\n";
    for (const auto& [name, points] : retention_series(r)) {
      out << "# " << name << "\n";
      for (const auto* p : points)
        out << fmt::format("{:.1f} {:.3f} {} {}\n", p->t_s, retention_of(*p), p->identifiers_in,
                           p->identifiers_kept);
      out << "\n\n";
    }
  }
  {
    std::ofstream out(dir / "rss.dat");
    out << "# t_s rss_minus_runner_records_mb rss_mb\n";
    for (size_t i = 0; i < r.rss.size(); ++i)
      out << fmt::format("{:.1f} {:.1f} {:.1f}\n", r.rss[i].t_s,
                         static_cast<double>(r.rss[i].rss_bytes) / 1048576.0,
                         i < r.rss_raw.size()
                           ? static_cast<double>(r.rss_raw[i].rss_bytes) / 1048576.0 : 0.0);
  }
}

// One gnuplot script per plot; `ext` is png or svg.
void write_scripts(const soak_result& r, const fs::path& dir, const std::string& terminal,
                   const std::string& ext) {
  auto header = [&](std::ofstream& gp, const std::string& name, const std::string& title,
                    const std::string& ylabel) {
    gp << fmt::format("set terminal {} size 1000,500\n", terminal);
    gp << fmt::format("set output '{}.{}'\n", name, ext);
    gp << fmt::format("set title \"{}\"\nset xlabel 'seconds'\nset ylabel '{}'\n", title, ylabel);
    gp << "set key outside right noenhanced\nset termoption noenhanced\nset grid\n";
    int obj = 1;
    for (const auto& w : outage_windows(*r.scenario))
      gp << fmt::format("set object {} rect from {},graph 0 to {},graph 1 fc rgb '{}' "
                        "fs transparent solid 0.25 noborder behind\n",
                        obj++, w.from_s, w.to_s, w.purpose == "summary" ? "#ff9999" : "#ffcc88");
  };
  {
    std::ofstream gp(dir / "live_tokens.gp");
    header(gp, "live_tokens",
           "live context tokens per session (shaded: fault windows, red = summarizer)",
           "tokens");
    gp << fmt::format("set arrow from graph 0,first {0} to graph 1,first {0} nohead dt 2 "
                      "lc rgb 'red'\n", r.live_bound);
    gp << "plot 'live_tokens.dat' using 1:2 with lines lw 2 title 'max', "
          "'' using 1:3 with lines lw 2 title 'p50', '' using 1:4 with lines title 'p90'";
    size_t k = r.live.empty() ? 0 : r.live.front().sampled.size();
    for (size_t i = 0; i < k; ++i)
      gp << fmt::format(", '' using 1:{} with lines dt 3 title 'user {}'", 5 + i, i);
    gp << fmt::format(", {} with lines dt 2 lc rgb 'red' title 'bound'\n", r.live_bound);
  }
  {
    std::ofstream gp(dir / "compactions.gp");
    header(gp, "compactions", "compactions by trigger per 10 s", "compactions");
    gp << "set style data histograms\nset style histogram rowstacked\n"
          "set style fill solid 0.8 border -1\nset boxwidth 0.9\nunset object\n";
    std::set<std::string> triggers;
    for (const auto& c : r.compactions)
      triggers.insert(std::string{to_string(c.by)} + (c.used_fallback ? "+fallback" : ""));
    if (triggers.empty()) {
      gp << "plot 'compactions.dat' using 1 with points title 'none'\n";
    } else {
      // About a dozen labels on the time axis, whatever the run's length.
      auto buckets = static_cast<int64_t>(r.drive_s / compaction_bucket_s) + 2;
      auto every = std::max<int64_t>(1, buckets / 12);
      gp << "plot ";
      int col = 2;
      for (const auto& t : triggers) {
        gp << (col > 2 ? ", " : "")
           << fmt::format("'compactions.dat' using {}:xtic(int($0)%{}==0?sprintf('%d',$1):'') "
                          "title '{}'", col, every, t);
        ++col;
      }
      gp << "\n";
    }
  }
  {
    std::ofstream gp(dir / "latency.gp");
    header(gp, "latency", "turn latency percentiles per 5 s", "ms");
    gp << "set logscale y\nplot 'latency.dat' using 1:2 with lines title 'p50', "
          "'' using 1:3 with lines title 'p90', '' using 1:4 with lines lw 2 title 'p99'\n";
  }
  {
    std::ofstream gp(dir / "retention.gp");
    header(gp, "retention",
           "identifiers of the replaced rows kept by each summary (shaded: fault windows)",
           "kept / in");
    gp << "set yrange [0:1.05]\n";
    auto series = retention_series(r);
    if (series.empty()) {
      gp << "set label 1 'no compaction replaced rows holding identifiers' at graph 0.5,0.5 "
            "center\nplot 2 notitle\n";
    } else {
      gp << "plot ";
      int index = 0;
      for (const auto& [name, points] : series)
        gp << (index > 0 ? ", " : "")
           << fmt::format("'retention.dat' index {} using 1:2 with points pt 7 title '{} ({})'",
                          index++, name, points.size());
      gp << "\n";
    }
  }
  {
    std::ofstream gp(dir / "rss.gp");
    header(gp, "rss", "resident set size", "MB");
    gp << "plot 'rss.dat' using 1:3 with lines title 'RSS', '' using 1:2 with linespoints "
          "title 'RSS minus the runner records (checked)'\n";
  }
}

} // namespace

json report_json(const soak_result& r) {
  const auto& s = *r.scenario;
  json j;
  j["scenario"] = {{"name", s.name}, {"origin", s.origin}, {"users", s.users},
                   {"duration_s", s.duration_s}, {"seed", s.seed}};
  j["target"] = r.target;
  if (!r.nodes.empty())
    j["nodes"] = r.nodes;
  j["database"] = r.database;
  j["notes"] = r.notes;
  j["duration_s"] = std::round(r.drive_s * 10) / 10;
  j["total_s"] = std::round(r.total_s * 10) / 10;
  j["sessions"] = r.totals.sessions;
  j["messages_sent"] = r.ledger.sent;
  j["messages_acknowledged"] = r.ledger.acknowledged;
  j["messages_stored"] = r.ledger.stored;
  j["lost_messages"] = r.ledger.lost;
  j["duplicated_messages"] = r.ledger.duplicated;
  j["altered_messages"] = r.ledger.altered;
  j["turns"] = {{"answered", r.totals.answered}, {"failed", r.totals.failed},
                {"tool_rows_appended", r.totals.appended},
                {"failed_appends", r.totals.failed_appends},
                {"timeouts", r.totals.timeouts}, {"errors", r.errors}};
  j["throughput_msgs_per_s"] =
    r.drive_s > 0 ? std::round(static_cast<double>(r.totals.answered) / r.drive_s * 10) / 10 : 0;
  j["latency_ms"] = latency_json(r.turns);
  j["markers_planted"] = r.markers_planted;
  j["unfindable_markers"] = r.markers_unfindable;
  j["markers_found_in_archived_rows"] = r.markers_found_archived;
  j["max_live_tokens"] = r.totals.max_live_tokens;
  j["max_live_session"] = r.totals.max_live_key;
  j["live_bound"] = r.live_bound;
  j["threshold_tokens"] = r.threshold_tokens;
  j["resets"] = r.totals.resets;
  j["compactions"] = {{"total", r.totals.compactions},
                      {"by_trigger", r.compactions_by_trigger},
                      {"fallback", r.totals.fallback_compactions},
                      {"fallback_in_outage", r.fallback_in_outage},
                      {"max_per_session_hour", r.max_compactions_per_hour}};
  j["retention"] = retention_json(r);
  j["faults"] = {{"injected", r.faults_injected}, {"by_kind", r.faults_by_kind},
                {"set_by_runner", r.faults_set}};
  j["llm_requests"] = {{"chat", r.llm_chat_requests}, {"summary", r.llm_summary_requests}};
  j["supervisor"] = {{"restarts", r.supervisor_restarts}, {"exhausted", r.supervisor_exhausted}};
  j["tool_loops"] = tool_loops_json(r.tools);
  json windows = json::array();
  for (const auto& w : outage_windows(s))
    windows.push_back({{"from_s", w.from_s}, {"to_s", w.to_s}, {"kind", w.kind},
                       {"purpose", w.purpose}, {"fraction", w.fraction}});
  j["outage_windows"] = windows;
  json rss = json::array();
  for (size_t i = 0; i < r.rss.size(); ++i)
    rss.push_back({std::round(r.rss[i].t_s * 10) / 10, r.rss[i].rss_bytes,
                   i < r.rss_raw.size() ? r.rss_raw[i].rss_bytes : 0});
  j["rss"] = {{"samples", rss},
              {"samples_columns", {"t_s", "rss_minus_runner_records_bytes", "rss_bytes"}},
              {"conclusive", r.rss_check.conclusive},
              {"plateaued", r.rss_check.plateaued},
              {"second_half_growth", std::round(r.rss_check.growth * 1000) / 1000},
              {"max_growth", s.invariants.rss_max_growth}};
  if (!r.rss_by_node.empty()) {
    json by_node = json::object();
    for (const auto& [node, samples] : r.rss_by_node) {
      json series = json::array();
      for (const auto& x : samples)
        series.push_back({std::round(x.t_s * 10) / 10, x.rss_bytes});
      const auto& v = r.rss_check_by_node.at(node);
      by_node[node] = {{"samples", series}, {"samples_columns", {"t_s", "rss_bytes"}},
                       {"conclusive", v.conclusive}, {"plateaued", v.plateaued},
                       {"second_half_growth", std::round(v.growth * 1000) / 1000}};
    }
    j["rss"]["by_node"] = by_node;
  }
  json v = json::array();
  for (const auto& x : r.violations)
    v.push_back({{"invariant", x.invariant}, {"session", x.session}, {"detail", x.detail},
                 {"t_s", std::round(x.t_s * 10) / 10}});
  j["violations"] = v;
  j["passed"] = r.violations.empty();
  return j;
}

std::string write_report(const soak_result& r, const std::string& dir_name, std::string& error) {
  fs::path dir = dir_name;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    error = fmt::format("cannot create {}: {}", dir.string(), ec.message());
    return {};
  }
  auto j = report_json(r);
  {
    std::ofstream out(dir / "report.json");
    out << api::dump_json(j, 2) << "\n";
    if (!out) {
      error = fmt::format("cannot write {}", (dir / "report.json").string());
      return {};
    }
  }
  write_data(r, dir);
  bool have_gnuplot = on_path("gnuplot");
  std::string terminal = have_gnuplot ? gnuplot_terminal(dir) : "pngcairo";
  std::string ext = terminal == "svg" ? "svg" : "png";
  write_scripts(r, dir, terminal, ext);
  std::vector<plot> plots = {{"live_tokens", "Live context per session"},
                             {"compactions", "Compactions by trigger"},
                             {"latency", "Turn latency percentiles"},
                             {"retention", "Identifiers kept per compaction"},
                             {"rss", "Resident set size"}};
  std::vector<std::string> rendered;
  if (have_gnuplot)
    for (const auto& p : plots) {
      auto cmd = fmt::format("cd '{}' && gnuplot {}.gp > {}.log 2>&1", dir.string(), p.name,
                             p.name);
      if (std::system(cmd.c_str()) == 0 && fs::exists(dir / (p.name + "." + ext))) {
        rendered.push_back(p.name);
        fs::remove(dir / (p.name + ".log"));
      }
    }

  const auto& s = *r.scenario;
  std::ofstream md(dir / "report.md");
  md << fmt::format("# Soak report: {}\n\n", s.name);
  md << fmt::format("**{}** — {} users for {:.0f} s (scenario `{}`), database `{}`.\n\n",
                    r.violations.empty() ? "PASSED" : "FAILED", s.users, r.drive_s, s.origin,
                    r.database);
  md << fmt::format("Target: {}.\n\n", r.target);
  if (!r.nodes.empty()) {
    md << "Nodes (one PostgreSQL database; each user's calls to the nodes in turn):\n\n";
    for (const auto& n : r.nodes) {
      md << "- " << n;
      if (auto v = r.rss_check_by_node.find(n); v != r.rss_check_by_node.end())
        md << fmt::format(": RSS second-half growth {:.1f} %{}", v->second.growth * 100,
                          v->second.conclusive ? "" : " (inconclusive)");
      md << "\n";
    }
    md << "\n";
  }
  for (const auto& n : r.notes)
    md << "> " << n << "\n\n";
  md << "| figure | value |\n|---|---|\n";
  auto row = [&](const std::string& k, const std::string& v) {
    md << "| " << k << " | " << v << " |\n";
  };
  row("messages sent / acknowledged / stored",
      fmt::format("{} / {} / {}", r.ledger.sent, r.ledger.acknowledged, r.ledger.stored));
  row("lost / duplicated / altered",
      fmt::format("{} / {} / {}", r.ledger.lost, r.ledger.duplicated, r.ledger.altered));
  row("markers planted / unfindable / found in archived rows",
      fmt::format("{} / {} / {}", r.markers_planted, r.markers_unfindable,
                  r.markers_found_archived));
  row("turns answered / failed", fmt::format("{} / {}", r.totals.answered, r.totals.failed));
  row("tool rows appended / failed",
      fmt::format("{} / {}", r.totals.appended, r.totals.failed_appends));
  for (const auto& [k, v] : tool_loop_rows(r.tools))
    row(k, v);
  row("throughput", fmt::format("{} msgs/s", j["throughput_msgs_per_s"].dump()));
  row("turn latency p50 / p90 / p99 / max (ms)",
      fmt::format("{} / {} / {} / {}", markdown_figure(j["latency_ms"]["p50"]),
                  markdown_figure(j["latency_ms"]["p90"]),
                  markdown_figure(j["latency_ms"]["p99"]),
                  markdown_figure(j["latency_ms"]["max"])));
  row("largest live context", fmt::format("{} tokens ({}), bound {}", r.totals.max_live_tokens,
                                          r.totals.max_live_key, r.live_bound));
  std::string by;
  for (const auto& [t, n] : r.compactions_by_trigger)
    by += fmt::format(" {}={}", t, n);
  row("compactions", fmt::format("{} ({} with the local fallback, {} inside a summarizer "
                                 "outage):{}",
                                 r.totals.compactions, r.totals.fallback_compactions,
                                 r.fallback_in_outage, by));
  row("busiest session, compactions in one hour", std::to_string(r.max_compactions_per_hour));
  std::string kept;
  for (const auto& [name, s] : j["retention"]["by_series"].items())
    kept += fmt::format("{}{} median {} over {}", kept.empty() ? "" : ", ", name,
                        markdown_figure(s["median"]), s["attempts"].get<int64_t>());
  row("identifiers kept by the summaries (kept / in per attempt)",
      kept.empty() ? std::string{"no compaction replaced rows holding identifiers"} : kept);
  row("resets after exhaustion", std::to_string(r.totals.resets));
  std::string faults;
  for (const auto& [k, n] : r.faults_by_kind)
    faults += fmt::format(" {}={}", k, n);
  row("faults injected", r.faults_set ? fmt::format("{}:{}", r.faults_injected, faults)
                                      : std::string{"none: not set (--no-faults)"});
  std::string errs;
  for (const auto& [k, n] : r.errors)
    errs += fmt::format(" {}={}", k, n);
  row("turn errors", errs.empty() ? "none" : errs);
  row("RSS", r.rss_check.conclusive
               ? fmt::format("{:.0f} MB at half time, at most {:.0f} MB after ({:+.1f} %, "
                             "bound {:.0f} %)",
                             static_cast<double>(r.rss_check.mid_bytes) / 1048576.0,
                             static_cast<double>(r.rss_check.max_late_bytes) / 1048576.0,
                             r.rss_check.growth * 100, s.invariants.rss_max_growth * 100)
               : std::string{"too few samples to judge"});
  md << "\n## Violations\n\n";
  if (r.violations.empty())
    md << "None: every invariant held.\n";
  for (const auto& v : r.violations)
    md << fmt::format("- **{}** {} at {:.0f} s: {}\n", v.invariant,
                      v.session.empty() ? "" : "`" + v.session + "`", v.t_s, v.detail);
  md << "\n## Fault windows\n\n";
  auto windows = outage_windows(s);
  if (windows.empty())
    md << "None with a time window.\n";
  for (const auto& w : windows)
    md << fmt::format("- {:.0f}–{:.0f} s: {} for {} calls ({:.0f} %)\n", w.from_s, w.to_s,
                      w.kind, w.purpose, w.fraction * 100);
  md << "\n## Plots\n\n";
  md << "The live-context plot shades the fault windows (red: summarizer calls, orange: chat "
        "or all calls) and draws the bound as a dashed red line; see docs/soak.md for how to "
        "read them.\n\n";
  if (rendered.size() == plots.size()) {
    for (const auto& p : plots)
      md << fmt::format("### {}\n\n![{}]({}.{})\n\n", p.title, p.title, p.name, ext);
  } else {
    for (const auto& p : plots)
      if (std::find(rendered.begin(), rendered.end(), p.name) != rendered.end())
        md << fmt::format("### {}\n\n![{}]({}.{})\n\n", p.title, p.title, p.name, ext);
    md << fmt::format("{} not rendered here ({}). The data (`*.dat`) and the gnuplot "
                      "scripts (`*.gp`) are in this directory; render them with\n\n"
                      "    cd {} && for f in *.gp; do gnuplot \"$f\"; done\n",
                      rendered.empty() ? "The plots were" : "Some plots were",
                      have_gnuplot ? "gnuplot failed" : "gnuplot is not on PATH", dir.string());
  }
  std::error_code abs_ec;
  auto md_path = fs::absolute(dir / "report.md", abs_ec);
  return abs_ec ? (dir / "report.md").string() : md_path.lexically_normal().string();
}

} // namespace mneme::soak
