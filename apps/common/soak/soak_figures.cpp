// Missing soak latency figures; see soak_figures.hpp.
#include "apps/common/soak/soak_figures.hpp"

#include <cmath>

#include <fmt/format.h>

#include "policies/percentile.hpp"

namespace mneme::soak {

std::string progress_p99(const std::vector<double>& ok_latencies_ms) {
  auto p99 = percentile(ok_latencies_ms, 0.99);
  return p99 ? fmt::format("p99 {:.0f} ms", *p99) : std::string{"p99 -"};
}

nlohmann::json latency_figure(std::optional<double> ms) {
  if (!ms)
    return nullptr;
  return std::round(*ms * 10) / 10;
}

std::string markdown_figure(const nlohmann::json& figure) {
  return figure.is_null() ? std::string{"-"} : figure.dump();
}

} // namespace mneme::soak
