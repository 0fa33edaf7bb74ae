// A full disk under the daemon, in process: the runtime's SQLite file is opened through
// tests/full_disk_vfs.hpp, which answers SQLITE_FULL to every write once armed. An
// append whose group COMMIT fails is answered 500 storage_disk_full, counted in
// mneme_append_failures_total and in mneme_storage_failures_total{op="commit",
// errc="storage_disk_full"} on GET /metrics (the series configs/prometheus/alerts_test.yml
// feeds MnemeDiskFull), and appends succeed again once space returns, without a
// restart. The idle-time indexer, which finds the disk full at start with a backlog,
// counts its failed ticks (op="index"), and catches the backlog up once space returns
// with neither a restart nor a new append (policies/index_retry's timer). The
// classification of errors into counted failures is table-tested too.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "actors/storage/storage_failures.hpp"
#include "apps/common/api/http_server.hpp"
#include "store/open_store.hpp"
#include "tests/full_disk_vfs.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(storage_full_disk_test)

using namespace mneme;
using namespace std::chrono_literals;

namespace {

// The value of one sample of a /metrics exposition ("" labels = none); -1 when absent.
double sample(const std::string& exposition, const std::string& name, const std::string& labels) {
  std::string head = labels.empty() ? name + " " : name + "{" + labels + "} ";
  auto at = exposition.find("\n" + head);
  if (at == std::string::npos)
    return -1;
  return std::stod(exposition.substr(at + 1 + head.size()));
}

// Polls `pred` every 50 ms until it holds or `bound` passed; its last answer.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds bound) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

struct full_disk_fixture : test::http_api_fixture {
  testing::full_disk_vfs_scope disk{dir.path()};

  std::string metrics() {
    auto a = get("/metrics");
    BOOST_REQUIRE_EQUAL(a.status, 200);
    return a.text;
  }
  double commit_disk_full() {
    return sample(metrics(), "mneme_storage_failures_total",
                  R"(op="commit",errc="storage_disk_full")");
  }
  double append_failures() { return sample(metrics(), "mneme_append_failures_total", ""); }
};

const std::string append_body = R"({"role":"user","content":"a row for the disk"})";

} // namespace

BOOST_FIXTURE_TEST_CASE(a_failed_commit_on_a_full_disk_is_counted_and_appends_recover_after,
                        full_disk_fixture) {
  serve();
  BOOST_REQUIRE_EQUAL(post("/v1/sessions/disk/messages", append_body).status, 201);
  BOOST_TEST(commit_disk_full() == 0); // the series exists before the first failure
  BOOST_TEST(append_failures() == 0);

  disk.arm();
  auto refused = post("/v1/sessions/disk/messages", append_body);
  BOOST_TEST(refused.status == 500, refused.text);
  BOOST_TEST(refused.body["error"]["code"] == "storage_disk_full", refused.text);
  auto second = post("/v1/sessions/disk/messages", append_body);
  BOOST_TEST(second.status == 500, second.text);
  BOOST_TEST(testing::full_disk_vfs::refused_writes() > 0);

  BOOST_TEST(commit_disk_full() >= 2);
  BOOST_TEST(append_failures() == 2);

  disk.disarm(); // space returns
  auto stored = post("/v1/sessions/disk/messages", append_body);
  BOOST_TEST(stored.status == 201, stored.text);
  auto rows = get("/v1/sessions/disk/export");
  BOOST_TEST(rows.status == 200);
  BOOST_TEST(append_failures() == 2); // nothing new failed
}

BOOST_FIXTURE_TEST_CASE(the_indexer_stops_on_a_full_disk_and_catches_up_after_by_itself,
                        full_disk_fixture) {
  // A backlog in the file before the daemon starts: rows appended by the store alone
  // are in no full-text index yet.
  constexpr int rows = 600;
  {
    auto store = open_message_store(rc.database);
    BOOST_REQUIRE_MESSAGE(store, testing::err_of(store));
    session_record rec;
    rec.user_id = "u";
    rec.session_key = "backlog";
    rec.model = rc.model.name;
    auto made = (*store)->create_session(rec, system_clock_ms());
    BOOST_REQUIRE_MESSAGE(made, testing::err_of(made));
    std::vector<message> batch(rows);
    for (int i = 0; i < rows; ++i) {
      auto& m = batch[static_cast<size_t>(i)];
      m.session_id = made->id;
      m.role = i % 2 == 0 ? msg_role::user : msg_role::assistant;
      m.content = "row " + std::to_string(i) + " of the heliotrope backlog";
      m.timestamp_ms = system_clock_ms();
      m.token_estimate = 10;
    }
    auto ids = (*store)->append_batch(batch);
    BOOST_REQUIRE_MESSAGE(ids, testing::err_of(ids));
  }
  disk.arm(); // the disk is full when the daemon starts
  serve();
  auto index_failures = [this] {
    return sample(metrics(), "mneme_storage_failures_total",
                  R"(op="index",errc="storage_disk_full")");
  };
  auto backlog = [this] { return sample(metrics(), "mneme_index_backlog_rows", ""); };
  BOOST_REQUIRE_MESSAGE(eventually([&] { return index_failures() >= 1; }, 60s),
                        "no index tick failed on the full disk");
  BOOST_TEST(backlog() >= rows); // nothing was indexed

  disk.disarm(); // space returns: no restart, no new append
  BOOST_TEST_REQUIRE(eventually([&] { return backlog() == 0; }, 180s),
                     "the backlog was not caught up: " << backlog());
  auto found = get("/v1/search?q=heliotrope&user=u");
  BOOST_TEST(found.status == 200, found.text);
}

BOOST_AUTO_TEST_CASE(only_storage_errors_count_as_storage_failures) {
  struct row {
    caf::error err;
    bool counted;
  };
  const row rows[] = {
    {caf::make_error(errc::storage_disk_full, "x"), true},
    {caf::make_error(errc::storage_failed, "x"), true},
    {caf::make_error(errc::storage_readonly, "x"), true},
    {caf::make_error(errc::internal, "x"), true},
    {caf::make_error(errc::bad_request, "x"), false},
    {caf::make_error(errc::not_found, "x"), false},
    {caf::make_error(errc::lease_lost, "x"), false},
    {caf::error{}, false},
  };
  storage_failure_counters c;
  int counted = 0;
  for (const auto& r : rows) {
    BOOST_TEST(c.record(storage_op::commit, r.err) == r.counted, render_error(r.err));
    counted += r.counted ? 1 : 0;
  }
  int64_t total = 0;
  for (size_t e = 0; e < counted_storage_errcs.size(); ++e)
    total += c.at(storage_op::commit, e);
  BOOST_TEST(total == counted);
  BOOST_TEST(c.at(storage_op::commit, 1) == 1); // storage_disk_full's slot
  BOOST_TEST(c.at(storage_op::insert, 1) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
