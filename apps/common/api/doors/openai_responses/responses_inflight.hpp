// The streamed responses of the Responses door in flight (POST /v1/responses with
// `stream: true`, from its first step to its answer or error), by response id, so POST
// /v1/responses/{id}/cancel can stop one (messages/answer_stream.hpp cancel()). Private
// to this folder: responses_door.cpp adds and removes, responses_lookup.cpp cancels.
//
// Threads: any; one mutex guards the map (held only to copy or erase an entry).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "apps/common/api/doors/openai_responses/responses_stream.hpp"
#include "policies/access_scope.hpp"

namespace mneme::api {

class responses_inflight {
 public:
  struct entry {
    std::weak_ptr<responses_event_relay> relay;
    std::string owner;     // the token's user ("" for an admin token: any admin cancels)
    responses_answer head; // id, created_at, model, echo
  };

  void add(const std::string& id, entry e) {
    std::lock_guard lock{mu_};
    map_[id] = std::move(e);
  }
  void remove(const std::string& id) {
    std::lock_guard lock{mu_};
    map_.erase(id);
  }
  // The entry of `id` when it is in flight and `scope` may see it (an admin, or the user
  // that started it): the stream is stopped and `head` gets the items it began
  // (responses_event_relay::stopped_output). False otherwise.
  bool cancel(const std::string& id, const access_scope& scope, responses_answer& head) {
    std::shared_ptr<responses_event_relay> relay;
    {
      std::lock_guard lock{mu_};
      auto it = map_.find(id);
      if (it == map_.end() || !(scope.is_admin() || it->second.owner == scope.user))
        return false;
      relay = it->second.relay.lock();
      head = it->second.head;
    }
    if (!relay)
      return false;
    head.partial_output = relay->stopped_output();
    return true;
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, entry> map_;
};

} // namespace mneme::api
