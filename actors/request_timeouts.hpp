// Requests whose timeout leaves CAF's clock when they are answered. For any actor that
// sends requests with a finite timeout; header-only.
//
// CAF 0.17.6 leaves a request's timeout in the actor clock until it is due, whether the
// request was answered or not. Each entry costs about 190 bytes and holds a strong
// reference to the requester. Timeouts here are minutes (storage_timeout, the turn
// deadline), so an actor that sends a few requests per session (the gateway: open,
// state, turn, evict) keeps about 1.1 KB per session it touched in those minutes. That
// was most of what an evicted session cost (docs/benchmarks.md, runtime).
// `then_forgetting` drops the entry once the answer or the error has arrived.
//
// Invariant: both handlers forget the timeout before they run, so a handler that
// sends a new request never sees the old entry. Forgetting a timeout that already
// fired is a no-op in the clock.
#pragma once

#include <utility>

#include <caf/detail/type_traits.hpp>
#include <caf/local_actor.hpp>
#include <caf/message_id.hpp>

namespace mneme {

namespace request_timeouts_detail {

template <class F, class... Args>
auto forgetting(caf::local_actor* self, caf::message_id id, F f,
                caf::detail::type_list<Args...>) {
  // The same signature as `f`: CAF reads a response handler's argument types.
  return [self, id, f = std::move(f)](Args... xs) mutable {
    self->clock().cancel_request_timeout(self, id);
    return f(std::forward<Args>(xs)...);
  };
}

} // namespace request_timeouts_detail

// `f` with the request `id`'s timeout dropped before it runs.
template <class F>
auto forgetting_timeout(caf::local_actor* self, caf::message_id id, F f) {
  using args = typename caf::detail::get_callable_trait<F>::arg_types;
  return request_timeouts_detail::forgetting(self, id, std::move(f), args{});
}

// handle.then(on_value, on_error), each dropping the request's timeout first.
// `handle` is what self->request(...) returned.
template <class Self, class Handle, class OnValue, class OnError>
void then_forgetting(Self* self, Handle handle, OnValue on_value, OnError on_error) {
  auto id = handle.id();
  handle.then(forgetting_timeout(self, id, std::move(on_value)),
              forgetting_timeout(self, id, std::move(on_error)));
}

} // namespace mneme
