// The one percentile of the project: every percentile or median the soak report, the
// soak's progress line and the benchmarks print goes through this file; none writes its
// own. Header-only (templates over the sample type), standard library only; pure
// functions, safe from any thread.
//
// Scale: p is a fraction, 0 <= p <= 1 (0.99 is the 99th percentile), like every other
// share and bound of the project (rss_max_growth, the scenario's message mix), and the
// rank is p * n without a factor of 100 to forget.
//
// Definition: nearest rank. The p-th percentile of n samples is the smallest sample with
// at least p * n samples at or below it: the sample of rank ceil(p * n) in ascending
// order, at least rank 1. It is always a measured sample, never an interpolation. p = 0
// is the minimum, p = 1 the maximum; the median (p = 0.5) of an even count is the lower
// of the two middle samples. p * n is taken as exact when a floating-point product lands
// a hair above an integer (0.07 * 100 = 7.000000000000001 is rank 7, not 8).
#pragma once

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace mneme {

// The nearest-rank p-th percentile of `values` (any order); nullopt without values.
// REQUIRES: 0 <= p <= 1.
template <class T>
std::optional<T> percentile(std::vector<T> values, double p) {
  static_assert(std::is_arithmetic_v<T>, "percentiles are of numbers");
  assert(p >= 0 && p <= 1);
  if (values.empty())
    return std::nullopt;
  p = std::clamp(p, 0.0, 1.0);
  const double exact = p * static_cast<double>(values.size());
  const auto rank = static_cast<size_t>(std::ceil(exact - exact * 1e-12));
  const size_t index = std::clamp<size_t>(rank, 1, values.size()) - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index),
                   values.end());
  return values[index];
}

// percentile(), 0 without values: for reports that print a number either way.
template <class T>
T percentile_or_zero(std::vector<T> values, double p) {
  return percentile(std::move(values), p).value_or(T{});
}

// The nearest-rank median (the lower middle of an even count), 0 without values.
template <class T>
T median_or_zero(std::vector<T> values) {
  return percentile_or_zero(std::move(values), 0.5);
}

} // namespace mneme
