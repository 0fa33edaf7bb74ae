// The operations that rewrite a session's rows, each written once for every backend
// over store/session_writer.hpp: the compaction commit, row replacement, child
// continuation, reset, checkpoints, rollback and the end of a session. Their contracts
// (what each promises and refuses) are those of store/message_store.hpp; a backend's
// override opens a session_writer and calls the function here.
//
// Each runs the shared checks first (store/compaction_checks.hpp,
// store/replacement_checks.hpp, store/session_checks.hpp: refusals that need no
// database), then one transaction (run_on_open_session).
// Thread: the store's owner.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "caf/expected.hpp"

#include "messages/storage_types.hpp"
#include "messages/transcript.hpp"
#include "store/session_writer.hpp"
#include "store/store_params.hpp"

namespace mneme::session_commits {

// message_store::commit_compaction.
caf::expected<message> compaction(session_writer& w, const compaction_commit& c,
                                  const store_params& params);
// message_store::commit_replacement.
caf::expected<std::vector<message>> replacement(session_writer& w, const replacement_commit& c);
// message_store::continue_in_child.
caf::expected<std::vector<message>> child_continuation(session_writer& w,
                                                       const compaction_commit& c, time_ms now,
                                                       const store_params& params);
// message_store::reset_session.
caf::expected<session_record> reset(session_writer& w, const std::string& session_id,
                                    int head_count, time_ms now, const std::string& reason,
                                    int64_t max_row_tokens);
// message_store::create_checkpoint.
caf::expected<checkpoint_record> checkpoint(session_writer& w, const std::string& session_id,
                                            const std::string& name, time_ms now);
// message_store::rollback_to_checkpoint.
caf::expected<std::vector<message>> rollback_to_checkpoint(session_writer& w,
                                                           const std::string& session_id,
                                                           const std::string& name);
// message_store::rollback_after_row.
caf::expected<std::vector<message>> rollback_after_row(session_writer& w,
                                                       const std::string& session_id,
                                                       int64_t mark, const std::string& label);
// message_store::end_session.
caf::expected<session_record> end(session_writer& w, const std::string& session_id, time_ms now,
                                  const std::string& reason);

} // namespace mneme::session_commits
