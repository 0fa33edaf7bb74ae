// How the soak runner writes a turn-latency figure that may be missing: when no turn
// succeeded (in the progress line's 10 s window, or in the whole run) there is no
// percentile, and a 0 would read as "instant". The progress line and report.md print
// "-", report.json writes null (its keys stay the same). Used by soak_loop.cpp (the
// progress line) and soak_report.cpp (report.json, report.md). Pure functions; any
// thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mneme::soak {

// The progress line's "p99 123 ms": the 99th percentile (nearest rank) of the latencies
// of the turns that succeeded in the window, rounded to whole ms; "p99 -" when none did.
std::string progress_p99(const std::vector<double>& ok_latencies_ms);

// A latency figure of report.json: milliseconds rounded to 0.1, null when absent.
nlohmann::json latency_figure(std::optional<double> ms);

// A report.json figure written into report.md: "-" for null, else its JSON text.
std::string markdown_figure(const nlohmann::json& figure);

} // namespace mneme::soak
