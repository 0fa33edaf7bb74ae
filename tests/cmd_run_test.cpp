// `mneme run`, the short demo beside `mneme soak`, run as the real program
// (MNEME_BINARY_DIR/mneme): a load too small to bring any context to the threshold
// passes and says that no compaction was due; a load that crosses the threshold
// compacts and passes; with automatic compaction switched off the same load fails the
// compaction check and exits 1, so the check is not vacuous.
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(cmd_run_test)

namespace {

// A scratch directory for one test, removed at the end.
struct scratch {
  mneme::testing::temp_dir dir{"mneme-run-test"};

  // Runs `mneme run ARGS` (MNEME_BINARY_DIR/mneme); its output is stdout and stderr mixed.
  mneme::testing::program_result run(std::vector<std::string> args) const {
    args.insert(args.begin(), "run");
    return mneme::testing::run_program("mneme", args, mneme::testing::stderr_mode::merged);
  }
};

// The number in "compactions N committed".
long committed_compactions(const std::string& output) {
  std::smatch m;
  BOOST_REQUIRE_MESSAGE(std::regex_search(output, m, std::regex{R"(compactions (\d+) committed)"}),
                        output);
  return std::stol(m[1]);
}

bool says(const std::string& output, const std::string& line) {
  return output.find(line) != std::string::npos;
}

const std::string compaction_check = "compaction ran once a context reached the threshold";

} // namespace

BOOST_FIXTURE_TEST_SUITE(cmd_run, scratch)

BOOST_AUTO_TEST_CASE(a_load_below_the_threshold_passes_and_says_no_compaction_was_due) {
  // 2 sessions x 3 turns of 800 chars: about 900 tokens each, under the 6,000 cap.
  auto r = run({"--sessions", "2", "--turns", "3"});
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(committed_compactions(r.out) == 0);
  BOOST_TEST(says(r.out, "no compaction was due"), r.out);
  BOOST_TEST(says(r.out, "check       ok   " + compaction_check), r.out);
  BOOST_TEST(!says(r.out, "FAIL"), r.out);
}

BOOST_AUTO_TEST_CASE(a_load_that_reaches_the_threshold_compacts_and_passes) {
  // 30 turns of 800 chars: about 8,000 tokens and 61 messages per session without
  // compaction, past the 6,000 cap and past head 3 + tail 20.
  auto r = run({"--sessions", "2", "--turns", "30", "--summary-outage", "0"});
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(committed_compactions(r.out) >= 2);
  BOOST_TEST(!says(r.out, "no compaction was due"), r.out);
  BOOST_TEST(says(r.out, "check       ok   " + compaction_check), r.out);
}

BOOST_AUTO_TEST_CASE(with_automatic_compaction_off_the_same_load_fails_the_compaction_check) {
  auto config = dir.file("off.yaml");
  std::ofstream{config} << "compression:\n  enabled: false\n";
  auto r = run({"--sessions", "2", "--turns", "30", "--summary-outage", "0", "--config", config});
  BOOST_TEST(r.code == 1, r.out);
  BOOST_TEST(committed_compactions(r.out) == 0);
  BOOST_TEST(says(r.out, "check       FAIL " + compaction_check), r.out);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // cmd_run_test
