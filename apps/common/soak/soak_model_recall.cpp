// The soak's check of the model's own recall; see soak_model_recall.hpp.
#include "apps/common/soak/soak_model_recall.hpp"

#include <string>

namespace mneme::soak {

model_recall_outcome check_model_recall(soak_target& target,
                                        const std::vector<planted_marker>& markers, double t_s) {
  model_recall_outcome out;
  for (size_t i = 0; i < markers.size() && out.asked < static_cast<int64_t>(model_recall_probes);
       ++i) {
    const auto& mk = markers[i];
    if (mk.cjk) // the latin markers: one token the snippet marks whole
      continue;
    ++out.asked;
    const auto key = "model-recall-" + std::to_string(out.asked);
    const auto question = "What did we discuss earlier about " + mk.marker + "?";
    const auto marked = ">>>" + mk.marker + "<<<";
    std::string last_error;
    bool answered = false;
    for (int attempt = 0; attempt < model_recall_attempts && !answered; ++attempt) {
      auto answer = target.ask(key, mk.user_id, question);
      if (!answer) {
        last_error = render_error(answer.error());
        continue;
      }
      answered = true;
      if (answer->find(marked) != std::string::npos)
        ++out.found;
      else
        out.violations.push_back({"model_recall_missed", key,
                                  "'" + mk.marker + "' of " + mk.user_id
                                    + " not in the answer to the model's session_search: "
                                    + answer->substr(0, 300),
                                  t_s});
    }
    if (!answered)
      ++out.unanswered;
  }
  return out;
}

} // namespace mneme::soak
