// Server-sent events from pieces (policies/sse_reader.hpp): the same events whatever the
// split, every line ending, comments, multi-line data, named events, an event without
// its blank line at the end, events without data dropped.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "policies/sse_reader.hpp"

BOOST_AUTO_TEST_SUITE(sse_reader_test)

using namespace mneme;

namespace {

std::vector<std::string> read_split(const std::string& bytes, size_t piece) {
  std::vector<std::string> out;
  sse_reader r{[&](const sse_event_view& e) {
    out.push_back(std::string{e.name} + "|" + std::string{e.data});
  }};
  for (size_t at = 0; at < bytes.size(); at += piece)
    r.feed(std::string_view{bytes}.substr(at, piece));
  r.finish();
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(events_are_the_same_in_every_split_and_with_every_line_ending) {
  const std::string stream = ": comment\n\nevent: delta\ndata: {\"a\":1}\n\n"
                             "data: line one\r\ndata:line two\r\n\r\n"
                             "event: nothing\n\n"            // no data: dropped
                             "event: reply\rdata: x\r\r"
                             "data: [DONE]";                  // no blank line at the end
  const std::vector<std::string> want{"delta|{\"a\":1}", "|line one\nline two", "reply|x",
                                      "|[DONE]"};
  for (size_t piece = 1; piece <= stream.size(); ++piece)
    BOOST_TEST(read_split(stream, piece) == want, "pieces of " << piece);
}

BOOST_AUTO_TEST_SUITE_END() // sse_reader_test
