// Tests of the HTTP API's access decisions (policies/access_scope.hpp) on data: every
// route class against no credential, an admin, a user naming nobody, itself or someone
// else, and a user on its own key, another user's key and a key without a session; the
// order of the verdicts (401 before 403 before 404); the scope texts of a tokens file
// line; and the user a request acts as.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <optional>
#include <sstream>
#include <string>

#include "policies/access_scope.hpp"

BOOST_AUTO_TEST_SUITE(access_scope_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

enum class access_caller { nobody, admin, alice };

std::optional<access_scope> access_scope_of(access_caller c) {
  switch (c) {
    case access_caller::nobody: return std::nullopt;
    case access_caller::admin: return access_scope::admin();
    case access_caller::alice: return access_scope::of_user("alice");
  }
  return std::nullopt;
}

const char* access_caller_name(access_caller c) {
  switch (c) {
    case access_caller::nobody: return "nobody";
    case access_caller::admin: return "admin";
    case access_caller::alice: return "user:alice";
  }
  return "?";
}

struct access_case {
  route_access route;
  access_caller who;
  const char* named;                 // "" = no user named
  std::optional<const char*> owner;  // the key's owner; nullopt = no session under it
  access_verdict want;
};

std::ostream& operator<<(std::ostream& os, const access_case& c) {
  return os << c.route << " " << access_caller_name(c.who) << " named='" << c.named << "' owner="
            << (c.owner ? *c.owner : "none") << " -> " << c.want;
}

using r = route_access;
using v = access_verdict;
constexpr std::optional<const char*> no_session = std::nullopt;

const access_case access_cases[] = {
  // open: everyone, even without a credential.
  {r::open, access_caller::nobody, "", no_session, v::allow},
  {r::open, access_caller::alice, "", no_session, v::allow},
  {r::open, access_caller::admin, "", no_session, v::allow},
  // Without a valid credential every other route is 401, whatever else holds.
  {r::admin_only, access_caller::nobody, "", no_session, v::unauthorized},
  {r::user_named, access_caller::nobody, "alice", no_session, v::unauthorized},
  {r::key_owned, access_caller::nobody, "", "alice", v::unauthorized},
  // admin_only: /metrics.
  {r::admin_only, access_caller::admin, "", no_session, v::allow},
  {r::admin_only, access_caller::alice, "", no_session, v::forbidden},
  // user_named: search, session list, facts.
  {r::user_named, access_caller::admin, "", no_session, v::allow},
  {r::user_named, access_caller::admin, "bob", no_session, v::allow},
  {r::user_named, access_caller::alice, "", no_session, v::allow},
  {r::user_named, access_caller::alice, "alice", no_session, v::allow},
  {r::user_named, access_caller::alice, "bob", no_session, v::forbidden},
  {r::user_named, access_caller::alice, "alicex", no_session, v::forbidden},
  {r::user_named, access_caller::alice, "Alice", no_session, v::forbidden},
  // key_owned: every /v1/sessions/{key} route.
  {r::key_owned, access_caller::admin, "", "bob", v::allow},
  {r::key_owned, access_caller::admin, "carol", "bob", v::allow},
  {r::key_owned, access_caller::alice, "", "alice", v::allow},
  {r::key_owned, access_caller::alice, "alice", "alice", v::allow},
  {r::key_owned, access_caller::alice, "", no_session, v::allow},
  {r::key_owned, access_caller::alice, "", "bob", v::hidden},
  // Naming another user is refused before the key's owner is considered.
  {r::key_owned, access_caller::alice, "bob", "bob", v::forbidden},
  {r::key_owned, access_caller::alice, "bob", no_session, v::forbidden},
  {r::key_owned, access_caller::alice, "bob", "alice", v::forbidden},
};

} // namespace

BOOST_DATA_TEST_CASE(each_scope_reaches_only_what_its_route_allows, data::make(access_cases), c) {
  access_question q;
  q.route = c.route;
  q.who = access_scope_of(c.who);
  q.named_user = c.named;
  if (c.owner)
    q.key_owner = std::string_view{*c.owner};
  BOOST_TEST(decide_access(q) == c.want);
}

BOOST_AUTO_TEST_CASE(an_admin_is_never_refused) {
  for (auto route : {r::open, r::admin_only, r::user_named, r::key_owned})
    for (const char* owner : {"alice", "bob", ""}) {
      access_question q{route, access_scope::admin(), "someone", std::string_view{owner}};
      BOOST_TEST(decide_access(q) == v::allow, route << " owner=" << owner);
    }
}

BOOST_AUTO_TEST_CASE(a_user_acts_as_itself_and_an_admin_as_the_user_it_names) {
  BOOST_TEST(acting_user(access_scope::of_user("alice"), "") == "alice");
  BOOST_TEST(acting_user(access_scope::of_user("alice"), "alice") == "alice");
  BOOST_TEST(acting_user(access_scope::admin(), "bob") == "bob");
  BOOST_TEST(acting_user(access_scope::admin(), "") == "");
}

BOOST_AUTO_TEST_CASE(a_user_reaches_only_its_own_sessions_and_an_admin_every_one) {
  BOOST_TEST(reachable_owner(access_scope::of_user("alice")) == "alice");
  BOOST_TEST(reachable_owner(access_scope::admin()) == "");
  BOOST_TEST(may_reach(access_scope::of_user("alice"), "alice"));
  BOOST_TEST(!may_reach(access_scope::of_user("alice"), "bob"));
  BOOST_TEST(!may_reach(access_scope::of_user("alice"), ""));
  BOOST_TEST(may_reach(access_scope::admin(), "bob"));
  BOOST_TEST(may_reach(access_scope::admin(), ""));
}

struct scope_text_case {
  const char* text;
  std::optional<access_scope> want;
};

std::ostream& operator<<(std::ostream& os, const scope_text_case& c) {
  os << "'" << c.text << "' -> ";
  return c.want ? os << *c.want : os << "invalid";
}

const scope_text_case scope_texts[] = {
  {"admin", access_scope::admin()},
  {"user:alice", access_scope::of_user("alice")},
  {"user:a b", access_scope::of_user("a b")},       // a user may hold spaces
  {"user:user:x", access_scope::of_user("user:x")}, // and colons
  {"user:", std::nullopt},
  {"user", std::nullopt},
  {"Admin", std::nullopt},
  {"admin ", std::nullopt},
  {"", std::nullopt},
  {"users:alice", std::nullopt},
};

BOOST_DATA_TEST_CASE(scope_texts_parse_strictly_and_print_back, data::make(scope_texts), c) {
  auto got = parse_access_scope(c.text);
  BOOST_TEST(got.has_value() == c.want.has_value());
  if (got && c.want) {
    BOOST_TEST((*got == *c.want));
    BOOST_TEST(to_string(*got) == c.text);
  }
}

BOOST_AUTO_TEST_SUITE_END() // access_scope_test
