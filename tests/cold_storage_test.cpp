// Tests of the episodic tier (store/sqlite/cold_storage.hpp, store/jsonl_import.hpp, the
// storage actor's sweep): an ended session lands in the cold folder as its JSONL,
// atomically and retried after a failure; an import re-creates a session whose
// export is byte for byte the input (ids renumbered as documented, or identical in
// a fresh database); bad JSONL is refused with its line number and writes nothing.
// The import cases run on both backends (tests/store_backends.hpp); the cold folder
// and its sweep are SQLite's.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "caf/all.hpp"

#include "actors/storage/storage_actor.hpp"
#include "policies/key_namespace.hpp"
#include "store/sqlite/cold_storage.hpp"
#include "store/sqlite/sqlite_jsonl_import.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(cold_storage_test)

using namespace mneme;
using mneme::testing::err_of;
using namespace std::chrono_literals;
namespace data = boost::unit_test::data;
namespace fs = std::filesystem;

namespace {

std::unique_ptr<sqlite_store> open_store(const std::string& path) {
  store_params p;
  p.path = path;
  auto s = sqlite_store::open(p);
  BOOST_REQUIRE_MESSAGE(s, err_of(s));
  return std::move(*s);
}

// A fresh, empty store of backend `b` (a file in `dir` on SQLite).
testing::test_store open_backend(testing::store_backend b,
                                const testing::temp_dir& dir) {
  store_params p;
  testing::use_backend(b, p, dir);
  auto s = testing::open_test_store(p);
  BOOST_REQUIRE_MESSAGE(s, err_of(s));
  return std::move(*s);
}

message row(const std::string& sid, msg_role role, std::string text, time_ms ts) {
  message m;
  m.session_id = sid;
  m.role = role;
  m.content = std::move(text);
  m.timestamp_ms = ts;
  m.token_estimate = 7;
  return m;
}

// A session with every kind of row: system, user (CJK), an assistant tool call
// and its tool result, a compaction summary with archived rows, rows rolled back
// to a checkpoint, and an ended state.
std::string build_rich_session(message_store& store, const std::string& id) {
  session_record rec;
  rec.id = id;
  rec.user_id = "alice";
  rec.session_key = "chat-1";
  BOOST_REQUIRE(store.create_session(rec, 1000));
  std::vector<int64_t> ids;
  auto add = [&](message m) {
    auto r = store.append(m);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    ids.push_back(*r);
  };
  add(row(id, msg_role::system, "You are helpful.", 1001));
  add(row(id, msg_role::user, "我爱数据库 and \"quotes\"\nnew line", 1002));
  auto call = row(id, msg_role::assistant, "", 1003);
  call.tool_calls.push_back(tool_call{"call_1", "search", R"({"q":"x"})"});
  add(call);
  auto result = row(id, msg_role::tool, "result text", 1004);
  result.tool_call_id = "call_1";
  result.tool_name = "search";
  add(result);
  add(row(id, msg_role::assistant, "answer one", 1005));
  add(row(id, msg_role::user, "second question", 1006));
  compaction_commit c;
  c.session_id = id;
  c.archive_ids = {ids[1], ids[2], ids[3], ids[4]};
  c.summary = row(id, msg_role::user, "[summary] earlier turns", 1007);
  BOOST_REQUIRE(store.commit_compaction(c));
  BOOST_REQUIRE(store.create_checkpoint(id, "before-detour", 1008));
  add(row(id, msg_role::assistant, "a detour", 1009));
  add(row(id, msg_role::user, "undo that", 1010));
  BOOST_REQUIRE(store.rollback_to_checkpoint(id, "before-detour"));
  add(row(id, msg_role::assistant, "back on track", 1011));
  BOOST_REQUIRE(store.end_session(id, 2000, "test"));
  std::ostringstream out;
  BOOST_REQUIRE(store.export_jsonl(id, out));
  return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

// The export of `imported` with its ids mapped back through the documented
// renumbering (i-th row <-> i-th row), one line each.
std::vector<std::string> map_ids_back(const std::string& original, const std::string& imported) {
  auto a = lines_of(original);
  auto b = lines_of(imported);
  BOOST_REQUIRE(a.size() == b.size());
  std::map<int64_t, int64_t> back{{0, 0}};
  for (size_t i = 0; i < a.size(); ++i)
    back[nlohmann::json::parse(b[i])["id"].get<int64_t>()]
      = nlohmann::json::parse(a[i])["id"].get<int64_t>();
  auto sid = nlohmann::json::parse(a[0])["session_id"];
  std::vector<std::string> out;
  for (const auto& line : b) {
    auto j = nlohmann::json::parse(line);
    for (auto f : {"id", "replaced_first_id", "replaced_last_id", "archived_by"})
      j[f] = back.at(j[f].get<int64_t>());
    j["session_id"] = sid;
    out.push_back(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return out;
}

std::vector<std::string> live_texts(message_store& store, const std::string& sid) {
  auto live = store.live_context(sid);
  BOOST_REQUIRE(live);
  std::vector<std::string> out;
  for (auto& m : *live)
    out.push_back(std::string{to_string(m.role)} + ":" + m.content);
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

} // namespace

BOOST_DATA_TEST_CASE(an_imported_session_exports_byte_for_byte_modulo_the_renumbered_ids,
                     data::make(testing::all_store_backends()), backend) {
  testing::temp_dir dir{"mneme-cold"};
  auto store = open_backend(backend, dir);
  auto original = build_rich_session(*store, "orig");
  BOOST_TEST(original.find("rolled_back") != std::string::npos);
  BOOST_TEST(original.find("archived") != std::string::npos);
  session_record into;
  into.id = "copy";
  into.user_id = "alice";
  auto rec = store->import_jsonl(original, into, 5000);
  BOOST_REQUIRE_MESSAGE(rec, err_of(rec));
  BOOST_TEST(rec->id == "copy");
  BOOST_TEST(rec->session_key == stored_key("alice", "copy")); // in its user's namespace
  BOOST_TEST(rec->started_at_ms == 1001); // the first row's timestamp
  std::ostringstream again;
  BOOST_REQUIRE(store->export_jsonl("copy", again));
  BOOST_TEST(again.str() != original); // ids differ: renumbered above the originals
  BOOST_TEST(map_ids_back(original, again.str()) == lines_of(original));
  BOOST_TEST(live_texts(*store, "copy") == live_texts(*store, "orig"));
  auto stats = store->stats("copy");
  auto orig_stats = store->stats("orig");
  BOOST_REQUIRE(stats);
  BOOST_TEST(stats->archived_rows == orig_stats->archived_rows);
  BOOST_TEST(stats->rolled_back_rows == orig_stats->rolled_back_rows);
  BOOST_TEST(stats->live_rows == orig_stats->live_rows);
}

BOOST_AUTO_TEST_CASE(a_cold_file_imported_into_a_fresh_database_under_its_id_is_identical) {
  testing::temp_dir dir{"mneme-cold"};
  std::string cold_text;
  {
    auto store = open_store(dir.file("a.db"));
    build_rich_session(*store, "orig");
    auto folder = cold_storage_folder(store->params());
    BOOST_TEST(folder == dir.file("cold"));
    auto swept = sweep_cold_storage(store->connection(), folder, 10, 3000);
    BOOST_TEST(swept.written == 1);
    BOOST_TEST(swept.failed == 0);
    cold_text = read_file(folder + "/orig.jsonl");
    std::ostringstream exported;
    BOOST_REQUIRE(store->export_jsonl("orig", exported));
    BOOST_TEST(cold_text == exported.str());
  }
  auto fresh = open_store(dir.file("b.db"));
  session_record into; // id empty: the file's own id
  into.user_id = "alice";
  into.session_key = "chat-1";
  into.ended_at_ms = 2000;
  into.end_reason = "test";
  auto rec = import_session_jsonl(fresh->connection(), cold_text, into, 5000, fresh->params());
  BOOST_REQUIRE_MESSAGE(rec, err_of(rec));
  BOOST_TEST(rec->id == "orig");
  BOOST_TEST(rec->ended_at_ms == 2000);
  std::ostringstream again;
  BOOST_REQUIRE(fresh->export_jsonl("orig", again));
  BOOST_TEST(again.str() == cold_text);
}

// A target the import cannot create, found inside its transaction: refused, and
// nothing written (no session, no row).
struct refused_target {
  const char* name;
  std::string id;      // "" = the file's own id ("orig", which exists)
  std::string parent;
  errc code;
  const char* says;
};

std::ostream& operator<<(std::ostream& os, const refused_target& r) { return os << r.name; }

BOOST_DATA_TEST_CASE(an_import_whose_target_cannot_be_created_writes_nothing,
                     data::make(std::vector<refused_target>{
                       {"id exists", "", "", errc::bad_request, "already exists"},
                       {"unknown parent", "copy", "no-such-parent", errc::not_found,
                        "no-such-parent"},
                     }) * data::make(testing::all_store_backends()),
                     refused, backend) {
  testing::temp_dir dir{"mneme-cold"};
  auto store = open_backend(backend, dir);
  auto text = build_rich_session(*store, "orig");
  auto rows_before = testing::store_scalar(store, "SELECT count(*) FROM messages");
  session_record into;
  into.id = refused.id;
  into.user_id = "alice";
  into.parent_id = refused.parent;
  auto rec = store->import_jsonl(text, into, 5000);
  BOOST_REQUIRE(!rec);
  BOOST_TEST(rec.error() == refused.code);
  BOOST_TEST(render_error(rec.error()).find(refused.says) != std::string::npos,
             render_error(rec.error()));
  BOOST_TEST(testing::store_scalar(store, "SELECT count(*) FROM messages") == rows_before);
  BOOST_TEST(testing::store_scalar(store, "SELECT count(*) FROM sessions") == 1);
}

struct bad_jsonl {
  std::string name;
  std::string text;
  int line;
  std::string says;
};

std::ostream& operator<<(std::ostream& os, const bad_jsonl& b) { return os << b.name; }

namespace {

std::string good_line(int64_t id, const std::string& extra_json = "") {
  nlohmann::json j = nlohmann::json::parse(
    R"({"id":1,"session_id":"s","role":"user","content":"hi","tool_call_id":"",)"
    R"("tool_calls":[],"tool_name":"","timestamp_ms":5,"token_estimate":1,"active":true,)"
    R"("compacted":false,"is_summary":false,"replaced_first_id":0,"replaced_last_id":0,)"
    R"("archived_by":0,"state":"live"})");
  j["id"] = id;
  if (!extra_json.empty())
    j.merge_patch(nlohmann::json::parse(extra_json));
  return j.dump();
}

} // namespace

BOOST_DATA_TEST_CASE(an_invalid_line_is_refused_with_its_line_number_and_nothing_is_written,
                     data::make(std::vector<bad_jsonl>{
                       {"not json", good_line(1) + "\n{oops\n", 2, "not valid JSON"},
                       {"not an object", "[1,2]\n", 1, "not a JSON object"},
                       {"unknown field", good_line(1, R"({"extra":1})") + "\n", 1,
                        "unknown field 'extra'"},
                       {"missing field", good_line(1, R"({"content":null})") + "\n", 1,
                        "'content'"},
                       {"wrong type", good_line(1, R"({"active":"yes"})") + "\n", 1,
                        "'active'"},
                       {"unknown role", good_line(1, R"({"role":"robot"})") + "\n", 1,
                        "unknown role"},
                       {"state contradicts flags",
                        good_line(1, R"({"active":false,"compacted":true})") + "\n", 1,
                        "contradicts"},
                       {"ids descend", good_line(2) + "\n" + good_line(1) + "\n", 2,
                        "ascend"},
                       {"two sessions",
                        good_line(1) + "\n" + good_line(2, R"({"session_id":"t"})") + "\n", 2,
                        "differs"},
                       {"empty line", good_line(1) + "\n\n" + good_line(2) + "\n", 2,
                        "empty line"},
                       {"archived_by unknown",
                        good_line(1, R"({"archived_by":9})") + "\n", 1, "archived_by"},
                       {"bad tool call",
                        good_line(1, R"({"tool_calls":[{"id":"a"}]})") + "\n", 1,
                        "tool call"},
                       {"provenance unknown",
                        good_line(1) + "\n"
                          + good_line(3, R"({"is_summary":true,"replaced_first_id":1,)"
                                         R"("replaced_last_id":2})")
                          + "\n",
                        2, "provenance"},
                     }) * data::make(testing::all_store_backends()),
                     bad, backend) {
  testing::temp_dir dir{"mneme-cold"};
  auto store = open_backend(backend, dir);
  session_record into;
  into.user_id = "alice";
  auto rec = store->import_jsonl(bad.text, into, 5000);
  BOOST_REQUIRE(!rec);
  BOOST_TEST(rec.error() == errc::bad_request);
  auto text = render_error(rec.error());
  BOOST_TEST(text.find("line " + std::to_string(bad.line) + ":") != std::string::npos, text);
  BOOST_TEST(text.find(bad.says) != std::string::npos, text);
  BOOST_TEST(!store->session("s"));
  BOOST_TEST(testing::store_scalar(store, "SELECT count(*) FROM messages") == 0);
}

BOOST_DATA_TEST_CASE(a_well_formed_minimal_file_without_final_newline_imports,
                     data::make(testing::all_store_backends()), backend) {
  testing::temp_dir dir{"mneme-cold"};
  auto store = open_backend(backend, dir);
  session_record into;
  into.user_id = "alice";
  auto rec = store->import_jsonl(good_line(1) + "\n" + good_line(2), into, 5000);
  BOOST_REQUIRE_MESSAGE(rec, err_of(rec));
  BOOST_TEST(live_texts(*store, "s").size() == 2u);
}

BOOST_DATA_TEST_CASE(the_cold_folder_is_resolved_beside_the_database_file,
                     data::make({"cold", "/abs/cold", "cold", "/abs/cold", "../c"})
                       ^ data::make({"/data/m.db", "/data/m.db", ":memory:", ":memory:",
                                     "/data/db/m.db"})
                       ^ data::make({"/data/cold", "/abs/cold", "", "/abs/cold", "/data/c"}),
                     dir, db, expected) {
  store_params p;
  p.cold_storage_dir = dir;
  p.path = db;
  BOOST_TEST(cold_storage_folder(p) == expected);
}

BOOST_AUTO_TEST_CASE(an_open_session_gets_no_cold_copy) {
  testing::temp_dir dir{"mneme-cold"};
  auto store = open_store(dir.file("a.db"));
  session_record rec;
  rec.id = "open";
  rec.user_id = "u";
  BOOST_REQUIRE(store->create_session(rec, 1000));
  auto err = write_cold_copy(store->connection(), dir.file("cold"), "open", 2000);
  BOOST_TEST(err == errc::bad_request);
  BOOST_TEST(!fs::exists(dir.file("cold/open.jsonl")));
  auto pending = sessions_awaiting_cold_copy(store->connection(), 10);
  BOOST_REQUIRE(pending);
  BOOST_TEST(pending->empty());
}

BOOST_AUTO_TEST_CASE(a_failed_cold_write_keeps_the_session_pending_and_the_next_sweep_writes_it) {
  testing::temp_dir dir{"mneme-cold"};
  auto store = open_store(dir.file("a.db"));
  build_rich_session(*store, "orig");
  auto folder = dir.file("cold");
  { std::ofstream blocker{folder}; } // a file where the folder should be
  auto failed = sweep_cold_storage(store->connection(), folder, 10, 3000);
  BOOST_TEST(failed.written == 0);
  BOOST_TEST(failed.failed == 1);
  BOOST_TEST(failed.first_error == errc::storage_failed);
  BOOST_TEST(render_error(failed.first_error).find(folder) != std::string::npos);
  BOOST_TEST(*sessions_awaiting_cold_copy(store->connection(), 10)
             == std::vector<std::string>{"orig"});
  BOOST_TEST(store->stats("orig")->live_rows > 0); // the rows are untouched
  fs::remove(folder);
  auto retried = sweep_cold_storage(store->connection(), folder, 10, 4000);
  BOOST_TEST(retried.written == 1);
  BOOST_TEST(fs::exists(folder + "/orig.jsonl"));
  BOOST_TEST(!fs::exists(folder + "/.orig.jsonl.tmp"));
  BOOST_TEST(sessions_awaiting_cold_copy(store->connection(), 10)->empty());
}

BOOST_AUTO_TEST_CASE(a_sweep_writes_at_most_its_limit) {
  BOOST_TEST(cold_sweep_max_sessions == 64);
  testing::temp_dir dir{"mneme-cold"};
  auto store = open_store(dir.file("a.db"));
  for (auto id : {"s1", "s2", "s3"}) {
    session_record rec;
    rec.id = id;
    rec.user_id = "u";
    BOOST_REQUIRE(store->create_session(rec, 1000));
    BOOST_REQUIRE(store->end_session(id, 2000, "done"));
  }
  BOOST_TEST(sweep_cold_storage(store->connection(), dir.file("c"), 2, 3000).written == 2);
  BOOST_TEST(sweep_cold_storage(store->connection(), dir.file("c"), 2, 3000).written == 1);
}

// --- through the storage actor

namespace {

caf::actor_system_config& make_config(caf::actor_system_config& cfg) {
  register_mneme_types(cfg);
  return cfg;
}

struct actor_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{make_config(cfg)};
  caf::scoped_actor self{sys};
  testing::temp_dir dir{"mneme-cold"};
  storage_actor storage;

  actor_fixture() {
    store_params p;
    p.path = dir.file("t.db");
    auto s = spawn_storage(sys, p, nullptr);
    BOOST_REQUIRE(s);
    storage = *s;
  }
  ~actor_fixture() { self->send_exit(storage, caf::exit_reason::user_shutdown); }

  template <class T, class... Ts>
  caf::expected<T> call(Ts&&... xs) {
    caf::expected<T> out{caf::error{}};
    self->request(storage, 10s, std::forward<Ts>(xs)...)
      .receive([&](T& x) { out = std::move(x); }, [&](caf::error& err) { out = err; });
    return out;
  }

  std::string new_session(const std::string& text) {
    session_record rec;
    rec.user_id = "u";
    rec.session_key = "k";
    auto s = call<session_record>(st_new_session_atom_v, rec, int64_t{1000});
    BOOST_REQUIRE(s);
    message m;
    m.session_id = s->id;
    m.content = text;
    BOOST_REQUIRE(call<int64_t>(st_append_atom_v, m));
    return s->id;
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(an_ended_session_appears_in_the_cold_folder, actor_fixture) {
  auto sid = new_session("hello cold world");
  BOOST_REQUIRE(call<session_record>(st_end_atom_v, sid, int64_t{2000}, std::string{"bye"}));
  auto file = dir.path() + "/cold/" + sid + ".jsonl";
  BOOST_REQUIRE(fs::exists(file));
  auto exported = call<std::string>(st_export_atom_v, sid);
  BOOST_REQUIRE(exported);
  BOOST_TEST(read_file(file) == *exported);
  BOOST_TEST(exported->find("hello cold world") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(a_reset_sends_the_ended_session_to_the_cold_folder, actor_fixture) {
  auto sid = new_session("before the reset");
  auto child = call<session_record>(st_reset_atom_v, sid, int32_t{1}, int64_t{2000},
                                    std::string{"exhausted"});
  BOOST_REQUIRE(child);
  BOOST_TEST(fs::exists(dir.path() + "/cold/" + sid + ".jsonl"));
  BOOST_TEST(!fs::exists(dir.path() + "/cold/" + child->id + ".jsonl")); // still open
}

BOOST_FIXTURE_TEST_CASE(an_import_through_the_actor_is_searchable_and_refuses_a_clash,
                        actor_fixture) {
  auto sid = new_session("needle in the cold haystack");
  BOOST_REQUIRE(call<session_record>(st_end_atom_v, sid, int64_t{2000}, std::string{"bye"}));
  auto text = read_file(dir.path() + "/cold/" + sid + ".jsonl");
  session_record into;
  into.id = "restored";
  into.user_id = "u";
  auto rec = call<session_record>(st_import_atom_v, text, into, int64_t{3000});
  BOOST_REQUIRE_MESSAGE(rec, err_of(rec));
  BOOST_TEST(rec->id == "restored");
  auto live = call<std::vector<message>>(st_live_atom_v, std::string{"restored"});
  BOOST_REQUIRE(live);
  BOOST_REQUIRE(live->size() == 1u);
  BOOST_TEST(live->front().content == "needle in the cold haystack");
  auto clash = call<session_record>(st_import_atom_v, text, into, int64_t{3000});
  BOOST_REQUIRE(!clash);
  BOOST_TEST(clash.error() == errc::bad_request);
}

BOOST_AUTO_TEST_SUITE_END() // cold_storage_test
