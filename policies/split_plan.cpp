// Printing of compaction plans, for logs and Boost.Test failure messages.
#include "policies/split_plan.hpp"

namespace mneme {

std::string_view to_string(split_outcome o) {
  switch (o) {
    case split_outcome::compact: return "compact";
    case split_outcome::middle_empty: return "middle_empty";
    case split_outcome::center_out_of_range: return "center_out_of_range";
    case split_outcome::center_in_protected_head: return "center_in_protected_head";
    case split_outcome::center_in_protected_tail: return "center_in_protected_tail";
    case split_outcome::middle_not_stored: return "middle_not_stored";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, split_outcome o) { return os << to_string(o); }

std::string_view describe(split_outcome o) {
  switch (o) {
    case split_outcome::compact: return "the middle of the transcript can be compacted";
    case split_outcome::middle_empty:
      return "nothing to compact: the protected head and tail cover the whole live context";
    case split_outcome::center_out_of_range:
      return "the message is not in the live context of this session";
    case split_outcome::center_in_protected_head:
      return "the message lies in the protected head (the first messages are always kept "
             "verbatim); pick a later message";
    case split_outcome::center_in_protected_tail:
      return "the message lies in the protected tail (the latest messages are always kept "
             "verbatim); pick an earlier message";
    case split_outcome::middle_not_stored:
      return "a message in that range is not stored yet; retry once its append is answered";
  }
  return "unknown outcome";
}

std::string_view to_string(orphan_fix::kind k) {
  switch (k) {
    case orphan_fix::kind::drop_orphan_result: return "drop_orphan_result";
    case orphan_fix::kind::answer_unanswered_call: return "answer_unanswered_call";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, orphan_fix::kind k) { return os << to_string(k); }

std::ostream& operator<<(std::ostream& os, const orphan_fix& f) {
  os << '{' << f.what << " index=" << f.index << " id=" << f.message_id
     << " call=" << f.call_id;
  if (f.what == orphan_fix::kind::answer_unanswered_call)
    os << " tool=" << f.tool_name << " insert_after=" << f.insert_after;
  return os << '}';
}

std::ostream& operator<<(std::ostream& os, const compaction_plan& p) {
  os << "{outcome=" << p.outcome << " n=" << p.transcript_size << " head=[0," << p.head_end
     << ") middle=[" << p.head_end << ',' << p.tail_begin << ") tail=[" << p.tail_begin << ','
     << p.transcript_size << ") middle_ids=" << p.middle_ids.size()
     << " previous_summary=";
  if (p.previous_summary_index)
    os << *p.previous_summary_index;
  else
    os << "none";
  os << " summary_role=" << to_string(p.summary_role)
     << " merge=" << (p.merge_into_first_tail ? "yes" : "no");
  if (p.merge_target_index) os << '@' << *p.merge_target_index;
  os << " tokens(head/middle/tail)=" << p.head_tokens << '/' << p.middle_tokens << '/'
     << p.tail_tokens << " fixes=[";
  for (std::size_t i = 0; i < p.orphan_fixes.size(); ++i)
    os << (i ? " " : "") << p.orphan_fixes[i];
  return os << "]}";
}

} // namespace mneme
