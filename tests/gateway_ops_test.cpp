// The gateway's daemon operations end to end on a real runtime (SQLite file, fake LLM
// over loopback): append without a model call, the live rows, T13 around a message id,
// checkpoint and rollback, errc::not_found for keys nobody opened, a restarted runtime
// continuing keys it never hosted (the key -> session mapping comes from the store),
// and the gateway's metrics (turns, turn errors, turn and search latency).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "tests/serve_runtime_fixture.hpp"

BOOST_AUTO_TEST_SUITE(gateway_ops_test)

using namespace mneme;
using mneme::testing::err_of;

namespace {

struct gateway_fixture : test::serve_runtime_fixture {
  caf::expected<int64_t> append(const std::string& key, msg_role role, std::string content) {
    message m;
    m.role = role;
    m.content = std::move(content);
    return call<int64_t>(rt->gateway(), gw_append_atom_v, key, std::string{"alice"}, m);
  }
  // Appends n alternating user/assistant rows; their ids.
  std::vector<int64_t> fill(const std::string& key, int n) {
    std::vector<int64_t> ids;
    for (int i = 0; i < n; ++i) {
      auto id = append(key, i % 2 == 0 ? msg_role::user : msg_role::assistant,
                       "row " + std::to_string(i) + " about the migration of the billing "
                       "database and its rollback plan");
      BOOST_REQUIRE_MESSAGE(id, err_of(id));
      ids.push_back(*id);
    }
    return ids;
  }
  std::vector<message> live(const std::string& key) {
    auto rows = call<std::vector<message>>(rt->gateway(), gw_live_atom_v, key);
    BOOST_REQUIRE_MESSAGE(rows, err_of(rows));
    return *rows;
  }
  static std::vector<int64_t> ids_of(const std::vector<message>& rows) {
    std::vector<int64_t> out;
    for (const auto& m : rows)
      out.push_back(m.id);
    return out;
  }
  caf::expected<turn_reply> say(const std::string& key, const std::string& text) {
    return call<turn_reply>(rt->gateway(), gw_message_atom_v, key, std::string{"alice"}, text);
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(gateway_ops, gateway_fixture)

BOOST_AUTO_TEST_CASE(an_append_opens_the_session_and_stores_the_row_without_a_model_call) {
  start();
  auto id = append("k1", msg_role::user, "remember the blue folder");
  BOOST_REQUIRE_MESSAGE(id, err_of(id));
  BOOST_TEST(*id > 0);
  auto rows = live("k1");
  // The system prompt of a new session, then the appended row.
  BOOST_REQUIRE(rows.size() == 2u);
  BOOST_TEST(rows[0].role == msg_role::system);
  BOOST_TEST(rows[1].id == *id);
  BOOST_TEST(rows[1].content == "remember the blue folder");
  BOOST_TEST(rows[1].session_id == rows[0].session_id);
  BOOST_TEST(llm.stats().chat_requests == 0);
  // The store holds the same live context, owned by the key's user.
  auto stored = call<std::vector<message>>(rt->storage(), st_live_atom_v, rows[1].session_id);
  BOOST_REQUIRE(stored);
  BOOST_TEST(ids_of(*stored) == ids_of(rows));
  auto rec = call<session_record>(rt->storage(), st_session_atom_v, rows[1].session_id);
  BOOST_REQUIRE(rec);
  BOOST_TEST(rec->user_id == "alice");
  BOOST_TEST(rec->session_key == "k1");
}

BOOST_AUTO_TEST_CASE(an_append_with_an_invalid_row_is_refused_and_stores_nothing) {
  start();
  message bad;
  bad.content = "42";
  bad.replaced_first_id = 1; // provenance is for summaries only
  auto id = call<int64_t>(rt->gateway(), gw_append_atom_v, std::string{"k1"},
                          std::string{"alice"}, bad);
  BOOST_REQUIRE(!id);
  BOOST_TEST(id.error() == errc::bad_request);
  BOOST_TEST(live("k1").size() == 1u); // the system prompt only
  auto empty_key = call<int64_t>(rt->gateway(), gw_append_atom_v, std::string{},
                                 std::string{"alice"}, bad);
  BOOST_REQUIRE(!empty_key);
  BOOST_TEST(empty_key.error() == errc::bad_request);
}

BOOST_AUTO_TEST_CASE(operations_on_a_key_nobody_opened_answer_not_found_and_create_nothing) {
  start();
  auto name = std::string{"cp"};
  auto key = std::string{"nobody"};
  auto e1 = call<std::vector<message>>(rt->gateway(), gw_live_atom_v, key);
  auto e2 = call<compaction_report>(rt->gateway(), gw_local_atom_v, key, int64_t{1}, int64_t{5});
  auto e3 = call<checkpoint_record>(rt->gateway(), gw_checkpoint_atom_v, key, name);
  auto e4 = call<std::vector<message>>(rt->gateway(), gw_rollback_atom_v, key, name);
  auto e5 = call<session_snapshot>(rt->gateway(), gw_state_atom_v, key);
  auto e6 = call<compaction_report>(rt->gateway(), gw_command_atom_v, key,
                                    trigger::t12_manual_session, std::string{});
  auto error_of = [](const auto& r) { return r ? caf::error{} : r.error(); };
  for (const caf::error& err : {error_of(e1), error_of(e2), error_of(e3), error_of(e4),
                                error_of(e5), error_of(e6)})
    BOOST_TEST(err == errc::not_found);
  session_filter all;
  auto sessions = call<std::vector<session_record>>(rt->storage(), st_list_atom_v, all);
  BOOST_REQUIRE(sessions);
  BOOST_TEST(sessions->empty());
}

BOOST_AUTO_TEST_CASE(local_compaction_archives_the_rows_within_the_radius_of_the_message) {
  start();
  fill("loc", 60);
  auto before = live("loc");
  BOOST_REQUIRE(before.size() == 61u);
  const size_t center = 30;
  const int64_t radius = 5;
  auto r = call<compaction_report>(rt->gateway(), gw_local_atom_v, std::string{"loc"},
                                   before[center].id, radius);
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(r->committed);
  BOOST_TEST(r->by == trigger::t13_manual_local);
  BOOST_TEST(r->archived_rows == 2 * radius + 1);
  auto after = live("loc");
  BOOST_TEST(after.size() == before.size() - static_cast<size_t>(2 * radius + 1) + 1);
  auto summary = std::find_if(after.begin(), after.end(),
                              [](const message& m) { return m.is_summary; });
  BOOST_REQUIRE(summary != after.end());
  BOOST_TEST(summary->replaced_first_id == before[center - radius].id);
  BOOST_TEST(summary->replaced_last_id == before[center + radius].id);
  BOOST_TEST(std::none_of(after.begin(), after.end(),
                          [&](const message& m) { return m.id == before[center].id; }));
}

BOOST_AUTO_TEST_CASE(local_compaction_refuses_an_id_outside_the_live_context_and_a_negative_radius) {
  start();
  auto ids = fill("loc", 10);
  auto missing = call<compaction_report>(rt->gateway(), gw_local_atom_v, std::string{"loc"},
                                         ids.back() + 1000, int64_t{5});
  BOOST_REQUIRE(!missing);
  BOOST_TEST(missing.error() == errc::not_found);
  auto negative = call<compaction_report>(rt->gateway(), gw_local_atom_v, std::string{"loc"},
                                          ids.front(), int64_t{-1});
  BOOST_REQUIRE(!negative);
  BOOST_TEST(negative.error() == errc::bad_request);
  BOOST_TEST(live("loc").size() == 11u);
}

BOOST_AUTO_TEST_CASE(rollback_to_a_checkpoint_restores_the_live_rows_of_that_point) {
  start();
  fill("cp", 4);
  auto at_checkpoint = live("cp");
  auto cp = call<checkpoint_record>(rt->gateway(), gw_checkpoint_atom_v, std::string{"cp"},
                                    std::string{"before"});
  BOOST_REQUIRE_MESSAGE(cp, err_of(cp));
  BOOST_TEST(cp->name == "before");
  BOOST_TEST(cp->session_id == at_checkpoint.front().session_id);
  BOOST_TEST(cp->last_message_id == at_checkpoint.back().id);
  fill("cp", 3);
  BOOST_REQUIRE(live("cp").size() == at_checkpoint.size() + 3);
  auto restored = call<std::vector<message>>(rt->gateway(), gw_rollback_atom_v,
                                             std::string{"cp"}, std::string{"before"});
  BOOST_REQUIRE_MESSAGE(restored, err_of(restored));
  BOOST_TEST(ids_of(*restored) == ids_of(at_checkpoint));
  // The session actor restarted from the store holds the same context.
  BOOST_TEST(ids_of(live("cp")) == ids_of(at_checkpoint));
  auto unknown = call<std::vector<message>>(rt->gateway(), gw_rollback_atom_v,
                                            std::string{"cp"}, std::string{"no-such"});
  BOOST_REQUIRE(!unknown);
  BOOST_TEST(unknown.error() == errc::not_found);
}

BOOST_AUTO_TEST_CASE(a_restarted_runtime_continues_a_key_it_never_hosted) {
  start();
  auto first = append("old", msg_role::user, "the code word is heliotrope");
  BOOST_REQUIRE(first);
  auto before = live("old");
  restart();
  // Reads and turns find the stored session by its key, under the user who opened it
  // (another user's turn is refused: tests/tenant_keys_test.cpp).
  BOOST_TEST(ids_of(live("old")) == ids_of(before));
  auto snap = call<session_snapshot>(rt->gateway(), gw_state_atom_v, std::string{"old"});
  BOOST_REQUIRE_MESSAGE(snap, err_of(snap));
  BOOST_TEST(snap->record.id == before.front().session_id);
  auto r = call<turn_reply>(rt->gateway(), gw_message_atom_v, std::string{"old"},
                            std::string{"alice"}, std::string{"what is the code word?"});
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(r->session_id == before.front().session_id);
  BOOST_TEST(!r->answer.empty());
  BOOST_TEST(live("old").size() == before.size() + 2);
  auto rec = call<session_record>(rt->storage(), st_session_atom_v, r->session_id);
  BOOST_TEST(rec->user_id == "alice");
}

BOOST_AUTO_TEST_CASE(the_gateway_counts_turns_errors_and_latencies) {
  start();
  auto& m = *rt->metrics();
  BOOST_REQUIRE(say("met", "hello"));
  BOOST_REQUIRE(say("met", "and again"));
  BOOST_TEST(m.turns.load() == 2u);
  BOOST_TEST(m.turn_errors.load() == 0u);
  BOOST_TEST(m.turn_latency.count.load() == 2u);
  fakellm::scenario s;
  fakellm::fault_rule broken;
  broken.kind = fakellm::fault_kind::malformed_json;
  broken.purpose = fakellm::purpose_filter::chat;
  s.plan.rules.push_back(broken);
  BOOST_REQUIRE(!llm.set_scenario(s));
  BOOST_REQUIRE(!say("met", "this one fails"));
  BOOST_TEST(m.turns.load() == 3u);
  BOOST_TEST(m.turn_errors.load() == 1u);
  BOOST_TEST(m.turn_latency.count.load() == 3u);
  llm.clear_faults();
  BOOST_TEST(m.search_latency.count.load() == 0u);
  auto found = say("met", "/search again");
  BOOST_REQUIRE_MESSAGE(found, err_of(found));
  BOOST_TEST(found->notice.find("Found 1 session") == 0u);
  BOOST_TEST(m.search_latency.count.load() == 1u);
  BOOST_TEST(m.turns.load() == 4u); // a channel command is an inbound message too
  BOOST_TEST(m.exhaustion_resets.load() == 0u);
}

BOOST_AUTO_TEST_CASE(an_exhaustion_reset_is_counted_once) {
  start();
  fill("spent", 60);
  BOOST_REQUIRE(say("spent", "hello"));
  fakellm::scenario s;
  fakellm::fault_rule overflow;
  overflow.kind = fakellm::fault_kind::overflow_400;
  overflow.purpose = fakellm::purpose_filter::chat;
  s.plan.rules.push_back(overflow);
  BOOST_REQUIRE(!llm.set_scenario(s));
  auto r = exhausted_turn("spent", "one more", "alice"); // the re-run is refused too
  BOOST_TEST(r.notice.find("send it again") != std::string::npos);
  BOOST_TEST(rt->metrics()->exhaustion_resets.load() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // gateway_ops_test
