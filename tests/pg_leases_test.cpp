// Tests of session-key leases and fencing between nodes on one PostgreSQL database
// (store/pg/pg_leases.hpp, pg_store node mode; docs/scale-out.md "Leases"): a free key
// is granted, a live lease sends other nodes to its owner, an expired one is taken
// over with a larger token and its old owner learns at renewal that it lost it; a node
// writes a key's sessions only under the token it holds (every row stamped with it),
// a write refused by its fence stores nothing, and a takeover waits for a write in
// progress. Expiry is set by SQL, never waited for.
#include <boost/test/unit_test.hpp>

#include <pqxx/pqxx>

#include "store/pg/pg_leases.hpp"
#include "store/pg/pg_store.hpp"
#include "tests/message_builders.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(pg_leases_test)

using namespace mneme;
using mneme::testing::err_of;

namespace {

struct two_nodes {
  testing::temp_dir dir{"mneme-pg-leases"};
  store_params params;
  std::unique_ptr<pg_leases> a_leases, b_leases;
  std::unique_ptr<pg_store> a_store, b_store;
  const std::string key = "chat-7";

  two_nodes() {
    testing::use_backend(testing::store_backend::postgres, params, dir);
    a_leases = open_leases("a");
    b_leases = open_leases("b");
    a_store = open_node_store("a");
    b_store = open_node_store("b");
  }

  std::unique_ptr<pg_leases> open_leases(const std::string& node) {
    auto l = pg_leases::open(params, lease_identity{node, "http://" + node + ":8077", 10000});
    BOOST_REQUIRE_MESSAGE(l, err_of(l));
    return std::move(*l);
  }

  std::unique_ptr<pg_store> open_node_store(const std::string& node) {
    auto s = pg_store::open(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    (*s)->set_node(node, std::chrono::seconds(10));
    return std::move(*s);
  }

  int64_t scalar(const std::string& sql) {
    pqxx::connection c{params.url};
    pqxx::nontransaction t{c};
    return t.exec1(sql)[0].as<int64_t>();
  }

  void expire_all() {
    pqxx::connection c{params.url};
    pqxx::nontransaction t{c};
    t.exec0("UPDATE mneme_leases SET expires_at = clock_timestamp() - interval '1 second'");
  }

  int64_t granted(pg_leases& l) {
    auto out = l.acquire(key);
    BOOST_REQUIRE_MESSAGE(out, err_of(out));
    BOOST_REQUIRE(out->granted);
    return out->token;
  }

  session_record session_under_key(pg_store& s) {
    session_record rec;
    rec.session_key = key;
    rec.user_id = "u";
    auto created = s.create_session(rec, 1000);
    BOOST_REQUIRE_MESSAGE(created, err_of(created));
    return *created;
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(a_free_key_is_granted_and_a_live_lease_sends_others_to_its_owner,
                        two_nodes) {
  auto t1 = granted(*a_leases);
  BOOST_TEST(t1 > 0);
  auto other = b_leases->acquire(key);
  BOOST_REQUIRE_MESSAGE(other, err_of(other));
  BOOST_TEST(!other->granted);
  BOOST_TEST(other->owner_node == "a");
  BOOST_TEST(other->owner_url == "http://a:8077");
  // Its owner acquiring again (a restarted node) gets a new token, fencing the old one.
  auto t2 = granted(*a_leases);
  BOOST_TEST(t2 > t1);
  BOOST_TEST(scalar("SELECT count(*) FROM mneme_lease_grants") == 2);
}

BOOST_FIXTURE_TEST_CASE(an_expired_lease_is_taken_over_and_its_old_owner_loses_it_at_renewal,
                        two_nodes) {
  auto t1 = granted(*a_leases);
  auto held = std::vector<held_lease>{{key, t1}};
  auto lost = a_leases->renew(held);
  BOOST_REQUIRE_MESSAGE(lost, err_of(lost));
  BOOST_TEST(lost->empty()); // nobody took it: still a's
  expire_all();
  auto taken = b_leases->acquire(key);
  BOOST_REQUIRE_MESSAGE(taken, err_of(taken));
  BOOST_TEST(taken->granted);
  BOOST_TEST(taken->token > t1);
  BOOST_TEST(taken->took_over_from == "a");
  lost = a_leases->renew(held);
  BOOST_REQUIRE_MESSAGE(lost, err_of(lost));
  BOOST_TEST(*lost == std::vector<std::string>{key});
  BOOST_TEST(scalar("SELECT count(*) FROM mneme_lease_grants WHERE took_over_from = 'a'") == 1);
}

BOOST_FIXTURE_TEST_CASE(renewal_extends_an_expired_lease_nobody_took, two_nodes) {
  auto t1 = granted(*a_leases);
  expire_all();
  auto lost = a_leases->renew({{key, t1}});
  BOOST_REQUIRE_MESSAGE(lost, err_of(lost));
  BOOST_TEST(lost->empty());
  // Renewed for lease_ms (10 s) from now: live for more than 5 s.
  BOOST_TEST(scalar("SELECT count(*) FROM mneme_leases"
                    " WHERE expires_at > clock_timestamp() + interval '5 seconds'") == 1);
  BOOST_TEST(!b_leases->acquire(key)->granted);
}

BOOST_FIXTURE_TEST_CASE(a_released_key_is_free_at_once_and_a_stale_release_changes_nothing,
                        two_nodes) {
  auto t1 = granted(*a_leases);
  BOOST_REQUIRE(!a_leases->release({key, t1 + 1000})); // not its token: no effect
  BOOST_TEST(!b_leases->acquire(key)->granted);
  BOOST_REQUIRE(!a_leases->release({key, t1}));
  auto taken = b_leases->acquire(key);
  BOOST_REQUIRE(taken);
  BOOST_TEST(taken->granted);
}

BOOST_FIXTURE_TEST_CASE(a_node_writes_a_key_only_under_the_token_it_holds, two_nodes) {
  // Without the lease registered, nothing is written.
  session_record rec;
  rec.session_key = key;
  BOOST_TEST(a_store->create_session(rec, 1000).error() == errc::lease_lost);
  auto t1 = granted(*a_leases);
  a_store->set_fence(key, t1);
  auto s = session_under_key(*a_store);
  auto first = a_store->append(testing::msg(s.id, msg_role::user, "from a"));
  BOOST_REQUIRE_MESSAGE(first, err_of(first));
  BOOST_TEST(scalar("SELECT fence_token FROM messages WHERE id = " + std::to_string(*first)) == t1);

  expire_all();
  auto t2 = granted(*b_leases);
  b_store->set_fence(key, t2);
  // a still believes it holds the key: every kind of write is refused, nothing stored.
  auto rows_before = scalar("SELECT count(*) FROM messages");
  auto refused = a_store->append(testing::msg(s.id, msg_role::user, "late from a"));
  BOOST_TEST(refused.error() == errc::lease_lost);
  BOOST_TEST(a_store->save_triggers(s.id, trigger_state{}) == errc::lease_lost);
  BOOST_TEST(a_store->create_checkpoint(s.id, "cp", 2000).error() == errc::lease_lost);
  BOOST_TEST(a_store->end_session(s.id, 3000, "bye").error() == errc::lease_lost);
  BOOST_REQUIRE(!a_store->begin_group());
  BOOST_TEST(a_store->insert_in_group(testing::msg(s.id, msg_role::user, "grouped")).error()
             == errc::lease_lost);
  BOOST_REQUIRE(!a_store->commit_group());
  BOOST_TEST(scalar("SELECT count(*) FROM messages") == rows_before);

  auto second = b_store->append(testing::msg(s.id, msg_role::assistant, "from b"));
  BOOST_REQUIRE_MESSAGE(second, err_of(second));
  BOOST_TEST(scalar("SELECT fence_token FROM messages WHERE id = " + std::to_string(*second))
             == t2);
}

BOOST_FIXTURE_TEST_CASE(a_takeover_waits_for_a_write_in_progress_to_commit, two_nodes) {
  auto t1 = granted(*a_leases);
  a_store->set_fence(key, t1);
  auto s = session_under_key(*a_store);
  expire_all();
  // a's group holds the lease row share-locked until it commits.
  BOOST_REQUIRE(!a_store->begin_group());
  auto in_group = a_store->insert_in_group(testing::msg(s.id, msg_role::user, "in flight"));
  BOOST_REQUIRE_MESSAGE(in_group, err_of(in_group));
  auto blocked = b_leases->acquire(key, std::chrono::milliseconds{200});
  BOOST_TEST(blocked.error() == errc::storage_locked);
  BOOST_REQUIRE(!a_store->commit_group());
  auto taken = b_leases->acquire(key);
  BOOST_REQUIRE_MESSAGE(taken, err_of(taken));
  BOOST_TEST(taken->granted);
  // The write a committed under its token is there, stamped with it.
  BOOST_TEST(scalar("SELECT count(*) FROM messages WHERE fence_token = " + std::to_string(t1))
             == 1);
}

BOOST_AUTO_TEST_CASE(a_store_outside_node_mode_checks_no_lease_and_stamps_no_token) {
  testing::temp_dir dir{"mneme-pg-leases-off"};
  store_params params;
  testing::use_backend(testing::store_backend::postgres, params, dir);
  auto s = pg_store::open(params);
  BOOST_REQUIRE_MESSAGE(s, err_of(s));
  session_record rec;
  rec.session_key = "k";
  auto created = (*s)->create_session(rec, 1000);
  BOOST_REQUIRE_MESSAGE(created, err_of(created));
  auto id = (*s)->append(testing::msg(created->id, msg_role::user, "x"));
  BOOST_REQUIRE_MESSAGE(id, err_of(id));
  pqxx::connection c{params.url};
  pqxx::nontransaction t{c};
  BOOST_TEST(t.exec1("SELECT fence_token IS NULL FROM messages")[0].as<bool>());
}

BOOST_AUTO_TEST_CASE(a_lease_identity_must_name_the_node_and_its_url) {
  testing::temp_dir dir{"mneme-pg-leases-id"};
  store_params params;
  testing::use_backend(testing::store_backend::postgres, params, dir);
  BOOST_TEST(pg_leases::open(params, lease_identity{"", "http://a:1", 1000}).error()
             == errc::config_invalid);
  BOOST_TEST(pg_leases::open(params, lease_identity{"a", "", 1000}).error()
             == errc::config_invalid);
  BOOST_TEST(pg_leases::open(params, lease_identity{"a", "http://a:1", 0}).error()
             == errc::config_invalid);
}

BOOST_AUTO_TEST_SUITE_END()
