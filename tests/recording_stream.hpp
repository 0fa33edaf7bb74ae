// An answer_stream (messages/answer_stream.hpp) that records what it was handed, for
// tests of the LLM client's streaming: the text pieces, and each tool-call fragment.
// Safe from any thread (the transport thread writes, the test thread reads after the
// answer arrived).
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "messages/answer_stream.hpp"

namespace mneme::test {

struct recording_stream final : answer_stream {
  struct fragment {
    size_t index = 0;
    std::string id, name, arguments;
  };

  std::string text() const {
    std::lock_guard lock{mu};
    std::string out;
    for (const auto& p : pieces)
      out += p;
    return out;
  }
  std::vector<std::string> text_pieces() const {
    std::lock_guard lock{mu};
    return pieces;
  }
  std::vector<fragment> call_fragments() const {
    std::lock_guard lock{mu};
    return fragments;
  }

 protected:
  void on_text(std::string_view delta) override {
    std::lock_guard lock{mu};
    pieces.emplace_back(delta);
  }
  void on_tool_call(size_t index, std::string_view id, std::string_view name,
                    std::string_view arguments) override {
    std::lock_guard lock{mu};
    fragments.push_back({index, std::string{id}, std::string{name}, std::string{arguments}});
  }

 private:
  mutable std::mutex mu;
  std::vector<std::string> pieces;
  std::vector<fragment> fragments;
};

} // namespace mneme::test
