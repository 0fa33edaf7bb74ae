// Tests of the tenant scope of session keys at the gateway: a turn or an append by
// another user on a key whose session belongs to someone else is refused without
// naming the owner and stores nothing; an empty user is the key's owner (a new key:
// gateway.default_user); the
// owner keeps working, also after a restart (the owner comes from the store).
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "tests/serve_runtime_fixture.hpp"

BOOST_AUTO_TEST_SUITE(tenant_keys_test)

using namespace mneme;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

namespace {

struct tenant_fixture : test::serve_runtime_fixture {
  caf::expected<int64_t> append(const std::string& key, const std::string& user,
                                std::string content) {
    message m;
    m.role = msg_role::user;
    m.content = std::move(content);
    return call<int64_t>(rt->gateway(), gw_append_atom_v, key, user, m);
  }
  caf::expected<turn_reply> say(const std::string& key, const std::string& user,
                                const std::string& text) {
    return call<turn_reply>(rt->gateway(), gw_message_atom_v, key, user, text);
  }
  size_t live_rows(const std::string& key) {
    auto rows = call<std::vector<message>>(rt->gateway(), gw_live_atom_v, key);
    BOOST_REQUIRE_MESSAGE(rows, err_of(rows));
    return rows->size();
  }
  static void require_refused_without_the_owner(const caf::error& err) {
    BOOST_TEST((err == errc::foreign_session));
    auto text = render_error(err);
    BOOST_TEST(text.find("belongs to another user") != std::string::npos, text);
    BOOST_TEST(text.find("alice") == std::string::npos, text);
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(tenant_keys, tenant_fixture)

// Whether the stranger writes while the owner's session is hosted or only stored.
BOOST_DATA_TEST_CASE(an_append_by_another_user_is_refused_and_stores_nothing,
                     data::make({false, true}), after_restart) {
  start();
  BOOST_REQUIRE_MESSAGE(append("k", "alice", "alice's row"), "owner append");
  if (after_restart)
    restart();
  auto before = live_rows("k");
  auto id = append("k", "bob", "bob's row");
  BOOST_REQUIRE(!id);
  require_refused_without_the_owner(id.error());
  BOOST_TEST(live_rows("k") == before);
  BOOST_TEST(static_cast<bool>(append("k", "alice", "still mine")));
  BOOST_TEST(live_rows("k") == before + 1);
}

BOOST_AUTO_TEST_CASE(a_turn_by_another_user_is_refused_before_any_model_call) {
  start();
  BOOST_REQUIRE(append("k", "alice", "alice's row"));
  auto before = live_rows("k");
  auto reply = say("k", "bob", "hello");
  BOOST_REQUIRE(!reply);
  require_refused_without_the_owner(reply.error());
  BOOST_TEST(llm.stats().chat_requests == 0);
  BOOST_TEST(live_rows("k") == before);
}

BOOST_AUTO_TEST_CASE(an_empty_user_is_the_default_user) {
  rc.gateway.default_user = "alice";
  start();
  BOOST_REQUIRE(append("k", "alice", "alice's row"));
  BOOST_TEST(static_cast<bool>(append("k", "", "as the default user")));
  BOOST_REQUIRE(append("other", "", "opened by the default user"));
  auto rec = call<session_snapshot>(rt->gateway(), gw_state_atom_v, std::string{"other"});
  BOOST_REQUIRE_MESSAGE(rec, err_of(rec));
  BOOST_TEST(rec->record.user_id == "alice");
  BOOST_TEST(!append("other", "bob", "not bob's"));
}

// As on the facts route: no user names the key's owner (docs/api.md).
BOOST_AUTO_TEST_CASE(an_empty_user_writes_as_the_owner_of_an_existing_key) {
  rc.gateway.default_user = "someone";
  start();
  BOOST_REQUIRE(append("k", "alice", "alice's row"));
  auto before = live_rows("k");
  auto id = append("k", "", "no user given");
  BOOST_TEST(static_cast<bool>(id), err_of(id));
  BOOST_TEST(live_rows("k") == before + 1);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // tenant_keys_test
