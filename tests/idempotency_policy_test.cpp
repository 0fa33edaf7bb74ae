// Tests of the idempotent-write decisions (issue 47 item 8; policies/idempotency.hpp):
// which Idempotency-Key values are usable, when a stored row is the same request, the
// verdict for each combination of (running, stored, same), and which rows answer a turn.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "policies/idempotency.hpp"
#include "tests/print_vocabulary.hpp"

BOOST_AUTO_TEST_SUITE(idempotency_policy_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

message idem_row(msg_role role, std::string content) {
  message m;
  m.role = role;
  m.content = std::move(content);
  return m;
}

} // namespace

BOOST_DATA_TEST_CASE(
  a_key_is_one_to_255_printable_ascii_bytes,
  data::make({std::string{"a"}, std::string(255, 'x'), std::string{"uuid-1234 abc"},
              std::string{"~!@#$%^&*()"}, std::string{}, std::string(256, 'x'),
              std::string{"tab\there"}, std::string{"nl\n"}, std::string{"caf\xc3\xa9"},
              std::string{" lead"}, std::string{"trail "}, std::string{"del\x7f"}})
    ^ data::make({true, true, true, true, false, false, false, false, false, false, false,
                  false}),
  value, usable) {
  auto why = check_idempotency_key(value);
  BOOST_TEST(why.empty() == usable, why);
  if (!usable)
    BOOST_TEST(why.find("Idempotency-Key") != std::string::npos, why);
}

BOOST_AUTO_TEST_CASE(the_same_request_compares_role_content_and_tool_fields) {
  auto a = idem_row(msg_role::user, "hi");
  auto b = a;
  b.id = 7; // ids, timestamps and state are not the request
  b.timestamp_ms = 99;
  b.active = false;
  b.compacted = true;
  BOOST_TEST(same_request(a, b));
  auto c = a;
  c.content = "hi!";
  BOOST_TEST(!same_request(a, c));
  auto d = a;
  d.role = msg_role::assistant;
  BOOST_TEST(!same_request(a, d));
  auto e = idem_row(msg_role::assistant, "");
  auto f = e;
  e.tool_calls.push_back(tool_call{"c1", "grep", "{}"});
  f.tool_calls.push_back(tool_call{"c1", "grep", "{\"x\":1}"});
  BOOST_TEST(!same_request(e, f));
  auto g = idem_row(msg_role::tool, "42");
  auto h = g;
  g.tool_call_id = "c1";
  h.tool_call_id = "c2";
  BOOST_TEST(!same_request(g, h));
}

BOOST_DATA_TEST_CASE(the_verdict_follows_running_stored_and_same,
                     data::make({true, true, false, false, false})
                       ^ data::make({0, 1, 0, 1, 1})      // rows stored under the key
                       ^ data::make({true, true, true, true, false}) // stored == incoming
                       ^ data::make({idempotency_verdict::in_flight, idempotency_verdict::in_flight,
                                     idempotency_verdict::fresh, idempotency_verdict::replay,
                                     idempotency_verdict::mismatch}),
                     running, n_stored, same, want) {
  auto incoming = idem_row(msg_role::user, "hello");
  std::vector<message> stored;
  if (n_stored > 0)
    stored.push_back(idem_row(msg_role::user, same ? "hello" : "other"));
  BOOST_TEST(decide_idempotent(running, stored, incoming) == want);
}

BOOST_AUTO_TEST_CASE(a_turns_answer_is_the_rows_up_to_the_next_user_row) {
  std::vector<message> stored{idem_row(msg_role::user, "q1"),
                              idem_row(msg_role::assistant, "a1"),
                              idem_row(msg_role::user, "q2"),
                              idem_row(msg_role::assistant, "a2")};
  auto rows = turn_answer_rows(stored);
  BOOST_REQUIRE(rows.size() == 1u);
  BOOST_TEST(rows[0].content == "a1");
  BOOST_TEST(turn_answered(rows));
  // Only the user row: the turn stored its question, no answer (a crash, a failed call).
  BOOST_TEST(!turn_answered(turn_answer_rows({idem_row(msg_role::user, "q1")})));
  // An agent loop cut after a tool result: not answered.
  std::vector<message> cut{idem_row(msg_role::user, "q1"), idem_row(msg_role::assistant, ""),
                           idem_row(msg_role::tool, "42")};
  cut[1].tool_calls.push_back(tool_call{"c1", "grep", "{}"});
  cut[2].tool_call_id = "c1";
  BOOST_TEST(!turn_answered(turn_answer_rows(cut)));
  // A summary row between is not a user turn, and not an answer either.
  std::vector<message> with_summary{idem_row(msg_role::user, "q1"),
                                    idem_row(msg_role::user, "summary")};
  with_summary[1].is_summary = true;
  BOOST_TEST(turn_answer_rows(with_summary).size() == 1u);
  BOOST_TEST(!turn_answered(turn_answer_rows(with_summary)));
}

BOOST_AUTO_TEST_CASE(a_compaction_after_the_answer_leaves_the_turn_answered) {
  std::vector<message> stored{idem_row(msg_role::user, "q1"), idem_row(msg_role::assistant, "a1"),
                              idem_row(msg_role::user, "summary of a1"),
                              idem_row(msg_role::user, "q2")};
  stored[2].is_summary = true;
  auto rows = turn_answer_rows(stored);
  BOOST_REQUIRE(rows.size() == 2u);
  BOOST_TEST(turn_answered(rows));
  BOOST_REQUIRE(turn_answer(rows) != nullptr);
  BOOST_TEST(turn_answer(rows)->content == "a1");
  // The last row that is not a summary decides: a tool result last is not an answer.
  std::vector<message> tool_last{idem_row(msg_role::assistant, "a"), idem_row(msg_role::tool, "r")};
  BOOST_TEST(turn_answer(tool_last) == nullptr);
}

BOOST_AUTO_TEST_CASE(a_door_requests_keyed_row_is_its_last_user_or_tool_message) {
  auto tool = idem_row(msg_role::tool, "cold");
  tool.tool_call_id = "c2";
  std::vector<message> results{idem_row(msg_role::user, "weather?"),
                               idem_row(msg_role::tool, "warm"), tool};
  auto keyed = door_keyed_row(results);
  BOOST_REQUIRE(keyed.has_value());
  BOOST_TEST(keyed->role == msg_role::tool);
  BOOST_TEST(keyed->content == "cold");
  BOOST_TEST(keyed->tool_call_id == "c2");
  auto user = door_keyed_row({idem_row(msg_role::system, "s"), idem_row(msg_role::user, "hi")});
  BOOST_REQUIRE(user.has_value());
  BOOST_TEST(user->content == "hi");
  BOOST_TEST(!door_keyed_row({}).has_value());
  BOOST_TEST(!door_keyed_row({idem_row(msg_role::user, "q"), idem_row(msg_role::assistant, "a")})
                .has_value());
  auto summary = idem_row(msg_role::user, "compacted");
  summary.is_summary = true;
  BOOST_TEST(!door_keyed_row({summary}).has_value());
}

BOOST_AUTO_TEST_CASE(the_same_door_request_ignores_the_tool_name_the_session_adds) {
  auto sent = idem_row(msg_role::tool, "cold");
  sent.tool_call_id = "c1";
  auto stored = sent;
  stored.tool_name = "get_weather";
  stored.idempotency_key = "k";
  BOOST_TEST(same_door_request(stored, sent));
  auto other_call = sent;
  other_call.tool_call_id = "c2";
  BOOST_TEST(!same_door_request(stored, other_call));
  auto other_text = sent;
  other_text.content = "warm";
  BOOST_TEST(!same_door_request(stored, other_text));
  BOOST_TEST(!same_door_request(idem_row(msg_role::user, "cold"), sent));
}

BOOST_AUTO_TEST_CASE(a_door_verdict_follows_stored_same_and_answered) {
  const auto incoming = idem_row(msg_role::user, "hello");
  auto stored_row = incoming;
  stored_row.tool_name = "ignored"; // not compared for a user row either
  auto answer = idem_row(msg_role::assistant, "hi");
  auto calling = idem_row(msg_role::assistant, "");
  calling.tool_calls.push_back(tool_call{"c1", "memory", "{}"});
  auto result = idem_row(msg_role::tool, "42");
  result.tool_call_id = "c1";
  struct row {
    std::vector<message> stored;
    idempotency_verdict want;
  };
  const std::vector<row> table{
    {{}, idempotency_verdict::fresh},
    {{idem_row(msg_role::user, "other"), answer}, idempotency_verdict::mismatch},
    {{stored_row}, idempotency_verdict::unanswered},
    {{stored_row, answer}, idempotency_verdict::replay},
    {{stored_row, calling}, idempotency_verdict::replay}, // pending client calls answer it
    {{stored_row, calling, result}, idempotency_verdict::unanswered}, // cut mid-loop
  };
  for (size_t i = 0; i < table.size(); ++i)
    BOOST_TEST(decide_door_idempotent(table[i].stored, incoming) == table[i].want, "row " << i);
}

BOOST_AUTO_TEST_CASE(refusal_texts_name_the_header_value_and_the_session_key) {
  for (auto v : {idempotency_verdict::in_flight, idempotency_verdict::mismatch,
                 idempotency_verdict::unanswered}) {
    auto text = idempotency_refusal_text(v, "chat-42", "req-7");
    BOOST_TEST(text.find("Idempotency-Key 'req-7' of key 'chat-42'") == 0u, text);
  }
  BOOST_TEST(idempotency_refusal_text(idempotency_verdict::replay, "k", "i").empty());
  BOOST_TEST(idempotency_refusal_text(idempotency_verdict::fresh, "k", "i").empty());
}

BOOST_AUTO_TEST_SUITE_END()
