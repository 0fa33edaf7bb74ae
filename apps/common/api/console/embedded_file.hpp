// A file built into the program (the web console's HTML, JS and CSS): its base name and
// its bytes, which live as long as the program. The list is generated at build time by
// cmake/embed_files.cmake from apps/common/api/console/web/ (console_files()), so the
// daemon reads no file at run time to serve the console.
//
// Threads: plain values over static storage; any thread.
#pragma once

#include <string_view>
#include <vector>

namespace mneme::api {

struct embedded_file {
  std::string_view name;  // "index.html"
  std::string_view bytes; // the file as it was at build time
};

// The console's files (apps/common/api/console/web/*), generated source.
std::vector<embedded_file> console_files();

} // namespace mneme::api
