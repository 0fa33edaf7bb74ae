// Tests of the shared vocabulary: row states, roles, error rendering and the
// CAF serialization of the transcript types.
#include <boost/test/unit_test.hpp>

#include "caf/binary_deserializer.hpp"
#include "caf/binary_serializer.hpp"

#include "messages/mneme_types.hpp"

BOOST_AUTO_TEST_SUITE(messages_test)

using namespace mneme;

BOOST_AUTO_TEST_CASE(row_state_follows_the_two_flags_of_spec_section_1) {
  message m;
  BOOST_TEST((m.state() == row_state::live));
  m.active = false;
  m.compacted = true;
  BOOST_TEST((m.state() == row_state::archived));
  m.compacted = false;
  BOOST_TEST((m.state() == row_state::rolled_back));
}

BOOST_AUTO_TEST_CASE(every_role_round_trips_through_its_name) {
  for (auto r : {msg_role::system, msg_role::user, msg_role::assistant, msg_role::tool})
    BOOST_TEST((parse_role(to_string(r)) == r));
  BOOST_TEST(!parse_role("developer").has_value());
}

BOOST_AUTO_TEST_CASE(summary_user_rows_are_not_real_user_messages) {
  message m;
  m.role = msg_role::user;
  BOOST_TEST(is_real_user_message(m));
  m.is_summary = true;
  BOOST_TEST(!is_real_user_message(m));
  m.is_summary = false;
  m.role = msg_role::tool;
  BOOST_TEST(!is_real_user_message(m));
}

BOOST_AUTO_TEST_CASE(errors_render_with_their_code_name_and_context) {
  auto err = caf::make_error(errc::storage_disk_full, std::string{"database or disk is full"});
  BOOST_TEST(render_error(err) == "mneme::storage_disk_full: database or disk is full");
  BOOST_TEST(render_error(caf::error{}) == "none");
  BOOST_TEST((err == errc::storage_disk_full));
  BOOST_TEST(to_string(static_cast<errc>(250)) == "unknown(250)");
}

BOOST_AUTO_TEST_CASE(a_message_survives_binary_serialization_field_for_field) {
  caf::actor_system_config cfg;
  register_mneme_types(cfg);
  caf::actor_system sys{cfg};
  message m;
  m.id = 42;
  m.session_id = "s-1";
  m.role = msg_role::assistant;
  m.content = "我爱数据库 and more";
  m.tool_calls = {tool_call{"call_1", "grep", R"({"q":"x"})"}};
  m.timestamp_ms = 1700000000123;
  m.token_estimate = 17;
  m.active = false;
  m.compacted = true;
  m.is_summary = true;
  m.replaced_first_id = 4;
  m.replaced_last_id = 40;
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  BOOST_REQUIRE(!sink(m));
  message back;
  caf::binary_deserializer source{sys, buf};
  BOOST_REQUIRE(!source(back));
  BOOST_TEST(back.id == 42);
  BOOST_TEST(back.session_id == "s-1");
  BOOST_TEST((back.role == msg_role::assistant));
  BOOST_TEST(back.content == m.content);
  BOOST_TEST((back.tool_calls == m.tool_calls));
  BOOST_TEST(back.timestamp_ms == m.timestamp_ms);
  BOOST_TEST((back.state() == row_state::archived));
  BOOST_TEST(back.is_summary);
  BOOST_TEST(back.replaced_last_id == 40);
}

BOOST_AUTO_TEST_SUITE_END() // messages_test
