// Skills on demand through the runtime (SPEC §7): a new session's system row carries
// the skills index and no skill text; ss_skill_atom loads a skill's full text into the
// live context (once) and unloads it by the row replacement commit (the original
// archived and still searchable, the marker live in its place); unknown or unloaded
// names are errc::not_found.
#define BOOST_TEST_MODULE session_skills_test
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>

#include "actors/runtime.hpp"
#include "apps/common/fake_llm/fake_llm_server.hpp"
#include "policies/skills_index.hpp"

using namespace mneme;
using namespace std::chrono_literals;
BOOST_TEST_DONT_PRINT_LOG_VALUE(mneme::errc)
BOOST_TEST_DONT_PRINT_LOG_VALUE(caf::error)

namespace {

constexpr auto call_timeout = 60s;

template <class T>
std::string why(const caf::expected<T>& r) {
  return r ? std::string{"ok"} : render_error(r.error());
}

llm::llm_pool_config pool(const std::string& base_url, llm_purpose purpose) {
  llm::llm_pool_config c;
  c.name = purpose == llm_purpose::chat ? "chat" : "summary";
  c.endpoint.url = llm::chat_completions_url(base_url);
  c.endpoint.model = purpose == llm_purpose::chat ? "fake-chat" : "fake-summary";
  c.endpoint.purpose = purpose;
  c.endpoint.idle_timeout = 5s;
  c.endpoint.total_timeout = 10s;
  c.max_concurrency = 4;
  c.max_queue = 64;
  return c;
}

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  fakellm::fake_llm_server server;
  std::string dir;
  runtime_config rc;
  std::unique_ptr<runtime> rt;
  const std::string key = "chat-7";

  fixture() {
    register_mneme_types(cfg);
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    BOOST_REQUIRE(server.start());
    char tmpl[] = "/tmp/mneme-skills-rt-XXXXXX";
    BOOST_REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    rc.database.path = dir + "/t.db";
    rc.database.synchronous_full = false;
    rc.chat = pool(server.base_url(), llm_purpose::chat);
    rc.summarizer = pool(server.base_url(), llm_purpose::summary);
    rc.model.name = "fake-chat";
    rc.gateway.idle_evict_seconds = 0;
    std::filesystem::create_directories(dir + "/skills/alpha");
    std::filesystem::create_directories(dir + "/skills/beta");
    std::ofstream{dir + "/skills/alpha/SKILL.md"}
      << "---\nname: alpha\ndescription: Writes alpha reports\n---\nALPHA FULL TEXT\n";
    std::ofstream{dir + "/skills/beta/SKILL.md"}
      << "---\nname: beta\ndescription: Checks beta files\n---\nBETA FULL TEXT\n";
    rc.gateway.skills_dir = dir + "/skills";
    auto r = runtime::start(*sys, rc);
    BOOST_REQUIRE_MESSAGE(r, why(r));
    rt = std::move(*r);
  }

  ~fixture() {
    if (rt)
      rt->stop();
    server.stop();
    std::filesystem::remove_all(dir);
  }

  template <class T, class Handle, class... Ts>
  caf::expected<T> call(const Handle& h, Ts... xs) {
    caf::scoped_actor self{*sys};
    caf::expected<T> out{caf::error{}};
    self->request(h, call_timeout, xs...)
      .receive([&](T& x) { out = std::move(x); }, [&](caf::error& e) { out = std::move(e); });
    return out;
  }

  caf::expected<turn_reply> say(const std::string& text) {
    return call<turn_reply>(rt->gateway(), gw_message_atom_v, key, std::string{"u"}, text);
  }
  void turn(const std::string& text) {
    auto r = say(text);
    BOOST_REQUIRE_MESSAGE(r, text << ": " << why(r));
  }
  std::string session_id() {
    auto s = call<session_snapshot>(rt->gateway(), gw_state_atom_v, key);
    BOOST_REQUIRE_MESSAGE(s, why(s));
    return s->record.id;
  }
  checkpoint_record checkpoint(const std::string& sid, const std::string& name) {
    auto c = call<checkpoint_record>(rt->storage(), st_checkpoint_atom_v, sid, name,
                                     int64_t{system_clock_ms()});
    BOOST_REQUIRE_MESSAGE(c, why(c));
    return *c;
  }
  std::vector<message> stored_live(const std::string& sid) {
    auto s = call<std::vector<message>>(rt->storage(), st_live_atom_v, sid);
    BOOST_REQUIRE_MESSAGE(s, why(s));
    return *s;
  }
  std::vector<message> session_live() {
    auto s = call<std::vector<message>>(rt->gateway(), gw_live_atom_v, key);
    BOOST_REQUIRE_MESSAGE(s, why(s));
    return *s;
  }
  std::vector<message> all_rows(const std::string& sid) {
    auto s = call<std::vector<message>>(rt->storage(), st_range_atom_v, sid, int64_t{1},
                                        std::numeric_limits<int64_t>::max());
    BOOST_REQUIRE_MESSAGE(s, why(s));
    return *s;
  }
  recall_result search(const std::string& q, bool include_inactive) {
    BOOST_REQUIRE(rt->recall());
    recall_request req;
    req.user_id = "u";
    req.query = q;
    req.include_inactive = include_inactive;
    auto r = call<recall_result>(rt->recall(), rc_search_atom_v, req);
    BOOST_REQUIRE_MESSAGE(r, why(r));
    return *r;
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

  session_deps deps{rt->storage(), rt->chat_pool(), rt->summary_pool(), caf::actor{}};
  auto s = spawn_session(*sys, session_params_of(rt->config()), deps, sid);
  auto loaded = call<int64_t>(s, ss_skill_atom_v, std::string{"alpha"}, true);
  BOOST_REQUIRE_MESSAGE(loaded, why(loaded));
  auto now = call<std::vector<message>>(s, ss_live_atom_v);
  BOOST_REQUIRE(now);
  BOOST_TEST(now->back().id == *loaded);
  BOOST_TEST(now->back().content.find("[SKILL LOADED: alpha]") == 0u);
  BOOST_TEST(now->back().content.find("ALPHA FULL TEXT") != std::string::npos);
  auto again = call<int64_t>(s, ss_skill_atom_v, std::string{"alpha"}, true);
  BOOST_REQUIRE(again);
  BOOST_TEST(*again == *loaded); // not loaded twice

  auto unloaded = call<int64_t>(s, ss_skill_atom_v, std::string{"alpha"}, false);
  BOOST_REQUIRE_MESSAGE(unloaded, why(unloaded));
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
