// Tests of semantic memory (store/facts.hpp, SQLite schema v6; store/pg/pg_facts.hpp,
// PostgreSQL schema v4): add, replace by key, remove as a tombstone, list and
// full-text search in English and Chinese through every route, tenant isolation,
// retired versions only on request, the limits, and that the table never loses a
// row. Every case runs on both backends (tests/store_backends.hpp).
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

#include "messages/mneme_types.hpp"
#include "store/sqlite/sqlite_facts.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "store/sqlite/store_reader.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(facts_store_test)

using namespace mneme;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

namespace {

using testing::store_backend;

struct fixture {
  testing::temp_dir dir{"mneme-facts"};
  store_params params;
  testing::test_store store;

  // Opens a fresh, empty store of backend `b`.
  void open(store_backend b) {
    testing::use_backend(b, params, dir);
    auto s = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
  }

  fact_record put(const std::string& user, const std::string& key, const std::string& value,
                  time_ms now = 1000, const std::string& source = "s1") {
    fact_record f;
    f.user_id = user;
    f.key = key;
    f.value = value;
    f.source_session = source;
    auto r = store->put_fact(f, now);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    return *r;
  }

  caf::expected<fact_record> remove(const std::string& user, const std::string& key,
                                    time_ms now) {
    return store->remove_fact(user, key, now);
  }

  // The active version of (user, key), found through the listing.
  std::optional<fact_record> active(const std::string& user, const std::string& key) {
    fact_query q;
    q.user_id = user;
    q.limit = fact_query_max_limit;
    auto all = store->query_facts(q);
    BOOST_REQUIRE_MESSAGE(all, err_of(all));
    for (auto& f : *all)
      if (f.key == key && f.active)
        return f;
    return std::nullopt;
  }

  std::vector<fact_record> search(const std::string& user, const std::string& text,
                                  bool include_inactive = false) {
    fact_query q;
    q.user_id = user;
    q.text = text;
    q.include_inactive = include_inactive;
    auto r = store->query_facts(q);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    return *r;
  }

  int64_t count(const char* sql) { return testing::store_scalar(store, sql); }
};

std::vector<std::string> keys_of(const std::vector<fact_record>& facts) {
  std::vector<std::string> out;
  for (auto& f : facts)
    out.push_back(f.key);
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(facts)

BOOST_DATA_TEST_CASE_F(fixture, an_added_fact_is_listed_and_found_by_its_key_and_its_value, data::make(testing::all_store_backends()),
                       backend) {
  open(backend);
  auto f = put("alice", "editor", "prefers vim with relative line numbers", 1000, "sess-7");
  BOOST_TEST(f.id > 0);
  BOOST_TEST(f.active);
  BOOST_TEST(f.created_at_ms == 1000);
  BOOST_TEST(f.updated_at_ms == 1000);
  BOOST_TEST(f.source_session == "sess-7");
  put("alice", "timezone", "Europe/Berlin", 1001);
  BOOST_TEST(keys_of(search("alice", "")) == (std::vector<std::string>{"timezone", "editor"}));
  BOOST_TEST(keys_of(search("alice", "vim")) == std::vector<std::string>{"editor"});
  BOOST_TEST(keys_of(search("alice", "editor")) == std::vector<std::string>{"editor"});
  BOOST_TEST(keys_of(search("alice", "berlin")) == std::vector<std::string>{"timezone"});
  BOOST_TEST(search("alice", "emacs").empty());
}

BOOST_DATA_TEST_CASE_F(fixture, replacing_a_key_keeps_one_active_version_and_retires_the_old_one, data::make(testing::all_store_backends()),
                       backend) {
  open(backend);
  auto first = put("alice", "editor", "vim", 1000);
  auto second = put("alice", "editor", "helix", 2000, "sess-9");
  BOOST_TEST(second.id != first.id);
  BOOST_TEST(second.created_at_ms == 1000); // the key's age is kept
  BOOST_TEST(second.updated_at_ms == 2000);
  auto now = active("alice", "editor");
  BOOST_REQUIRE(now);
  BOOST_TEST(now->value == "helix");
  BOOST_TEST(search("alice", "vim").empty());
  auto all = search("alice", "vim", true);
  BOOST_REQUIRE(all.size() == 1u);
  BOOST_TEST(all[0].id == first.id);
  BOOST_TEST(!all[0].active);
  BOOST_TEST(all[0].replaced_by == second.id);
  BOOST_TEST(all[0].removed_at_ms == 0);
  BOOST_TEST(search("alice", "").size() == 1u);
  BOOST_TEST(search("alice", "", true).size() == 2u);
}

BOOST_DATA_TEST_CASE_F(fixture, putting_the_same_value_again_writes_no_new_version, data::make(testing::all_store_backends()),
                       backend) {
  open(backend);
  auto first = put("alice", "editor", "vim", 1000);
  auto again = put("alice", "editor", "vim", 5000);
  BOOST_TEST(again.id == first.id);
  BOOST_TEST(again.updated_at_ms == 1000);
  BOOST_TEST(count("SELECT count(*) FROM facts") == 1);
}

BOOST_DATA_TEST_CASE_F(fixture, a_removed_fact_is_a_tombstone_found_only_with_include_inactive, data::make(testing::all_store_backends()),
                       backend) {
  open(backend);
  auto f = put("alice", "pet", "a cat named Miso", 1000);
  auto removed = remove("alice", "pet", 3000);
  BOOST_REQUIRE_MESSAGE(removed, err_of(removed));
  BOOST_TEST(removed->id == f.id);
  BOOST_TEST(!removed->active);
  BOOST_TEST(removed->removed_at_ms == 3000);
  BOOST_TEST(search("alice", "miso").empty());
  BOOST_TEST(search("alice", "").empty());
  BOOST_TEST(!active("alice", "pet"));
  BOOST_TEST(search("alice", "miso", true).size() == 1u);
  auto again = remove("alice", "pet", 4000);
  BOOST_REQUIRE(!again);
  BOOST_TEST(again.error() == errc::not_found);
  BOOST_TEST(render_error(again.error()).find("pet") != std::string::npos);
  auto back = put("alice", "pet", "a dog named Udon", 5000);
  BOOST_TEST(back.created_at_ms == 5000); // a put after a remove starts afresh
}

BOOST_DATA_TEST_CASE_F(fixture, nothing_is_ever_deleted_from_the_facts_table, data::make(testing::all_store_backends()),
                       backend) {
  open(backend);
  put("alice", "editor", "vim", 1000);
  put("alice", "editor", "helix", 2000);
  put("alice", "editor", "zed", 3000);
  BOOST_REQUIRE(remove("alice", "editor", 4000));
  BOOST_TEST(count("SELECT count(*) FROM facts") == 3);
  BOOST_TEST(count("SELECT count(*) FROM facts WHERE active = 1") == 0);
  BOOST_TEST(!testing::store_exec_ok(store, "DELETE FROM facts"));
  BOOST_TEST(!testing::store_exec_ok(store, "UPDATE facts SET value = 'x'"));
  BOOST_TEST(!testing::store_exec_ok(store, "UPDATE facts SET key = 'x'"));
  BOOST_TEST(count("SELECT count(*) FROM facts") == 3);
}

BOOST_DATA_TEST_CASE_F(fixture, chinese_facts_are_found_by_bigrams_and_glued_latin_words,
                       data::make(testing::all_store_backends())
                         * data::make({"乌龙茶", "乌龙", "数据库", "youer", "服务端"}),
                       backend, query) {
  open(backend);
  put("lin", "drink", "用户喜欢喝乌龙茶", 1000);
  put("lin", "project", "修改youer服务端的数据库", 1001);
  put("lin", "city", "住在上海", 1002);
  auto hits = search("lin", query);
  BOOST_TEST_REQUIRE(hits.size() == 1u);
  BOOST_TEST((hits[0].key == "drink" || hits[0].key == "project"));
  BOOST_TEST(hits[0].value.find(query) != std::string::npos);
}

BOOST_DATA_TEST_CASE_F(fixture, a_short_fragment_inside_a_word_is_found_by_the_substring_scan, data::make(testing::all_store_backends()),
                       backend) {
  open(backend);
  put("alice", "drink", "greentea every morning", 1000);
  BOOST_TEST(keys_of(search("alice", "ntea")) == std::vector<std::string>{"drink"}); // trigram
  BOOST_TEST(keys_of(search("alice", "nt")) == std::vector<std::string>{"drink"});   // scan
  BOOST_TEST(search("alice", "zz").empty());
}

BOOST_DATA_TEST_CASE_F(fixture, a_user_sees_only_their_own_facts, data::make(testing::all_store_backends()),
                       backend) {
  open(backend);
  put("alice", "editor", "vim", 1000);
  put("bob", "editor", "emacs", 1000);
  BOOST_TEST(search("bob", "vim").empty());
  BOOST_TEST(search("bob", "vim", true).empty());
  auto mine = search("bob", "");
  BOOST_REQUIRE(mine.size() == 1u);
  BOOST_TEST(mine[0].value == "emacs");
  BOOST_TEST(!remove("bob", "nonexistent", 2000));
  BOOST_REQUIRE(remove("bob", "editor", 2000));
  BOOST_TEST(static_cast<bool>(active("alice", "editor"))); // alice's fact untouched
}

BOOST_DATA_TEST_CASE_F(fixture, hostile_query_text_never_fails_the_search, data::make(testing::all_store_backends()),
                       backend) {
  open(backend);
  put("alice", "note", "quote \"here\" and (parens)", 1000);
  for (auto q : {"\"unbalanced", "a OR", "NOT", "key:value", "'; DROP TABLE facts; --",
                 "(((", "*", "^x"}) {
    fact_query fq;
    fq.user_id = "alice";
    fq.text = q;
    auto r = store->query_facts(fq);
    BOOST_TEST(static_cast<bool>(r), q);
  }
  BOOST_TEST(count("SELECT count(*) FROM facts") == 1);
}

// SQLite: a read-only reader; PostgreSQL: a second store on the same database.
BOOST_DATA_TEST_CASE_F(fixture, another_connection_searches_the_facts_the_writer_committed,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  put("alice", "editor", "vim", 1000);
  fact_query q;
  q.user_id = "alice";
  q.text = "vim";
  caf::expected<std::vector<fact_record>> r{std::vector<fact_record>{}};
  if (backend == store_backend::sqlite) {
    auto reader = store_reader::open(params);
    BOOST_REQUIRE_MESSAGE(reader, err_of(reader));
    r = query_facts((*reader)->connection(), q);
  } else {
    auto other = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(other, err_of(other));
    r = (*other)->query_facts(q);
  }
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(keys_of(*r) == std::vector<std::string>{"editor"});
}

// PostgreSQL takes writers of one key from several connections (nodes, the CLI
// beside the daemon): they run one after the other, every put succeeds, and exactly
// one version stays active with each retired one linked to its successor.
BOOST_FIXTURE_TEST_CASE(concurrent_writers_of_one_key_on_postgres_keep_one_active_version,
                        fixture) {
  open(store_backend::postgres);
  constexpr int writers = 3;
  constexpr int puts_each = 30;
  std::atomic<int> failed{0};
  std::string first_error;
  std::mutex error_mutex;
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w)
    threads.emplace_back([&, w] {
      auto own = testing::open_test_store(params);
      if (!own) {
        ++failed;
        return;
      }
      for (int i = 0; i < puts_each; ++i) {
        fact_record f;
        f.user_id = "alice";
        f.key = "editor";
        f.value = "writer " + std::to_string(w) + " put " + std::to_string(i);
        auto r = (*own)->put_fact(f, 1000 + i);
        if (!r) {
          std::lock_guard<std::mutex> lock{error_mutex};
          if (failed++ == 0)
            first_error = render_error(r.error());
        }
      }
    });
  for (auto& t : threads)
    t.join();
  BOOST_TEST(failed.load() == 0, first_error);
  BOOST_TEST(count("SELECT count(*) FROM facts") == writers * puts_each);
  BOOST_TEST(count("SELECT count(*) FROM facts WHERE active = 1") == 1);
  BOOST_TEST(count("SELECT count(*) FROM facts WHERE active = 0 AND replaced_by = 0") == 0);
  BOOST_TEST(count("SELECT count(DISTINCT replaced_by) FROM facts WHERE active = 0")
             == writers * puts_each - 1);
}

struct bad_fact {
  const char* what;       // the field named in the error
  std::string user, key, value, source;
};

std::ostream& operator<<(std::ostream& os, const bad_fact& b) { return os << b.what; }

BOOST_DATA_TEST_CASE_F(fixture, a_fact_outside_the_limits_is_refused_naming_the_field,
                       data::make(std::vector<bad_fact>{
                         {"user_id", "", "k", "v", ""},
                         {"user_id", std::string(fact_user_max_bytes + 1, 'u'), "k", "v", ""},
                         {"key", "u", "", "v", ""},
                         {"key", "u", std::string(257, 'k'), "v", ""},
                         {"value", "u", "k", "", ""},
                         {"value", "u", "k", std::string(65537, 'v'), ""},
                         {"source_session", "u", "k", "v", std::string(129, 's')},
                       }) * data::make(testing::all_store_backends()),
                       bad, backend) {
  open(backend);
  fact_record f;
  f.user_id = bad.user;
  f.key = bad.key;
  f.value = bad.value;
  f.source_session = bad.source;
  auto r = store->put_fact(f, 1000);
  BOOST_REQUIRE(!r);
  BOOST_TEST(r.error() == errc::bad_request);
  BOOST_TEST(render_error(r.error()).find(bad.what) != std::string::npos);
  BOOST_TEST(count("SELECT count(*) FROM facts") == 0);
}

BOOST_DATA_TEST_CASE_F(fixture, the_largest_allowed_key_and_value_are_accepted, data::make(testing::all_store_backends()),
                       backend) {
  open(backend);
  BOOST_TEST(fact_key_max_bytes == 256u);
  BOOST_TEST(fact_value_max_bytes == 65536u);
  put("u", std::string(256, 'k'), std::string(65536, 'v'));
  BOOST_TEST(search("u", "").size() == 1u);
}

BOOST_DATA_TEST_CASE_F(fixture, a_query_limit_outside_one_to_a_thousand_is_refused,
                       data::make(testing::all_store_backends())
                         * data::make({int64_t{0}, int64_t{-1}, int64_t{1001}}),
                       backend, limit) {
  open(backend);
  fact_query q;
  q.user_id = "u";
  q.limit = limit;
  auto r = store->query_facts(q);
  BOOST_REQUIRE(!r);
  BOOST_TEST(r.error() == errc::bad_request);
}

BOOST_DATA_TEST_CASE_F(fixture, the_limit_caps_the_results, data::make(testing::all_store_backends()),
                       backend) {
  open(backend);
  for (int i = 0; i < 5; ++i)
    put("u", "k" + std::to_string(i), "shared word", 1000 + i);
  fact_query q;
  q.user_id = "u";
  q.text = "shared";
  q.limit = 3;
  auto r = store->query_facts(q);
  BOOST_REQUIRE(r);
  BOOST_TEST(r->size() == 3u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // facts_store_test
