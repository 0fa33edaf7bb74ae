// Tests of a user's key namespace (policies/key_namespace.hpp): the stored form of a key
// per user and back, the namespace a request's key lives in, and the refusal of a key
// holding the separator.
#include <boost/test/unit_test.hpp>

#include <string>

#include "policies/client_text.hpp"
#include "policies/key_namespace.hpp"

BOOST_AUTO_TEST_SUITE(key_namespace_test)

using namespace mneme;

BOOST_AUTO_TEST_CASE(the_same_key_of_two_users_is_stored_as_two_keys) {
  BOOST_TEST(stored_key("alice", "inbox") == std::string{"alice\x1finbox"});
  BOOST_TEST(stored_key("bob", "inbox") == std::string{"bob\x1finbox"});
  BOOST_TEST(stored_key("alice", "inbox") != stored_key("bob", "inbox"));
  BOOST_TEST(stored_key("", "inbox") == "inbox"); // the unscoped namespace
}

BOOST_AUTO_TEST_CASE(a_stored_key_gives_back_its_user_and_the_clients_key) {
  struct row {
    std::string user, key;
  };
  for (const auto& r : {row{"alice", "inbox"}, row{"a b", "k"}, row{"", "plain"},
                        row{"u\x1fodd", "k2"}, row{"carol", "x:y/z"}}) {
    auto s = stored_key(r.user, r.key);
    BOOST_TEST(visible_key(s) == r.key);
    BOOST_TEST(key_user(s) == r.user);
  }
}

BOOST_AUTO_TEST_CASE(the_namespace_is_the_tokens_user_then_the_named_user_then_the_default) {
  BOOST_TEST(namespace_user("bob", "", "default") == "bob");
  BOOST_TEST(namespace_user("bob", "carol", "default") == "bob"); // never another's
  BOOST_TEST(namespace_user("", "carol", "default") == "carol");  // an admin naming carol
  BOOST_TEST(namespace_user("", "", "default") == "default");
}

BOOST_AUTO_TEST_CASE(an_error_message_shows_a_stored_key_as_the_clients_key) {
  BOOST_TEST(without_namespaces("no session under key '" + stored_key("alice", "inbox") + "'")
             == "no session under key 'inbox'");
  BOOST_TEST(without_namespaces(stored_key("bob", "k") + " and '" + stored_key("a b", "j") + "'")
             == "k and 'j'");
  BOOST_TEST(without_namespaces("plain 'text'") == "plain 'text'");
}

BOOST_AUTO_TEST_CASE(a_key_holding_the_separator_is_refused_naming_it) {
  BOOST_TEST(key_refusal("inbox", session_key_max_bytes).empty());
  auto why = key_refusal(std::string{"bob\x1finbox"}, session_key_max_bytes);
  BOOST_TEST(why.find("U+001F (byte 3)") != std::string::npos);
  BOOST_TEST(why.find("namespace") != std::string::npos);
  BOOST_TEST(key_refusal("", session_key_max_bytes) == "the session key is empty");
  BOOST_TEST(key_refusal(std::string{"a\x01"}, session_key_max_bytes).find("control character")
             != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
