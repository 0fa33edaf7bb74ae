// `mneme run`, the short demo beside `mneme soak`, run as the real program
// (MNEME_BINARY_DIR/mneme): a load too small to bring any context to the threshold
// passes and says that no compaction was due; a load that crosses the threshold
// compacts and passes; with automatic compaction switched off the same load fails the
// compaction check and exits 1, so the check is not vacuous.
#define BOOST_TEST_MODULE cmd_run_test
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

const std::string mneme_bin = std::string{MNEME_BINARY_DIR} + "/mneme";

// A scratch directory for one test, removed at the end.
struct scratch {
  fs::path dir = fs::temp_directory_path()
                 / ("mneme-run-test-" + std::to_string(::getpid()));
  scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~scratch() { fs::remove_all(dir); }

  struct result {
    int exit_code = -1;
    std::string output;  // stdout and stderr
  };

  // Runs `mneme run ARGS` (ARGS already shell-safe).
  result run(const std::string& args) const {
    auto log = dir / "output.txt";
    auto cmd = mneme_bin + " run " + args + " > '" + log.string() + "' 2>&1";
    int status = std::system(cmd.c_str());
    result r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in{log};
    std::stringstream text;
    text << in.rdbuf();
    r.output = text.str();
    return r;
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
  auto r = run("--sessions 2 --turns 3");
  BOOST_TEST(r.exit_code == 0, r.output);
  BOOST_TEST(committed_compactions(r.output) == 0);
  BOOST_TEST(says(r.output, "no compaction was due"), r.output);
  BOOST_TEST(says(r.output, "check       ok   " + compaction_check), r.output);
  BOOST_TEST(!says(r.output, "FAIL"), r.output);
}

BOOST_AUTO_TEST_CASE(a_load_that_reaches_the_threshold_compacts_and_passes) {
  // 30 turns of 800 chars: about 8,000 tokens and 61 messages per session without
  // compaction, past the 6,000 cap and past head 3 + tail 20.
  auto r = run("--sessions 2 --turns 30 --summary-outage 0");
  BOOST_TEST(r.exit_code == 0, r.output);
  BOOST_TEST(committed_compactions(r.output) >= 2);
  BOOST_TEST(!says(r.output, "no compaction was due"), r.output);
  BOOST_TEST(says(r.output, "check       ok   " + compaction_check), r.output);
}

BOOST_AUTO_TEST_CASE(with_automatic_compaction_off_the_same_load_fails_the_compaction_check) {
  auto config = dir / "off.yaml";
  std::ofstream{config} << "compression:\n  enabled: false\n";
  auto r = run("--sessions 2 --turns 30 --summary-outage 0 --config '"
               + config.string() + "'");
  BOOST_TEST(r.exit_code == 1, r.output);
  BOOST_TEST(committed_compactions(r.output) == 0);
  BOOST_TEST(says(r.output, "check       FAIL " + compaction_check), r.output);
}

BOOST_AUTO_TEST_SUITE_END()
