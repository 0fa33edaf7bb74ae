// The Prometheus text exposition's rule that a metric family appears once — its # HELP
// and # TYPE lines, then every sample — applied to a text assembled from sections that
// may each render samples of the same family (the doors' `door`-labelled counters,
// apps/common/api/doors/door_answer.hpp). Pure, standard library only; any thread.
//
// merge_metric_families(text): every family in the order it first appears, its first
// # HELP and # TYPE lines, then its samples in the order they appear anywhere in the
// text. A sample belongs to the family of the # HELP/# TYPE line before it when its
// name is that family's name or that name plus _bucket, _sum, _count, _total or
// _created; else to a family of its own name. Other comment lines and blank lines are
// dropped. A text whose families are already contiguous comes out unchanged (up to the
// dropped lines).
#pragma once

#include <string>
#include <string_view>

namespace mneme {

std::string merge_metric_families(std::string_view text);

} // namespace mneme
