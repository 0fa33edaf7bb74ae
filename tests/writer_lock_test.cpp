// Tests of the single-writer rule of a database file: a second writer is refused
// (same process and another process) with storage_locked naming the file and the
// way through the daemon, readers keep working beside the writer, and the lock is
// gone after a close or after the holder is killed.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <filesystem>

#include <sys/wait.h>
#include <unistd.h>

#include "messages/mneme_types.hpp"
#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "store/sqlite/store_reader.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(writer_lock_test)

using namespace mneme;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

namespace {

struct temp_db {
  testing::temp_dir dir{"mneme-writer-lock"};
  store_params params;
  temp_db() { params.path = dir.file("m.db"); }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(a_second_writer_in_the_same_process_is_refused, temp_db) {
  auto first = sqlite_store::open(params);
  BOOST_REQUIRE_MESSAGE(first, err_of(first));
  auto second = sqlite_store::open(params);
  BOOST_REQUIRE(!second);
  BOOST_TEST((second.error() == errc::storage_locked));
  auto text = err_of(second);
  BOOST_TEST(text.find(params.path) != std::string::npos, text);
  BOOST_TEST(text.find("another mneme") != std::string::npos, text);
  BOOST_TEST(text.find("--server URL") != std::string::npos, text);
}

BOOST_FIXTURE_TEST_CASE(a_reader_opens_and_reads_beside_the_writer, temp_db) {
  auto writer = sqlite_store::open(params);
  BOOST_REQUIRE_MESSAGE(writer, err_of(writer));
  session_record rec;
  rec.user_id = "alice";
  rec.session_key = "k";
  auto sid = (*writer)->create_session(rec, 1);
  BOOST_REQUIRE_MESSAGE(sid, err_of(sid));
  auto reader = store_reader::open(params);
  BOOST_REQUIRE_MESSAGE(reader, err_of(reader));
  auto found = (*reader)->session(sid->id);
  BOOST_REQUIRE_MESSAGE(found, err_of(found));
  BOOST_TEST(found->user_id == "alice");
}

BOOST_FIXTURE_TEST_CASE(the_lock_is_released_when_the_writer_closes, temp_db) {
  {
    auto first = sqlite_store::open(params);
    BOOST_REQUIRE_MESSAGE(first, err_of(first));
  }
  auto again = sqlite_store::open(params);
  BOOST_TEST_REQUIRE(static_cast<bool>(again), err_of(again));
  BOOST_TEST(std::filesystem::exists(writer_lock_path(params.path)));
}

BOOST_FIXTURE_TEST_CASE(a_refused_open_leaves_the_holder_s_lock_in_place, temp_db) {
  auto first = sqlite_store::open(params);
  BOOST_REQUIRE_MESSAGE(first, err_of(first));
  BOOST_REQUIRE(!sqlite_store::open(params));
  // The refused attempt closed only its own descriptor: still exclusive.
  auto third = sqlite_store::open(params);
  BOOST_TEST(!third);
}

BOOST_FIXTURE_TEST_CASE(a_writer_in_another_process_excludes_this_one_until_it_is_killed,
                        temp_db) {
  int ready[2];
  BOOST_REQUIRE(::pipe(ready) == 0);
  auto pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(ready[0]);
    auto held = sqlite_store::open(params);
    char ok = held ? '1' : '0';
    (void) !::write(ready[1], &ok, 1);
    for (;;)
      ::pause(); // holds the lock until SIGKILL
  }
  ::close(ready[1]);
  char ok = 0;
  BOOST_REQUIRE(::read(ready[0], &ok, 1) == 1);
  ::close(ready[0]);
  BOOST_REQUIRE(ok == '1');
  auto refused = sqlite_store::open(params);
  BOOST_TEST(!refused);
  if (!refused)
    BOOST_TEST((refused.error() == errc::storage_locked));
  auto reader = store_reader::open(params);
  BOOST_TEST(static_cast<bool>(reader), err_of(reader));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  BOOST_TEST(WIFSIGNALED(status));
  auto after = sqlite_store::open(params);
  BOOST_TEST(static_cast<bool>(after), err_of(after));
}

// Paths that name no file of their own take no lock: each open is its own database.
BOOST_DATA_TEST_CASE(paths_without_a_file_of_their_own_take_no_lock,
                     data::make({std::string{":memory:"}, std::string{""},
                                 std::string{"file:wl?mode=memory"}}),
                     path) {
  BOOST_TEST(writer_lock_path(path).empty());
}

BOOST_AUTO_TEST_CASE(two_in_memory_writers_open_side_by_side) {
  store_params p;
  p.path = ":memory:";
  auto a = sqlite_store::open(p);
  auto b = sqlite_store::open(p);
  BOOST_TEST(static_cast<bool>(a), err_of(a));
  BOOST_TEST(static_cast<bool>(b), err_of(b));
}

BOOST_AUTO_TEST_CASE(a_file_path_locks_the_file_next_to_it) {
  BOOST_TEST(writer_lock_path("/data/m.db") == "/data/m.db.lock");
}

BOOST_AUTO_TEST_SUITE_END() // writer_lock_test
