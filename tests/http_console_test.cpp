// The web console's routes and the rows route it pages with, over the in-process HTTP API
// (apps/common/api/console/, routes/session_routes.cpp; docs/console.md, docs/api.md):
// the page and its files are served from the program without a token, each with the
// console's Content-Security-Policy, while the API beside them still needs one;
// GET /v1/sessions/{key}/rows pages a session's rows in id order, whatever their state,
// and answers the originals a compaction replaced.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "apps/common/api/console/console_page.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(http_console_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

const std::string console_admin_token = "admin-console-token";

struct console_fixture : test::http_api_fixture {
  console_fixture() {
    api::http_api_options opt;
    opt.auth_token = console_admin_token;
    serve(opt); // the fixture's own client carries the admin token
  }

  // A GET without any token.
  httplib::Result get_anonymous(const std::string& path) {
    httplib::Client c{"127.0.0.1", port};
    c.set_read_timeout(30, 0);
    return c.Get(path.c_str());
  }

  std::vector<int64_t> seed(const std::string& key, int rows) {
    std::vector<int64_t> ids;
    for (int i = 0; i < rows; ++i) {
      auto a = post("/v1/sessions/" + key + "/messages",
                    json{{"role", i % 2 ? "assistant" : "user"},
                         {"content", "row " + std::to_string(i) + " of the migration notes "
                                       + std::string(300, 'x')}});
      BOOST_REQUIRE_MESSAGE(a.status == 201, a.text);
      ids.push_back(a.body["id"].get<int64_t>());
    }
    return ids;
  }

  static std::vector<int64_t> ids_of(const json& rows) {
    std::vector<int64_t> out;
    for (const auto& r : rows)
      out.push_back(r["id"].get<int64_t>());
    return out;
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(the_console_page_is_served_without_a_token_under_a_strict_policy,
                        console_fixture) {
  auto page = get_anonymous("/console/");
  BOOST_REQUIRE(page);
  BOOST_TEST(page->status == 200);
  BOOST_TEST(page->get_header_value("Content-Type") == "text/html; charset=utf-8");
  BOOST_TEST(page->get_header_value("Content-Security-Policy") == std::string{api::console_csp});
  BOOST_TEST(page->get_header_value("X-Content-Type-Options") == "nosniff");
  BOOST_TEST(page->body.find("<script src=\"console.js\"") != std::string::npos);
  BOOST_TEST(page->body.find("<script>") == std::string::npos); // no inline script

  auto script = get_anonymous("/console/console.js");
  BOOST_REQUIRE(script);
  BOOST_TEST(script->status == 200);
  BOOST_TEST(script->get_header_value("Content-Type") == "text/javascript; charset=utf-8");
  BOOST_TEST(script->body.find("sessionStorage") != std::string::npos);
  auto style = get_anonymous("/console/console.css");
  BOOST_REQUIRE(style);
  BOOST_TEST(style->get_header_value("Content-Type") == "text/css; charset=utf-8");

  // The API beside it still needs the token.
  auto api_call = get_anonymous("/v1/sessions");
  BOOST_REQUIRE(api_call);
  BOOST_TEST(api_call->status == 401);
}

BOOST_FIXTURE_TEST_CASE(an_unknown_console_file_is_404_and_the_bare_path_redirects,
                        console_fixture) {
  auto missing = get_anonymous("/console/secrets.txt");
  BOOST_REQUIRE(missing);
  BOOST_TEST(missing->status == 404);
  BOOST_TEST(missing->get_header_value("Content-Security-Policy") == std::string{api::console_csp});
  auto nested = get_anonymous("/console/../v1/sessions");
  BOOST_REQUIRE(nested);
  BOOST_TEST(nested->status != 200);

  auto bare = get_anonymous("/console");
  BOOST_REQUIRE(bare);
  BOOST_TEST(bare->status == 308);
  BOOST_TEST(bare->get_header_value("Location") == "/console/");
  auto post_page = read(client->Post("/console/", "{}", "application/json"));
  BOOST_TEST(post_page.status == 405);
}

BOOST_FIXTURE_TEST_CASE(content_types_follow_the_file_extension, console_fixture) {
  BOOST_TEST(api::console_content_type("index.html") == "text/html; charset=utf-8");
  BOOST_TEST(api::console_content_type("a.svg") == "image/svg+xml");
  BOOST_TEST(api::console_content_type("README") == "application/octet-stream");
  auto files = api::console_files();
  std::vector<std::string> names;
  for (const auto& f : files)
    names.emplace_back(f.name);
  BOOST_TEST(names == (std::vector<std::string>{"console-views.js", "console.css", "console.js",
                                                "index.html"}),
             boost::test_tools::per_element());
}

BOOST_FIXTURE_TEST_CASE(rows_are_paged_in_id_order_with_the_next_id_to_ask,
                        console_fixture) {
  auto ids = seed("notes", 7);
  auto whole = get("/v1/sessions/notes/rows?limit=1000");
  BOOST_REQUIRE_MESSAGE(whole.status == 200, whole.text);
  auto sid = get("/v1/sessions/notes?live=false").body["session"]["id"];
  BOOST_TEST(whole.body["session_id"] == sid);
  BOOST_TEST(whole.body["next_from"].is_null());
  auto everything = ids_of(whole.body["rows"]); // a system prompt row, if any, then ours
  BOOST_REQUIRE(everything.size() >= ids.size());
  BOOST_TEST(std::vector<int64_t>(everything.end() - static_cast<long>(ids.size()), everything.end())
               == ids, boost::test_tools::per_element());

  auto first = get("/v1/sessions/notes/rows?limit=3");
  BOOST_REQUIRE_MESSAGE(first.status == 200, first.text);
  BOOST_REQUIRE(first.body["rows"].size() == 3u);
  BOOST_TEST(first.body["next_from"] == everything[3]);
  std::vector<int64_t> all = ids_of(first.body["rows"]);
  auto from = first.body["next_from"];
  while (!from.is_null()) {
    auto next = get("/v1/sessions/notes/rows?limit=3&from=" + std::to_string(from.get<int64_t>()));
    BOOST_REQUIRE_MESSAGE(next.status == 200, next.text);
    BOOST_REQUIRE(next.body["rows"].size() <= 3u);
    for (auto id : ids_of(next.body["rows"]))
      all.push_back(id);
    from = next.body["next_from"];
  }
  BOOST_TEST(all == everything, boost::test_tools::per_element());

  auto range = get("/v1/sessions/notes/rows?from=" + std::to_string(ids[2])
                   + "&to=" + std::to_string(ids[4]));
  BOOST_TEST(ids_of(range.body["rows"]) == (std::vector<int64_t>{ids[2], ids[3], ids[4]}),
             boost::test_tools::per_element());
  BOOST_TEST(range.body["next_from"].is_null());
}

BOOST_FIXTURE_TEST_CASE(rows_answer_the_originals_a_compaction_replaced, console_fixture) {
  auto ids = seed("compacted", 60);
  auto report = post("/v1/sessions/compacted/compact", json{{"around_id", ids[30]}, {"radius", 2}});
  BOOST_REQUIRE_MESSAGE(report.status == 200, report.text);
  BOOST_REQUIRE(report.body["committed"] == true);
  auto c = get("/v1/sessions/compacted/compactions").body["compactions"].at(0);
  auto first = c["replaced_first_id"].get<int64_t>(), last = c["replaced_last_id"].get<int64_t>();
  auto originals = get("/v1/sessions/compacted/rows?from=" + std::to_string(first)
                       + "&to=" + std::to_string(last));
  BOOST_REQUIRE_MESSAGE(originals.status == 200, originals.text);
  BOOST_TEST(ids_of(originals.body["rows"])
               == (std::vector<int64_t>{ids[28], ids[29], ids[30], ids[31], ids[32]}),
             boost::test_tools::per_element());
  for (const auto& row : originals.body["rows"]) {
    BOOST_TEST(row["state"] == "archived");
    BOOST_TEST(row["content"].get<std::string>().rfind("row ", 0) == 0u);
  }
}

BOOST_FIXTURE_TEST_CASE(bad_rows_parameters_name_what_was_wrong, console_fixture) {
  seed("params", 2);
  auto reversed = get("/v1/sessions/params/rows?from=9&to=3");
  BOOST_TEST(reversed.status == 400);
  BOOST_TEST(reversed.body["error"]["message"] == "parameter 'to' is below 'from'");
  auto too_many = get("/v1/sessions/params/rows?limit=1001");
  BOOST_TEST(too_many.status == 400);
  BOOST_TEST(too_many.body["error"]["message"].get<std::string>().find("limit")
             != std::string::npos);
  auto unknown = get("/v1/sessions/nobody/rows");
  BOOST_TEST(unknown.status == 404);
}

BOOST_AUTO_TEST_SUITE_END()
