// crash_writer: the victim process of tests/storage_crash_test. It writes to a
// database through the storage actor as fast as it can — bursts of single appends,
// batch appends, compactions, trigger-state updates — and prints every
// acknowledgement to stdout, flushed, before doing anything else:
//   ready                      the store is open
//   A <id>                     append <id> was acknowledged (durable)
//   C <summary_id> <n>         a compaction archiving n rows was acknowledged
// The parent kills it with SIGKILL at a random moment and checks the file.
// Every message content starts with a unique tag "w<run>-<seq>" and every summary
// with "S n=<count>" so the parent can check exactly-once and all-or-nothing.
// Usage: crash_writer DB_PATH|POSTGRES_URL RUN_NUMBER SEED (a postgresql:// or
// postgres:// URL runs the same load on the PostgreSQL store).
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "caf/all.hpp"

#include "actors/storage/storage_actor.hpp"

using namespace mneme;

namespace {

const char* const sessions[] = {"crash-a", "crash-b", "crash-c", "crash-d"};

std::string body(std::mt19937& rng) {
  static const std::string en = "the quick brown fox checks the write-ahead log ";
  static const std::string zh = "数据库崩溃恢复测试，每条消息只出现一次。";
  std::uniform_int_distribution<int> pct(0, 99);
  size_t size = pct(rng) < 3 ? std::uniform_int_distribution<size_t>(20000, 60000)(rng)
                             : std::uniform_int_distribution<size_t>(50, 2000)(rng);
  const auto& unit = pct(rng) < 30 ? zh : en;
  std::string out;
  while (out.size() < size)
    out += unit;
  return out;
}

void say(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: crash_writer DB_PATH|POSTGRES_URL RUN_NUMBER SEED\n");
    return 2;
  }
  std::string run = argv[2];
  std::mt19937 rng(static_cast<unsigned>(std::stoul(argv[3])));
  caf::actor_system_config cfg;
  register_mneme_types(cfg);
  caf::actor_system sys{cfg};
  store_params params;
  std::string target = argv[1];
  if (target.rfind("postgresql://", 0) == 0 || target.rfind("postgres://", 0) == 0) {
    params.backend = store_backend::postgres;
    params.url = target;
  } else {
    params.path = target;
  }
  params.max_batch = 64;
  auto spawned = spawn_storage(sys, params, nullptr);
  if (!spawned) {
    std::fprintf(stderr, "open failed: %s\n", render_error(spawned.error()).c_str());
    return 1;
  }
  auto storage = *spawned;
  caf::scoped_actor self{sys};
  const auto timeout = std::chrono::seconds(30);
  for (auto sid : sessions) {
    session_record rec;
    rec.id = sid;
    rec.user_id = "crash";
    rec.session_key = sid;
    self->request(storage, timeout, st_new_session_atom_v, rec, int64_t{1})
      .receive([](session_record&) {}, [](caf::error&) {}); // exists after the first run
  }
  say("ready");
  int64_t seq = 0;
  auto tagged = [&](const std::string& sid) {
    message m;
    m.session_id = sid;
    m.role = seq % 2 == 0 ? msg_role::user : msg_role::assistant;
    m.content = "w" + run + "-" + std::to_string(seq++) + " " + body(rng);
    m.token_estimate = static_cast<int64_t>(m.content.size() / 4);
    return m;
  };
  std::uniform_int_distribution<int> pick(0, 3);
  for (int64_t round = 0;; ++round) {
    // A burst of single appends from "many sessions" shares group commits.
    int burst = std::uniform_int_distribution<int>(1, 48)(rng);
    for (int i = 0; i < burst; ++i)
      self->send(storage, st_append_atom_v, tagged(sessions[pick(rng)]));
    for (int i = 0; i < burst; ++i)
      self->receive([](int64_t id) { say("A " + std::to_string(id)); },
                    [](caf::error& err) {
                      std::fprintf(stderr, "append failed: %s\n", render_error(err).c_str());
                    });
    // A batch append: atomic.
    std::vector<message> batch;
    auto sid = sessions[pick(rng)];
    for (int i = 0, n = std::uniform_int_distribution<int>(2, 8)(rng); i < n; ++i)
      batch.push_back(tagged(sid));
    self->request(storage, timeout, st_append_atom_v, batch)
      .receive(
        [](message_ids& ids) {
          for (auto id : ids.ids)
            say("A " + std::to_string(id));
        },
        [](caf::error&) {});
    if (round % 3 != 0)
      continue;
    // A compaction of one session: archive everything but head (4) and tail (20).
    sid = sessions[pick(rng)];
    std::vector<message> live;
    self->request(storage, timeout, st_live_atom_v, std::string{sid})
      .receive([&](std::vector<message>& xs) { live = std::move(xs); }, [](caf::error&) {});
    if (live.size() < 30)
      continue;
    compaction_commit c;
    c.session_id = sid;
    for (size_t i = 4; i + 20 < live.size(); ++i)
      c.archive_ids.push_back(live[i].id);
    c.summary.role = msg_role::assistant;
    c.summary.content = "S n=" + std::to_string(c.archive_ids.size()) + " " + body(rng);
    c.update_triggers = true;
    c.triggers.compaction_count = round;
    self->request(storage, timeout, st_compact_atom_v, c)
      .receive(
        [&](message& s) {
          say("C " + std::to_string(s.id) + " " + std::to_string(c.archive_ids.size()));
        },
        [](caf::error& err) {
          std::fprintf(stderr, "compaction failed: %s\n", render_error(err).c_str());
        });
  }
}
