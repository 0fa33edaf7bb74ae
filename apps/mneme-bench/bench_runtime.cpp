// mneme-bench runtime: many concurrent sessions in one process through the whole
// runtime (gateway -> session -> storage / chat pool / summarizer pool) against the
// in-process fake LLM server. Every session has one turn in flight at a time; a turn
// adds two messages (the user's and the answer). The threshold is capped so that
// sessions compact during the run (a compaction needs more rows than head + tail, i.e.
// more than 12 turns with the default protect_first_n 3 and protect_last_n 20).
// Waves: each turn is sent to the sessions in groups of --active (default: all of them);
// a group's replies are awaited before the next group is sent. With --evict the gateway
// evicts every idle session after each group (its clock advanced past
// idle_evict_seconds), so the next message rehydrates it from the store: resident
// sessions then stay bounded by --active, not by --sessions, and the memory left after
// the last sweep is what the evicted sessions cost.
// Turns: a turn answered with a turn_reply is acknowledged. A turn answered with an
// error (a runtime deadline, an overloaded queue, the bench's own wait running out) is
// not: it is counted by error kind and sent again after its group, up to --retries
// times; a turn never acknowledged is a failed turn, never a lost message.
// Lost messages: after the runtime has stopped, a read-only connection streams every
// stored user row once (no listing, no actor, no timeout) and marks the (session, turn)
// it carries; an acknowledged turn whose user row is not stored is lost. When that check
// cannot run, the JSON says so (lost_check) and lost_messages is null.
// Memory: peak RSS (VmHWM) over the whole run; per session of the population, per
// distinct session the gateway hosted, and with --evict the RSS after the final sweep
// with and without malloc_trim(0), and the heap left per evicted session (heap in use
// after the final sweep minus before the run, over the hosted sessions). The bench's
// own bookkeeping is allocated before the baseline is read.
// Latency: turn_ms_* is a turn's time from send to its reply being read, under a group
// of --active concurrent turns. With --evict, --probes P sessions spread evenly over
// the population are then sent one turn at a time: first while evicted (rehydrate_ms_*:
// the store lookup, the respawn and the turn against the fake), then at once again
// while resident (resident_turn_ms_*); the difference is what a rehydration costs
// alone, without the queueing of a group.
// Options:
//   --sessions N          sessions in the population (default 10000, at most 1000000)
//   --messages M          messages per session, user + answer (default 200)
//   --active W            sessions driven (and resident) at once (default N)
//   --threshold-tokens T  threshold cap (default 4000)
//   --user-chars C        size of each user message (default 400)
//   --retries R           times a failed turn is sent again (default 2)
//   --evict               evict idle sessions after every group
//   --probes P            with --evict: lone turns to evicted sessions (default 200)
//   --json                one JSON object on stdout
// The flags are declared, with their ranges, at the registration at the end of this
// file (`mneme-bench runtime --help`). Only this program links this file.
#include <malloc.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/llm/llm_endpoint.hpp"
#include "actors/runtime.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "apps/mneme-bench/bench_registry.hpp"
#include "apps/mneme-bench/bench_stats.hpp"
#include "store/sqlite/store_reader.hpp"

namespace mneme::bench {

namespace {


int64_t rss_bytes() {
  return proc_status_bytes("/proc/self", "VmRSS:");
}

// The C heap over every malloc arena: bytes handed out (mmapped chunks included) and
// bytes free but kept by malloc; RSS beyond both is mappings (SQLite, code, stacks).
// `sqlite` is the part of in_use that SQLite holds (page caches, statements).
struct heap_figures {
  int64_t in_use = 0;
  int64_t free = 0;
  int64_t sqlite = 0;
};

heap_figures heap_now() {
  auto m = mallinfo2();
  return {static_cast<int64_t>(m.uordblks + m.hblkhd), static_cast<int64_t>(m.fordblks),
          static_cast<int64_t>(sqlite3_memory_used())};
}

constexpr int max_sessions = 1000000;

struct options {
  int sessions = 10000;
  int messages = 200;
  int active = 0; // 0 = all sessions at once
  int64_t threshold_tokens = 4000;
  int64_t user_chars = 400;
  int retries = 2;
  bool evict = false;
  int probes = 200;
  bool json = false;
};

// What the bench knows of one (session, turn); one byte each.
enum turn_bit : uint8_t {
  acknowledged = 1, // a turn_reply came back
  stored = 2,       // its user row is in the store
  stored_twice = 4, // a retry stored it again (the first attempt had stored it)
};

std::string key_of(int session) {
  return "bench-" + std::to_string(session);
}

// The user text of (session, turn): "<session>:<turn> " then the filler; the prefix is
// what the store check reads back.
std::string text_of(int session, int turn, const std::string& filler) {
  return std::to_string(session) + ":" + std::to_string(turn) + " " + filler;
}

// Parses a leading decimal number of `s` ending at `stop`; advances `s` past `stop`.
std::optional<int> leading_int(std::string_view& s, char stop) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end == s.data() + s.size() || *end != stop)
    return std::nullopt;
  s.remove_prefix(static_cast<size_t>(end - s.data()) + 1);
  return v;
}

// The whole of `s` as a decimal number.
std::optional<int> whole_int(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size())
    return std::nullopt;
  return v;
}

// A short, stable name for the kind of a failed turn (the errc or CAF sec name).
std::string error_kind(const caf::error& e) {
  if (e.category() == caf::atom("mneme"))
    return to_string(static_cast<errc>(e.code()));
  if (e.category() == caf::atom("system"))
    return caf::to_string(static_cast<caf::sec>(e.code()));
  return caf::to_string(e.category()) + ":" + std::to_string(e.code());
}

// What the read-only pass over the stored rows found.
struct store_check {
  std::string error;                 // empty = the check ran to the end
  int64_t stored_sessions = 0;
  int64_t user_rows = 0;             // real user rows (not summaries)
  int64_t unrecognised_user_rows = 0;// rows whose key or "<session>:<turn>" prefix is not ours
  int64_t live_bytes = 0;            // content bytes of the live rows
  double seconds = 0;
};

// Streams the stored user rows of the database at `path` and sets `stored` (and
// `stored_twice`) in `turns_state` (index session * turns + turn).
// REQUIRES: turns_state.size() == sessions * turns.
store_check check_store(const std::string& path, int sessions, int turns,
                        std::vector<uint8_t>& turns_state) {
  assert(turns_state.size() == static_cast<size_t>(sessions) * static_cast<size_t>(turns));
  auto begin = std::chrono::steady_clock::now();
  store_check out;
  store_params params;
  params.path = path;
  auto reader = store_reader::open(params);
  if (!reader) {
    out.error = "reader did not open: " + render_error(reader.error());
    return out;
  }
  auto& db = (*reader)->connection();
  auto step_error = [&](int rc, const char* what) {
    out.error = render_error(db.failure(rc, what));
  };
  auto user_rows = db.prepare(
    "SELECT se.session_key, substr(m.content, 1, 24) FROM messages m"
    " JOIN sessions se ON se.id = m.session_id"
    " WHERE m.role = 'user' AND m.is_summary = 0");
  if (!user_rows) {
    out.error = render_error(user_rows.error());
    return out;
  }
  {
    statement_scope s{**user_rows};
    for (;;) {
      int rc = s->step();
      if (rc == SQLITE_DONE)
        break;
      if (rc != SQLITE_ROW) {
        step_error(rc, "scan user rows");
        return out;
      }
      ++out.user_rows;
      auto key = s->column_text(0);
      auto prefix = s->column_text(1);
      std::string_view k{key}, p{prefix};
      constexpr std::string_view key_prefix = "bench-";
      std::optional<int> key_session, session, turn;
      if (k.substr(0, key_prefix.size()) == key_prefix)
        key_session = whole_int(k.substr(key_prefix.size()));
      session = leading_int(p, ':');
      if (session)
        turn = leading_int(p, ' ');
      if (!key_session || !session || !turn || *key_session != *session || *session < 0
          || *session >= sessions || *turn < 0 || *turn >= turns) {
        ++out.unrecognised_user_rows;
        continue;
      }
      auto& st = turns_state[static_cast<size_t>(*session) * static_cast<size_t>(turns)
                             + static_cast<size_t>(*turn)];
      st |= (st & stored) ? stored_twice : stored;
    }
  }
  auto count_sessions = db.prepare("SELECT count(*) FROM sessions");
  auto live = db.prepare(
    "SELECT coalesce(sum(length(CAST(m.content AS BLOB))), 0) FROM messages m"
    " JOIN message_state st ON st.id = m.id WHERE st.active = 1");
  if (!count_sessions || !live) {
    out.error = render_error(count_sessions ? live.error() : count_sessions.error());
    return out;
  }
  {
    statement_scope s{**count_sessions};
    if (int rc = s->step(); rc != SQLITE_ROW) {
      step_error(rc, "count sessions");
      return out;
    }
    out.stored_sessions = s->column_int(0);
  }
  {
    statement_scope s{**live};
    if (int rc = s->step(); rc != SQLITE_ROW) {
      step_error(rc, "live bytes");
      return out;
    }
    out.live_bytes = s->column_int(0);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return out;
}

int run(options o) {
  if (o.active == 0)
    o.active = o.sessions;
  if (o.active > o.sessions) {
    std::cerr << "mneme-bench runtime: --active " << o.active << " exceeds --sessions "
              << o.sessions << "\n";
    return exit_usage;
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

  const int wave_turns = o.messages / 2;
  const int probes = o.evict ? std::min(o.probes, o.sessions) : 0;
  // A probed session gets two more turns (evicted, then resident), numbered after the
  // waves' turns; every session has room for them so the store check stays one index.
  const int turns = wave_turns + (probes > 0 ? 2 : 0);
  const auto population = static_cast<size_t>(o.sessions);
  // Bookkeeping first, so that the baseline includes it (value-initialised: touched).
  std::vector<uint8_t> turns_state(population * static_cast<size_t>(turns), 0);
  std::vector<int64_t> turn_us, rehydrate_us, resident_us;
  turn_us.reserve(population * static_cast<size_t>(wave_turns));
  rehydrate_us.reserve(static_cast<size_t>(probes));
  resident_us.reserve(static_cast<size_t>(probes));
  std::vector<uint64_t> session_hash(population, 0); // of the session id last answering
  std::vector<int64_t> overhead_us;
  overhead_us.reserve(population * 2);

  int64_t rss_before = rss_bytes();
  const heap_figures heap_before = heap_now();
  int64_t acknowledged_turns = 0, failed = 0, retried = 0, hosted_sessions = 0;
  int64_t max_resident = 0, incomplete_sweeps = 0, session_spawns = 0;
  std::map<std::string, int64_t> error_counts;
  std::map<std::string, std::string> error_examples;
  int64_t peak_rss = 0;        // VmHWM once the last group was answered (and evicted)
  int64_t rss_after_evict = 0; // with --evict: every session evicted, runtime still up
  int64_t rss_after_trim = 0;  // the same after malloc_trim(0): free heap kept by malloc
  heap_figures heap_after_evict;
  double elapsed_s = 0, sweep_s = 0;
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
    const std::string filler(static_cast<size_t>(o.user_chars), 'x');
    // The supervisor's counters; nullopt when it did not answer.
    auto supervisor = [&]() -> std::optional<supervisor_stats> {
      std::optional<supervisor_stats> out;
      self->request(rt.supervisor(), std::chrono::seconds(30), sv_stats_atom_v)
        .receive([&](supervisor_stats& s) { out = s; }, [](caf::error&) {});
      return out;
    };
    const auto wait = rt.turn_timeout();
    using pending_turn = decltype(self->request(rt.gateway(), wait, gw_message_atom_v,
                                                std::string{}, std::string{}, std::string{}));
    std::vector<pending_turn> pending;
    pending.reserve(static_cast<size_t>(o.active));
    std::vector<int> todo, again;
    // Records an acknowledged turn (session s, turn t) from its reply.
    auto acknowledge = [&](int s, int t, const turn_reply& r) {
      ++acknowledged_turns;
      turns_state[static_cast<size_t>(s) * static_cast<size_t>(turns) + static_cast<size_t>(t)] |=
        acknowledged;
      auto h = std::hash<std::string>{}(r.session_id);
      if (session_hash[static_cast<size_t>(s)] != h) {
        session_hash[static_cast<size_t>(s)] = h;
        ++hosted_sessions;
      }
      for (const auto& c : r.compactions)
        if (c.committed)
          overhead_us.push_back(c.overhead_us);
    };
    auto count_error = [&](const caf::error& e) {
      auto kind = error_kind(e);
      if (error_counts[kind]++ == 0)
        error_examples[kind] = render_error(e);
    };
    // Every idle session evicted (the gateway's clock moved past idle_evict_seconds);
    // waits until the supervisor hosts none.
    auto evict_all = [&] {
      auto sweep_begin = std::chrono::steady_clock::now();
      *offset += 61'000;
      caf::anon_send(rt.gateway(), gw_evict_atom_v, uint64_t{0});
      bool emptied = false;
      for (int i = 0; i < 6000 && !emptied; ++i) {
        auto st = supervisor();
        emptied = st && st->hosted == 0;
        if (!emptied)
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      incomplete_sweeps += emptied ? 0 : 1;
      sweep_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - sweep_begin)
                   .count();
    };
    auto us_since = [](std::chrono::steady_clock::time_point t0) {
      return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now() - t0)
        .count();
    };
    auto begin = std::chrono::steady_clock::now();
    for (int t = 0; t < wave_turns; ++t) {
      for (int first = 0; first < o.sessions; first += o.active) {
        int last = std::min(o.sessions, first + o.active);
        todo.clear();
        for (int s = first; s < last; ++s)
          todo.push_back(s);
        for (int attempt = 0; attempt <= o.retries && !todo.empty(); ++attempt) {
          if (attempt > 0)
            retried += static_cast<int64_t>(todo.size());
          pending.clear();
          auto sent_at = std::chrono::steady_clock::now();
          for (int s : todo)
            pending.push_back(self->request(rt.gateway(), wait, gw_message_atom_v, key_of(s),
                                            std::string{"u"}, text_of(s, t, filler)));
          again.clear();
          for (size_t i = 0; i < todo.size(); ++i) {
            int s = todo[i];
            pending[i].receive(
              [&](turn_reply& r) {
                turn_us.push_back(us_since(sent_at));
                acknowledge(s, t, r);
              },
              [&](caf::error& e) {
                count_error(e);
                again.push_back(s);
              });
            // The bench's own request timeouts leave the clock too (actors/request_timeouts.hpp).
            sys.clock().cancel_request_timeout(self.ptr(), pending[i].id());
          }
          std::swap(todo, again);
        }
        failed += static_cast<int64_t>(todo.size());
        if (auto st = supervisor())
          max_resident = std::max(max_resident, st->hosted);
        if (o.evict)
          evict_all();
      }
    }
    elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    // Lone turns: each probed session once while evicted, then once while resident.
    for (int p = 0; p < probes; ++p) {
      int s = static_cast<int>(static_cast<int64_t>(p) * o.sessions / probes);
      for (int k = 0; k < 2; ++k) {
        int t = wave_turns + k;
        auto sent_at = std::chrono::steady_clock::now();
        auto h = self->request(rt.gateway(), wait, gw_message_atom_v, key_of(s),
                               std::string{"u"}, text_of(s, t, filler));
        h.receive(
          [&](turn_reply& r) {
            (k == 0 ? rehydrate_us : resident_us).push_back(us_since(sent_at));
            acknowledge(s, t, r);
          },
          [&](caf::error& e) {
            count_error(e);
            ++failed;
          });
        sys.clock().cancel_request_timeout(self.ptr(), h.id());
      }
    }
    if (probes > 0)
      evict_all();
    peak_rss = proc_status_bytes("/proc/self", "VmHWM:");
    if (o.evict) {
      rss_after_evict = rss_bytes();
      heap_after_evict = heap_now();
      malloc_trim(0);
      rss_after_trim = rss_bytes();
    }
    if (auto st = supervisor())
      session_spawns = st->spawned;
    rt.stop();
  }
  server.stop();
  // Every acknowledged turn was committed before its reply; the writer is closed now.
  auto check = check_store(rc.database.path, o.sessions, turns, turns_state);
  std::filesystem::remove_all(dir);

  int64_t lost = 0, stored_unacknowledged = 0, stored_twice_count = 0;
  auto ms = [](const std::vector<int64_t>& us, double p) {
    return static_cast<double>(percentile(us, p)) / 1000.0;
  };
  for (auto st : turns_state) {
    lost += (st & acknowledged) && !(st & stored) ? 1 : 0;
    stored_unacknowledged += !(st & acknowledged) && (st & stored) ? 1 : 0;
    stored_twice_count += (st & stored_twice) ? 1 : 0;
  }
  const bool checked = check.error.empty();

  const int64_t sent = static_cast<int64_t>(o.sessions) * wave_turns + 2 * probes;
  nlohmann::json j;
  j["sessions"] = o.sessions;
  j["active_sessions"] = o.active;
  j["messages_per_session"] = wave_turns * 2;
  j["threshold_tokens"] = o.threshold_tokens;
  j["user_chars"] = o.user_chars;
  j["evict"] = o.evict;
  j["elapsed_s"] = elapsed_s;
  j["eviction_sweeps_s"] = sweep_s;
  j["msgs_per_s"] = static_cast<double>(acknowledged_turns * 2) / elapsed_s;
  j["turns_sent"] = sent;
  j["turns_acknowledged"] = acknowledged_turns;
  j["turns_retried"] = retried;
  j["turns_failed"] = failed; // not acknowledged after every retry (a probe: at once)
  j["turn_ms_p50"] = ms(turn_us, 0.5);
  j["turn_ms_p99"] = ms(turn_us, 0.99);
  j["probes"] = probes;
  if (probes > 0) {
    j["rehydrate_ms_p50"] = ms(rehydrate_us, 0.5);
    j["rehydrate_ms_p99"] = ms(rehydrate_us, 0.99);
    j["resident_turn_ms_p50"] = ms(resident_us, 0.5);
    j["resident_turn_ms_p99"] = ms(resident_us, 0.99);
  }
  j["turn_errors"] = error_counts;
  j["turn_error_examples"] = error_examples;
  j["hosted_sessions"] = hosted_sessions;
  j["session_spawns"] = session_spawns; // spawns + rehydrations (supervisor)
  j["max_resident_sessions"] = max_resident;
  j["eviction_sweeps_incomplete"] = incomplete_sweeps;
  j["rss_before_bytes"] = rss_before;
  j["heap_in_use_before_bytes"] = heap_before.in_use;
  j["peak_rss_bytes"] = peak_rss;
  j["rss_bytes_per_session"] = (peak_rss - rss_before) / o.sessions;
  j["rss_bytes_per_hosted_session"] = hosted_sessions > 0 ? peak_rss / hosted_sessions : 0;
  if (o.evict) {
    j["rss_after_evict_bytes"] = rss_after_evict;
    j["rss_after_trim_bytes"] = rss_after_trim;
    j["evicted_bytes_per_session"] = (rss_after_evict - rss_before) / o.sessions;
    j["heap_in_use_after_evict_bytes"] = heap_after_evict.in_use;
    j["heap_bytes_per_evicted_session"] =
      hosted_sessions > 0 ? (heap_after_evict.in_use - heap_before.in_use) / hosted_sessions : 0;
    j["heap_free_after_evict_bytes"] = heap_after_evict.free;
    j["sqlite_heap_after_evict_bytes"] = heap_after_evict.sqlite;
  }
  j["compactions"] = overhead_us.size();
  j["compaction_overhead_ms_p50"] = static_cast<double>(median(overhead_us)) / 1000.0;
  j["compaction_overhead_ms_p99"] = static_cast<double>(percentile(overhead_us, 0.99)) / 1000.0;
  j["lost_check"] = checked ? std::string{"ran"} : "could not run: " + check.error;
  j["lost_check_s"] = check.seconds;
  if (checked) {
    j["lost_messages"] = lost;
    j["stored_sessions"] = check.stored_sessions;
    j["stored_user_rows"] = check.user_rows;
    j["stored_unacknowledged_turns"] = stored_unacknowledged;
    j["stored_twice_turns"] = stored_twice_count;
    j["unrecognised_user_rows"] = check.unrecognised_user_rows;
    j["transcript_bytes_per_session"] = check.live_bytes / o.sessions;
  } else {
    j["lost_messages"] = nullptr;
  }
  if (o.json) {
    std::cout << j.dump() << "\n";
  } else {
    for (auto& [k, v] : j.items())
      std::cout << fmt::format("{:<30} {}\n", k, v.dump());
  }
  return failed == 0 && checked && lost == 0 ? 0 : 1;
}

} // namespace

MNEME_BENCH("runtime", "sessions x messages through the whole runtime against the fake LLM",
            [](CLI::App& cmd) -> bench_action {
              auto o = std::make_shared<options>();
              cmd.add_option("--sessions", o->sessions, "sessions in the population")
                ->check(integer_range(1, max_sessions));
              cmd.add_option("--messages", o->messages, "messages per session, user + answer")
                ->check(integer_range(2));
              cmd.add_option("--active", o->active,
                             "sessions driven (and with --evict resident) at once; "
                             "0 = all, at most --sessions")
                ->check(integer_range(0, max_sessions));
              cmd.add_option("--threshold-tokens", o->threshold_tokens, "threshold cap")
                ->check(integer_range(int64_t{1}));
              cmd.add_option("--user-chars", o->user_chars, "size of each user message")
                ->check(integer_range(int64_t{1}));
              cmd.add_option("--retries", o->retries, "times a failed turn is sent again")
                ->check(integer_range(0));
              cmd.add_flag("--evict", o->evict, "evict idle sessions after every group");
              cmd.add_option("--probes", o->probes,
                             "with --evict: sessions then sent lone turns, evicted and resident")
                ->check(integer_range(0, max_sessions));
              cmd.add_flag("--json", o->json, "one JSON object on stdout");
              return [o] { return run(*o); };
            });

} // namespace mneme::bench
