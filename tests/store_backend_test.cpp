// Tests of store_backend (store/store_backend.hpp): the names of the configuration's
// database.backend, and which backend needs maintenance from the storage actor
// (store/store_maintenance.hpp): both index behind their appends; only SQLite copies its
// log back or keeps cold copies.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <sstream>
#include <string>

#include "store/store_backend.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(store_backend_test)

using namespace mneme;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

BOOST_DATA_TEST_CASE(each_backend_parses_back_from_its_name,
                     data::make(testing::all_store_backends()), backend) {
  BOOST_TEST((parse_store_backend(to_string(backend)) == backend));
  std::ostringstream out;
  out << backend;
  BOOST_TEST(out.str() == to_string(backend));
}

BOOST_AUTO_TEST_CASE(only_the_two_names_are_backends) {
  BOOST_TEST(std::string{to_string(store_backend::sqlite)} == "sqlite");
  BOOST_TEST(std::string{to_string(store_backend::postgres)} == "postgres");
  for (const char* other : {"", "SQLite", "postgresql", "mysql", "sqlite "})
    BOOST_TEST(!parse_store_backend(other).has_value(), other);
}

BOOST_DATA_TEST_CASE(each_backend_asks_its_owner_to_index_only_sqlite_for_its_log,
                     data::make(testing::all_store_backends()), backend) {
  testing::temp_dir dir{"mneme-backend"};
  store_params params;
  testing::use_backend(backend, params, dir);
  auto store = testing::open_test_store(params);
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  auto* maintenance = (*store)->maintenance();
  BOOST_REQUIRE(maintenance != nullptr);
  BOOST_TEST(static_cast<bool>(maintenance->open_log_checkpointer())
             == (backend == store_backend::sqlite));
  if (backend == store_backend::postgres)
    BOOST_TEST(maintenance->cold_copy_folder().empty()); // no cold copies
  BOOST_TEST(std::string{(*store)->backend_name()} == to_string(backend));
}

BOOST_AUTO_TEST_SUITE_END() // store_backend_test
