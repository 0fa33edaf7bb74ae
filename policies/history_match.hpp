// The history matching of mneme's doors (docs/api.md "OpenAI door"): which of the
// messages a client sends for a session are already stored, which are new, and, when
// the client's transcript contradicts the stored one (its branch), where to roll back.
// It works on session messages, whatever the wire: each door translates its requests
// (chat completions now; Responses, Anthropic Messages) into `message`s, and the
// wire-neutral apps/common/api/doors/door_conversation.hpp keeps one history_print per
// session key, feeds it the rows the store reports and acts on the plans below. Pure,
// standard library only (and the std-only messages/transcript.hpp); no I/O, no clock;
// safe from any thread.
//
// The visible history of a session: its rows in id order as a client would send them
// back — every live or archived row (archived rows included: a client holding the
// transcript from before a compaction still matches), except
//   - rolled-back rows (not part of the current branch);
//   - summaries and tool-output replacements (is_summary: mneme wrote them);
//   - the session's first row when it is a system row and the daemon writes its own
//     system prompt (gateway.system_prompt: the client never sent it);
//   - mneme's built-in tool rounds: an assistant row whose calls all name built-in
//     tools, and the tool rows answering those calls (mneme ran them in the turn).
// Two rows match when role, content (ASCII whitespace trimmed at both ends: a streamed
// answer's pieces may carry what the stored answer trims), tool_call_id and the tool
// calls (id, name, arguments) are equal; arguments are compared without the JSON
// whitespace between tokens, empty ones as {} (a door that gets them as a JSON value, as Anthropic's
// tool_use `input`, writes them back compactly).
//
// The fingerprint (history_print) — the invariant the conversation keeps (for a continuation,
// "stored rows" are its conversation rows, see "Continuations" below, and last_row_id
// is at least the id of its last creation row):
//   P1. rows == the number of visible rows among the stored rows with id <= last_row_id;
//   P2. chain == chain_fingerprint folded over those visible rows in id order, from
//       empty_chain;
//   P3. answered_rows / answered_chain are the same up to and including the last
//       visible assistant row (0 / empty_chain without one);
// so extending it costs the new rows only (fold_rows with the rows after last_row_id),
// and a resent transcript is verified by hashing the sent messages and comparing one
// number: no stored row is read again. A rollback breaks P1 (rows before the mark
// change state): the conversation then drops the print and folds the session's rows
// anew.
//
// Summary items: a sent message flagged is_summary (a compacted window a door answered,
// resent: the Responses door's compaction item) stands for the visible rows with ids in
// [replaced_first_id, replaced_last_id]; it matches where that range begins right
// after the rows matched before it, and the rows it covers count as sent. The print
// cannot verify rows it did not see, so such a transcript is planned from the rows. A
// summary item that matches nothing is never stored: split_new_messages refuses it.
//
// Styles, decided per request (style_of): a request whose messages contain an
// assistant message or a summary item, or begin with a system message, is full history; any other (user
// messages, tool results) is stateful. A lone user message therefore appends; a
// client that edits the only message of a one-message transcript is not told apart
// from a stateful one.
//
// Plans (plan_from_print, the fast path, then plan_from_rows when it asks for rows):
//   - stateful: every sent message is new, unless the sent messages equal the unanswered
//     tail of the history (the rows after the last assistant row: a retry of a failed
//     request), which is rolled back and sent again so the model answers it once;
//   - full history, the stored history a prefix of the sent one: the rest is new;
//   - full history otherwise (rows needed): k = the longest common prefix; rows after
//     the k-th visible row are rolled back (the client's branch) and sent[k..] is new.
//     When nothing new is left (the sent transcript is all stored): ending with an
//     assistant message, that stored row is answered again (replay, no model call);
//     ending with a user or tool message, that unanswered tail (its trailing user and
//     tool messages) is rolled back and sent again (a retry).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

inline constexpr uint64_t empty_chain = 14695981039346656037ull; // FNV-1a 64 basis

// The chain over `previous` and one message (FNV-1a 64 over a length-prefixed
// encoding of the matched fields; see the header comment).
uint64_t chain_fingerprint(uint64_t previous, const message& m);
// Folded over msgs[first, last).
uint64_t chain_of(uint64_t previous, const std::vector<message>& msgs, size_t first, size_t last);

// Two messages match (the fields chain_fingerprint covers).
bool same_message(const message& a, const message& b);

struct visibility_rules {
  bool daemon_system_prompt = true;         // the first row, when system, is the daemon's
  std::vector<std::string> builtin_names;   // names of mneme's built-in tools
};

struct history_print {
  std::string session_id;
  int64_t last_row_id = 0;
  int64_t rows = 0;
  uint64_t chain = empty_chain;
  int64_t answered_rows = 0;
  uint64_t answered_chain = empty_chain;
  bool first_row_seen = false;
  std::vector<std::string> builtin_call_ids; // built-in calls whose tool rows are hidden
};

// The visibility state of a fold: what fold_rows needs besides the rows.
// Folds `rows` (ascending ids, all > p.last_row_id) into p. REQUIRES: ids ascending.
void fold_rows(history_print& p, const std::vector<message>& rows, const visibility_rules& r);

// The visible rows of a session's rows (ascending ids), in order; *leading_hidden_id is
// the id of the daemon's system row when it was hidden (else 0): a rollback keeps it.
std::vector<message> visible_rows(const std::vector<message>& rows, const visibility_rules& r,
                                  int64_t* leading_hidden_id);

// The live rows a client is handed as its compacted window (the Responses door's
// compact endpoint): `live` (ascending ids) without the rows visible_rows hides for the
// daemon's prompt and built-in rounds, summaries kept — resent, the window matches
// (see "Summary items").
std::vector<message> client_window(const std::vector<message>& live, const visibility_rules& r);

// Continuations. A session that continues its parent under the same key (a child
// session, compression.in_place: false, parent end reason "continued_in_child"; or the
// session of an exhaustion reset, "compaction_exhausted") starts with creation rows:
// copies of parent rows (the same message with the same timestamp: a copy keeps both)
// and summaries. A full-history client holds the conversation, not the session, so it
// is matched against the conversation rows (conversation_rows): the parent's
// conversation rows, then the continuation's own rows (those after its creation rows).
// Ids ascend across it (a parent ends when its continuation is created). An exhaustion reset runs the
// unanswered message again in the new session: the parent's unanswered tail, when the
// continuation's own rows begin with it, is left out of the conversation (it is there
// once, answered).
bool is_continuation_end(std::string_view parent_end_reason);

// How many leading rows of `own` (a continuation's rows, ascending ids) are creation
// rows: summaries, and copies of a row of `parent_rows`.
size_t creation_row_count(const std::vector<message>& parent_rows,
                          const std::vector<message>& own);

// Appends own[creation..] to `conversation` (the parent's conversation rows, ending with
// the parent's rows), first dropping the parent's unanswered tail that own[creation..]
// begins with (see above).
void continue_conversation(std::vector<message>& conversation, const std::vector<message>& own,
                           size_t creation);

// The conversation a full-history client holds (see "Continuations"): the rows it is
// matched against, for the newest session of a key.
struct conversation_rows {
  std::vector<message> rows; // the conversation rows, ascending ids
  std::vector<message> own;  // every row of the newest session
  int64_t boundary_id = 0;   // rows above it are the newest session's own rows (0: all)
};

// A session that continues no parent: its own rows are the conversation.
conversation_rows conversation_of(std::vector<message> own);
// `own`, the rows of a continuation, after `parent`, its parent's conversation: the
// creation rows are left out (creation_row_count), the boundary is the last creation
// row (else the parent's last row, else the parent's boundary), and a parent's tail the
// continuation ran again is held once (continue_conversation).
conversation_rows continued_conversation(conversation_rows parent, std::vector<message> own);

// The print of a conversation for `session_id`, folded anew from every conversation row
// (P1-P3) and covering at least its boundary (the creation rows are never folded).
history_print print_of_conversation(const conversation_rows& conv, const visibility_rules& r,
                                    std::string session_id);

enum class history_style : uint8_t { stateful, full_history };
std::string_view to_string(history_style s);
inline std::ostream& operator<<(std::ostream& os, history_style s) { return os << to_string(s); }
history_style style_of(const std::vector<message>& sent);

struct history_plan {
  bool need_rows = false;     // undecidable from the print: plan from the rows
  size_t known = 0;           // sent[0, known) are stored (and kept)
  bool roll_back = false;     // roll back every row after last_kept_id first
  int64_t last_kept_id = 0;
  int64_t rebased_rows = 0;   // visible rows the rollback removes from the history
  bool replay = false;        // nothing new: answer the stored row `replayed` again
  message replayed;
};

// The fast path: decided from the print alone, or need_rows.
history_plan plan_from_print(const std::vector<message>& sent, history_style style,
                             const history_print& p);
// The slow path: `visible` from visible_rows(), `leading_hidden_id` likewise.
history_plan plan_from_rows(const std::vector<message>& sent, history_style style,
                            const std::vector<message>& visible, int64_t leading_hidden_id);

// A conversation's plan made fit for its newest session, whose own rows are those with
// ids above `boundary_id` (at or below it: ancestor rows and its creation rows, which
// are never rolled back): a rollback that keeps every visible row at or below the
// boundary rolls back own rows only (last_kept_id raised to the boundary); nullopt when
// it would roll back a visible row at or below the boundary (the client's branch starts
// before the continuation). `visible` as given to plan_from_rows.
std::optional<history_plan> fit_to_continuation(history_plan plan,
                                                const std::vector<message>& visible,
                                                int64_t boundary_id);

// The slow path over a whole conversation: plan_from_rows over its visible rows; for a
// continuation the plan made fit for the newest session (fit_to_continuation), or, when
// the client's branch starts before the continuation, the plan over that session's own
// rows alone.
history_plan plan_from_conversation(const std::vector<message>& sent, history_style style,
                                    const conversation_rows& conv, const visibility_rules& r);

// Why sent[known..] cannot be stored when it holds a summary item (one that matched no
// stored rows: mneme never stores a client's summary); nullopt when it holds none. A
// door checks it before the plan's rollback, so a refused request changes nothing.
std::optional<std::string> unmatched_summary(const std::vector<message>& sent, size_t known);

// The new messages sent[known..] as rows to append and the turn that follows: a user
// message (the last one), or the trailing tool results. nullopt with `why` set when
// the new messages cannot end a request (an assistant or system message last), or when
// one of them is an assistant message whose tool calls are not all answered by the tool
// messages directly after it and `allow_unanswered` is false (`why` names the message
// and the call ids): nothing of such a request may be stored.
struct new_messages {
  std::vector<message> appended;        // stored as they are, in order, before the turn
  std::string user_content;             // the turn's user message, or
  std::vector<message> tool_results;    // the results it continues with
};
std::optional<new_messages> split_new_messages(const std::vector<message>& sent, size_t known,
                                               std::string& why,
                                               bool allow_unanswered = false);

} // namespace mneme
