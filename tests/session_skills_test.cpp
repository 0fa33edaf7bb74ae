// Skills on demand through the runtime (SPEC §7): a new session's system row carries
// the skills index and no skill text; ss_skill_atom loads a skill's full text into the
// live context (once) and unloads it by the row replacement commit (the original
// archived and still searchable, the marker live in its place); unknown or unloaded
// names are errc::not_found.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>

#include "actors/runtime.hpp"
#include "policies/skills_index.hpp"
#include "tests/serve_runtime_fixture.hpp"

BOOST_AUTO_TEST_SUITE(session_skills_test)

using namespace mneme;
using namespace mneme::test;
using mneme::testing::err_of;

namespace {

struct fixture : keyed_session_fixture {
  fixture() {
    std::filesystem::create_directories(dir.file("skills/alpha"));
    std::filesystem::create_directories(dir.file("skills/beta"));
    std::ofstream{dir.file("skills/alpha/SKILL.md")}
      << "---\nname: alpha\ndescription: Writes alpha reports\n---\nALPHA FULL TEXT\n";
    std::ofstream{dir.file("skills/beta/SKILL.md")}
      << "---\nname: beta\ndescription: Checks beta files\n---\nBETA FULL TEXT\n";
    rc.gateway.skills_dir = dir.file("skills");
    start();
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(a_skill_is_loaded_on_demand_and_leaves_the_live_context_when_unloaded,
                        fixture) {
  turn("hello");
  auto sid = session_id();
  auto live = session_live();
  BOOST_REQUIRE(!live.empty());
  BOOST_TEST(live.front().content.find("- alpha: Writes alpha reports") != std::string::npos);
  BOOST_TEST(live.front().content.find("- beta: Checks beta files") != std::string::npos);
  BOOST_TEST(live.front().content.find("FULL TEXT") == std::string::npos);

  session_deps deps{rt->storage(), rt->chat_pool(), rt->summary_pool(),
                    session_supervisor_actor{}};
  auto s = spawn_session(*sys, session_params_of(rt->config()), deps, sid);
  auto loaded = call<int64_t>(s, ss_skill_atom_v, std::string{"alpha"}, true);
  BOOST_REQUIRE_MESSAGE(loaded, err_of(loaded));
  auto now = call<std::vector<message>>(s, ss_live_atom_v);
  BOOST_REQUIRE(now);
  BOOST_TEST(now->back().id == *loaded);
  BOOST_TEST(now->back().content.find("[SKILL LOADED: alpha]") == 0u);
  BOOST_TEST(now->back().content.find("ALPHA FULL TEXT") != std::string::npos);
  auto again = call<int64_t>(s, ss_skill_atom_v, std::string{"alpha"}, true);
  BOOST_REQUIRE(again);
  BOOST_TEST(*again == *loaded); // not loaded twice

  auto unloaded = call<int64_t>(s, ss_skill_atom_v, std::string{"alpha"}, false);
  BOOST_REQUIRE_MESSAGE(unloaded, err_of(unloaded));
  BOOST_TEST(*unloaded != *loaded);
  auto after = call<std::vector<message>>(s, ss_live_atom_v);
  BOOST_REQUIRE(after);
  BOOST_TEST(after->size() == now->size());
  BOOST_TEST(after->back().id == *unloaded);
  BOOST_TEST(after->back().content == unloaded_skill_marker("alpha"));
  BOOST_TEST(stored_live(sid).back().content == unloaded_skill_marker("alpha"));
  bool original_archived = false;
  for (auto& m : all_rows(sid))
    if (m.id == *loaded)
      original_archived = m.state() == row_state::archived;
  BOOST_TEST(original_archived);
  BOOST_TEST(!search("ALPHA", false).hits.empty()); // still findable

  auto twice = call<int64_t>(s, ss_skill_atom_v, std::string{"alpha"}, false);
  BOOST_REQUIRE(!twice);
  BOOST_TEST(twice.error() == errc::not_found);
  auto unknown = call<int64_t>(s, ss_skill_atom_v, std::string{"gamma"}, true);
  BOOST_REQUIRE(!unknown);
  BOOST_TEST(unknown.error() == errc::not_found);
  BOOST_TEST(render_error(unknown.error()).find("gamma") != std::string::npos);
  caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_SUITE_END() // session_skills_test
