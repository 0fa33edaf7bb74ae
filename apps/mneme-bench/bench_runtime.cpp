// mneme-bench runtime: many concurrent sessions in one process through the whole
// runtime (gateway -> session -> storage / chat pool / summarizer pool) against the
// in-process fake LLM server. Every session has one turn in flight at a time; a turn
// adds two messages (the user's and the answer). The threshold is capped so that
// sessions compact during the run. Reports end-to-end messages/s, the resident memory
// per hosted session (peak RSS growth / sessions) beside the live transcript bytes it
// holds, the runtime's own time per compaction excluding the summarizer wait (p50, p99),
// and lost messages (sent user messages not found in the store).
// Waves: each turn is sent to the sessions in groups of --active (default: all of them);
// a group's replies are awaited before the next group is sent. With --evict the gateway
// evicts every idle session after each group (its clock advanced past
// idle_evict_seconds), so the next message rehydrates it from the store: resident
// sessions then stay bounded by --active, not by --sessions, and the memory left after
// the last sweep is what the evicted sessions cost.
// Options:
//   --sessions N          sessions in the population (default 10000, at most 100000)
//   --messages M          messages per session, user + answer (default 200)
//   --active W            sessions driven (and resident) at once (default N)
//   --threshold-tokens T  threshold cap (default 4000)
//   --user-chars C        size of each user message (default 400)
//   --evict               evict idle sessions after every group
//   --json                one JSON object on stdout
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/llm/llm_endpoint.hpp"
#include "actors/runtime.hpp"
#include "apps/common/fake_llm/fake_llm_server.hpp"
#include "apps/mneme-bench/bench_registry.hpp"

namespace mneme::bench {

namespace {

// A "Vm...:" figure of /proc/self/status in bytes (VmRSS: resident now, VmHWM: peak).
int64_t status_bytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == field) {
      int64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
    std::string rest;
    std::getline(in, rest);
  }
  return 0;
}

int64_t rss_bytes() {
  return status_bytes("VmRSS:");
}

struct options {
  int sessions = 10000;
  int messages = 200;
  int active = 0; // 0 = all sessions at once
  int64_t threshold_tokens = 4000;
  int64_t user_chars = 400;
  bool evict = false;
  bool json = false;
};

bool parse(const std::vector<std::string>& args, options& o) {
  for (size_t i = 0; i < args.size(); ++i) {
    auto next = [&](auto& out) {
      if (i + 1 >= args.size())
        return false;
      out = static_cast<std::decay_t<decltype(out)>>(std::stoll(args[++i]));
      return true;
    };
    try {
      if (args[i] == "--json") o.json = true;
      else if (args[i] == "--evict") o.evict = true;
      else if (args[i] == "--sessions") { if (!next(o.sessions)) return false; }
      else if (args[i] == "--messages") { if (!next(o.messages)) return false; }
      else if (args[i] == "--active") { if (!next(o.active)) return false; }
      else if (args[i] == "--threshold-tokens") { if (!next(o.threshold_tokens)) return false; }
      else if (args[i] == "--user-chars") { if (!next(o.user_chars)) return false; }
      else return false;
    } catch (const std::exception&) {
      return false;
    }
  }
  if (o.active == 0)
    o.active = o.sessions;
  // The store lists at most 100,000 sessions at once (session_filter::limit): the
  // lost-message count needs them all.
  return o.sessions > 0 && o.sessions <= 100000 && o.active > 0 && o.active <= o.sessions
         && o.messages >= 2 && o.threshold_tokens > 0 && o.user_chars > 0;
}

int64_t percentile(std::vector<int64_t> xs, double p) {
  if (xs.empty())
    return 0;
  std::sort(xs.begin(), xs.end());
  auto i = static_cast<size_t>(p * static_cast<double>(xs.size() - 1));
  return xs[i];
}

int run(const std::vector<std::string>& args) {
  options o;
  if (!parse(args, o)) {
    std::cerr << "usage: mneme-bench runtime [--sessions N] [--messages M] "
                 "[--active W] [--threshold-tokens T] [--user-chars C] [--evict] [--json]\n"
                 "  N <= 100000; W sessions are driven (and with --evict resident) at once\n";
    return 2;
  }
  fakellm::fake_llm_server server;
  if (!server.start()) {
    std::cerr << "fake LLM server did not start\n";
    return 1;
  }
  char tmpl[] = "/tmp/mneme-bench-runtime-XXXXXX";
  if (!mkdtemp(tmpl))
    return 1;
  std::string dir = tmpl;

  runtime_config rc;
  rc.compression.threshold_tokens = o.threshold_tokens;
  rc.model.base_url = server.base_url();
  chat_pool_params cp;
  cp.max_queue = std::max<int64_t>(cp.max_queue, o.sessions);
  summarizer_params sp;
  sp.base_url = server.base_url();
  sp.max_queue = std::max<int64_t>(sp.max_queue, o.sessions);
  rc.chat = *llm::make_chat_pool_config(rc.model, cp);
  rc.summarizer = *llm::make_summary_pool_config(sp, rc.model, rc.compression);
  rc.database.path = dir + "/bench.db";
  rc.database.synchronous_full = false;
  rc.gateway.idle_evict_seconds = o.evict ? 60 : 0;
  auto offset = std::make_shared<std::atomic<int64_t>>(0);
  rc.clock = [offset] { return system_clock_ms() + offset->load(); };

  int64_t rss_before = rss_bytes();
  int64_t answered = 0, failed = 0, max_hosted = 0;
  std::vector<int64_t> overhead_us;
  int64_t peak_rss = 0;        // VmHWM once the last group was answered (and evicted)
  int64_t rss_after_evict = 0; // with --evict: every session evicted, runtime still up
  int64_t rss_after_trim = 0;  // the same after malloc_trim(0): free heap kept by malloc
  int64_t stored_user_rows = 0;
  int64_t live_bytes = 0;      // content bytes of the stored live rows at the end
  double elapsed_s = 0;
  const int turns = o.messages / 2;
  {
    caf::actor_system_config cfg;
    register_mneme_types(cfg);
    cfg.set("logger.verbosity", caf::atom("quiet"));
    caf::actor_system sys{cfg};
    auto started = runtime::start(sys, rc);
    if (!started) {
      std::cerr << render_error(started.error()) << "\n";
      return 1;
    }
    auto& rt = **started;
    caf::scoped_actor self{sys};
    std::string text(static_cast<size_t>(o.user_chars), 'x');
    auto hosted = [&] {
      int64_t n = 0;
      self->request(rt.supervisor(), std::chrono::seconds(30), sv_stats_atom_v)
        .receive([&](supervisor_stats& s) { n = s.hosted; }, [](caf::error&) {});
      return n;
    };
    auto begin = std::chrono::steady_clock::now();
    for (int t = 0; t < turns; ++t) {
      for (int first = 0; first < o.sessions; first += o.active) {
        int last = std::min(o.sessions, first + o.active);
        for (int s = first; s < last; ++s)
          self->send(rt.gateway(), gw_message_atom_v, "bench-" + std::to_string(s),
                     std::string{"u"},
                     std::to_string(s) + ":" + std::to_string(t) + " " + text);
        for (int s = first; s < last; ++s)
          self->receive(
            [&](turn_reply& r) {
              ++answered;
              for (const auto& c : r.compactions)
                if (c.committed)
                  overhead_us.push_back(c.overhead_us);
            },
            [&](caf::error&) { ++failed; },
            caf::after(rt.turn_timeout()) >> [&] { ++failed; });
        max_hosted = std::max(max_hosted, hosted());
        if (o.evict) {
          *offset += 61'000;
          caf::anon_send(rt.gateway(), gw_evict_atom_v, uint64_t{0});
          for (int i = 0; i < 6000 && hosted() > 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
      }
    }
    elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    peak_rss = status_bytes("VmHWM:");
    if (o.evict) {
      rss_after_evict = rss_bytes();
      malloc_trim(0);
      rss_after_trim = rss_bytes();
    }
    session_filter all;
    all.limit = 100000;
    self->request(rt.storage(), std::chrono::seconds(120), st_list_atom_v, all)
      .receive(
        [&](std::vector<session_record>& sessions) {
          for (const auto& rec : sessions)
            self->request(rt.storage(), std::chrono::seconds(120), st_range_atom_v, rec.id,
                          int64_t{1}, std::numeric_limits<int64_t>::max())
              .receive(
                [&](std::vector<message>& rows) {
                  for (const auto& m : rows) {
                    stored_user_rows += is_real_user_message(m) ? 1 : 0;
                    live_bytes += m.active ? static_cast<int64_t>(m.content.size()) : 0;
                  }
                },
                [](caf::error&) {});
        },
        [](caf::error&) {});
    rt.stop();
  }
  server.stop();
  std::filesystem::remove_all(dir);

  int64_t sent = static_cast<int64_t>(o.sessions) * turns;
  nlohmann::json j;
  j["sessions"] = o.sessions;
  j["active_sessions"] = o.active;
  j["messages_per_session"] = turns * 2;
  j["evict"] = o.evict;
  j["elapsed_s"] = elapsed_s;
  j["msgs_per_s"] = static_cast<double>(answered * 2) / elapsed_s;
  j["turns_failed"] = failed;
  j["max_hosted_sessions"] = max_hosted;
  j["rss_before_bytes"] = rss_before;
  j["peak_rss_bytes"] = peak_rss;
  j["rss_bytes_per_session"] = (peak_rss - rss_before) / o.sessions;
  if (o.evict) {
    j["rss_after_evict_bytes"] = rss_after_evict;
    j["rss_after_trim_bytes"] = rss_after_trim;
    j["evicted_bytes_per_session"] = (rss_after_evict - rss_before) / o.sessions;
  }
  j["transcript_bytes_per_session"] = live_bytes / o.sessions;
  j["compactions"] = overhead_us.size();
  j["compaction_overhead_ms_p50"] = static_cast<double>(percentile(overhead_us, 0.5)) / 1000.0;
  j["compaction_overhead_ms_p99"] = static_cast<double>(percentile(overhead_us, 0.99)) / 1000.0;
  j["lost_messages"] = sent - stored_user_rows;
  if (o.json) {
    std::cout << j.dump() << "\n";
  } else {
    for (auto& [k, v] : j.items())
      std::cout << fmt::format("{:<30} {}\n", k, v.dump());
  }
  return failed == 0 && sent == stored_user_rows ? 0 : 1;
}

} // namespace

MNEME_BENCH("runtime", "sessions x messages through the whole runtime against the fake LLM",
            run);

} // namespace mneme::bench
