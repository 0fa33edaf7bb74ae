// Tests of what a summary kept (policies/identifier_retention.hpp): which identifiers
// each rule extracts from English, code and CJK text and which look-alikes it leaves,
// each identifier counted once, and how many of them a summary keeps (numbers under
// either spelling, ASCII case ignored).
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "policies/identifier_retention.hpp"

BOOST_AUTO_TEST_SUITE(identifier_retention_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

struct extract_case {
  const char* text;
  identifier_kind kind;
  const char* want; // an identifier `text` must yield with `kind`
};

std::ostream& operator<<(std::ostream& os, const extract_case& c) {
  return os << '"' << c.text << "\" -> " << c.kind << " " << c.want;
}

bool has(const std::vector<identifier>& ids, identifier_kind kind, const std::string& text) {
  return std::any_of(ids.begin(), ids.end(), [&](const identifier& i) {
    return i.kind == kind && i.text == text;
  });
}

bool has_text(const std::vector<identifier>& ids, const std::string& text) {
  return std::any_of(ids.begin(), ids.end(),
                     [&](const identifier& i) { return i.text == text; });
}

const extract_case found[] = {
  // code
  {"run `make test` before pushing", identifier_kind::code, "make test"},
  {"the call ``a`b`` is odd", identifier_kind::code, "a`b"},
  {"```sh\n$ cmake --build build -j2\n```", identifier_kind::code, "cmake --build build -j2"},
  // quoted
  {"the module is called \"session reaper\" here", identifier_kind::quoted, "session reaper"},
  {"he named it \u201Cblue falcon\u201D", identifier_kind::quoted, "blue falcon"},
  {"\u6211\u4EEC\u53EB\u5B83\u300C\u7EA2\u6708\u300D\u5427", identifier_kind::quoted,
   "\u7EA2\u6708"},
  {"\u8BFB\u4E86\u300A\u4E09\u4F53\u300B", identifier_kind::quoted, "\u4E09\u4F53"},
  // url
  {"see https://example.com/a?b=1.", identifier_kind::url, "https://example.com/a?b=1"},
  {"(git+ssh://host/repo)", identifier_kind::url, "git+ssh://host/repo"},
  // path
  {"edit src/main.cpp, then build", identifier_kind::path, "src/main.cpp"},
  {"logs go to /var/log/mneme", identifier_kind::path, "/var/log/mneme"},
  {"open ./run.sh now", identifier_kind::path, "./run.sh"},
  {"in ~/work/notes", identifier_kind::path, "~/work/notes"},
  {"at C:\\Users\\me", identifier_kind::path, "C:\\Users\\me"},
  {"a/b/c is nested", identifier_kind::path, "a/b/c"},
  {"set it in mneme.yaml.", identifier_kind::path, "mneme.yaml"},
  {"failed at store/pg/pg_store.cpp:42", identifier_kind::path, "store/pg/pg_store.cpp:42"},
  {"\u4FEE\u6539config.yaml\u6587\u4EF6", identifier_kind::path, "config.yaml"},
  // number
  {"took 120ms", identifier_kind::number, "120 ms"},
  {"took 120 ms in all", identifier_kind::number, "120 ms"},
  {"a 3.5 GB file", identifier_kind::number, "3.5 GB"},
  {"CPU at 85%", identifier_kind::number, "85%"},
  {"about 1,200 tokens", identifier_kind::number, "1,200 tokens"},
  // id
  {"error E0425 again", identifier_kind::id, "E0425"},
  {"fixed in #123", identifier_kind::id, "#123"},
  {"request req_7f3a9 failed", identifier_kind::id, "req_7f3a9"},
  {"set max_tokens lower", identifier_kind::id, "max_tokens"},
  {"got ERR_CONN_RESET", identifier_kind::id, "ERR_CONN_RESET"},
  {"call getUserById()", identifier_kind::id, "getUserById"},
  {"release v1.2.3", identifier_kind::id, "v1.2.3"},
  {"commit 9c2431d merged", identifier_kind::id, "9c2431d"},
  // cjk_name
  {"\u30C7\u30FC\u30BF\u30D9\u30FC\u30B9\u3092\u4F7F\u3046", identifier_kind::cjk_name,
   "\u30C7\u30FC\u30BF\u30D9\u30FC\u30B9"},
  {"\u6211\u5728\u5317\u4EAC\u5E02\u5DE5\u4F5C", identifier_kind::cjk_name,
   "\u5317\u4EAC\u5E02"},
  {"\u4ED6\u53BB\u4E86\u6E05\u534E\u5927\u5B66", identifier_kind::cjk_name,
   "\u6E05\u534E\u5927\u5B66"},
  {"\u963F\u91CC\u5DF4\u5DF4\u96C6\u56E2\u7684\u4EA7\u54C1", identifier_kind::cjk_name,
   "\u963F\u91CC\u5DF4\u5DF4\u96C6\u56E2"},
};

BOOST_DATA_TEST_CASE(each_rule_extracts_its_identifier, data::make(found), c) {
  auto ids = extract_identifiers(c.text);
  BOOST_TEST(has(ids, c.kind, c.want));
}

struct absent_case {
  const char* text;
  const char* not_wanted; // no identifier of `text` has this text
};

std::ostream& operator<<(std::ostream& os, const absent_case& c) {
  return os << '"' << c.text << "\" without " << c.not_wanted;
}

const absent_case not_found[] = {
  {"read and/or write", "and/or"},
  {"half is 1/2", "1/2"},
  {"on 2024/01/05", "2024/01/05"},
  {"e.g. this", "e.g"},
  {"the 21st run", "21st"},
  {"it was 10x faster", "10x"},
  {"{\"path\": \"x\"}", "path"},
  {"don't 'quote' me", "quote"},
  {"just 42 apples", "42"},
  {"plain English words only", "English"},
  {"\u8FD9\u4E2A\u57CE\u5E02\u5F88\u5927", "\u57CE\u5E02"},
  {"\u8FD9\u4E2A\u57CE\u5E02\u5F88\u5927", "\u8FD9\u4E2A\u57CE\u5E02"},
  {"\u30FC\u30FC\u30FC", "\u30FC\u30FC\u30FC"},
};

BOOST_DATA_TEST_CASE(look_alikes_are_not_identifiers, data::make(not_found), c) {
  BOOST_TEST(!has_text(extract_identifiers(c.text), c.not_wanted));
}

} // namespace

BOOST_AUTO_TEST_CASE(an_identifier_seen_twice_counts_once_in_order_of_first_appearance) {
  std::vector<std::string_view> rows{"edit src/a.cpp then src/b.cpp",
                                     "src/a.cpp again, and `src/b.cpp`"};
  auto ids = extract_identifiers(rows);
  BOOST_REQUIRE_EQUAL(ids.size(), 2u);
  BOOST_TEST(ids[0].text == "src/a.cpp");
  BOOST_TEST(ids[1].text == "src/b.cpp");
  BOOST_TEST(identifiers_in(rows) == 2);
}

BOOST_AUTO_TEST_CASE(a_summary_keeps_what_it_contains_and_misses_the_rest) {
  std::vector<std::string_view> rows{
    "I ran `make test` in src/api/routes and it took 1500 ms.",
    "The error was E0425 at https://ci.example.com/run/7.",
  };
  std::string summary = "Tests (make test) failed with e0425 after 1500ms; see src/api/routes.";
  auto r = retention_of(extract_identifiers(rows), summary);
  // make test, src/api/routes, 1500 ms, E0425, the URL
  BOOST_TEST(r.identifiers_in == 5);
  BOOST_TEST(r.identifiers_kept == 4);
  BOOST_REQUIRE_EQUAL(r.missing.size(), 1u);
  BOOST_TEST(r.missing[0].kind == identifier_kind::url);
  BOOST_TEST(identifiers_kept(rows, summary) == 4);
  BOOST_TEST(r.ratio() == 0.8);
}

BOOST_AUTO_TEST_CASE(a_number_counts_under_its_other_spelling) {
  auto spaced = identifier{identifier_kind::number, "120 ms"};
  auto glued = identifier{identifier_kind::number, "85%"};
  BOOST_TEST(summary_keeps("took 120ms", spaced));
  BOOST_TEST(summary_keeps("took 120 ms", spaced));
  BOOST_TEST(!summary_keeps("took 12 ms", spaced));
  BOOST_TEST(summary_keeps("at 85 % load", glued));
  // Only a number has two spellings.
  BOOST_TEST(!summary_keeps("maxtokens", identifier{identifier_kind::id, "max tokens"}));
}

BOOST_AUTO_TEST_CASE(a_cjk_summary_keeps_the_names_it_repeats) {
  std::vector<std::string_view> rows{
    "\u6211\u5728\u5317\u4EAC\u5E02\u5DE5\u4F5C\uFF0C\u7528\u300C\u7EA2\u6708\u300D"
    "\u548C\u30C7\u30FC\u30BF\u30D9\u30FC\u30B9\u3002"};
  std::string summary = "\u7528\u6237\u5728\u5317\u4EAC\u5E02\uFF0C\u9879\u76EE\u300C"
                        "\u7EA2\u6708\u300D\u3002";
  auto r = retention_of(extract_identifiers(rows), summary);
  BOOST_TEST(r.identifiers_in == 3);
  BOOST_TEST(r.identifiers_kept == 2);
  BOOST_REQUIRE_EQUAL(r.missing.size(), 1u);
  BOOST_TEST(r.missing[0].text == "\u30C7\u30FC\u30BF\u30D9\u30FC\u30B9");
}

BOOST_AUTO_TEST_CASE(nothing_to_keep_is_full_retention) {
  auto r = retention_of(extract_identifiers("just some words"), "a summary");
  BOOST_TEST(r.identifiers_in == 0);
  BOOST_TEST(r.identifiers_kept == 0);
  BOOST_TEST(r.ratio() == 1.0);
}

BOOST_AUTO_TEST_CASE(the_count_is_bounded_and_invalid_bytes_are_harmless) {
  std::string many;
  for (size_t i = 0; i < max_identifiers + 100; ++i)
    many += "id" + std::to_string(i) + "x ";
  BOOST_TEST(extract_identifiers(many).size() == max_identifiers);
  std::string bad = "\xff\xfe src/\xc3 \xe4\xb8 ok.cpp \x80`";
  auto ids = extract_identifiers(bad);
  BOOST_TEST(has(ids, identifier_kind::path, "ok.cpp"));
}

BOOST_AUTO_TEST_SUITE_END()
