// Asking the runtime from a request's actor: `ask<T>(c, actor, timeout, args...).then(f)`
// sends the request from c's actor and runs f(caf::expected<T>) in that actor when the
// answer, or the error (timeout, receiver down), arrives; a null handle (the runtime is
// stopped) runs f at once with errc::shutting_down. Every ask has a timeout (STYLE.md).
//
// The context `c` is any request of the API — a route's call (call.hpp), a door's
// request, the wire-neutral conversation of doors/door_conversation.hpp — as a
// std::shared_ptr<C> whose C has
//   caf::event_based_actor* actor() const;       the request's actor
//   void on_exception(const std::exception&);    answers 500 in the request's own shape
// guarded() runs a continuation so that an exception it throws becomes that 500: a
// continuation never kills the request's actor without answering.
//
// Threads: in the request's actor only.
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "caf/all.hpp"

#include "messages/errc.hpp"

namespace mneme::api {

template <class C, class F, class... Xs>
void guarded(const std::shared_ptr<C>& c, const F& f, Xs&&... xs) {
  try {
    f(std::forward<Xs>(xs)...);
  } catch (const std::exception& e) {
    c->on_exception(e);
  }
}

// A request to one actor, sent by then(f).
template <class T, class C, class Handle, class... Ts>
class asking {
 public:
  asking(std::shared_ptr<C> c, Handle h, std::chrono::milliseconds timeout, Ts... xs)
    : c_(std::move(c)), h_(std::move(h)), timeout_(timeout), args_(std::move(xs)...) {}

  template <class F>
  void then(F f) {
    if (!h_) {
      f(caf::expected<T>{caf::make_error(errc::shutting_down, "the runtime is stopped")});
      return;
    }
    auto c = c_;
    std::apply(
      [&](auto&... xs) {
        c->actor()
          ->request(h_, timeout_, xs...)
          .then([c, f](T& x) { guarded(c, f, caf::expected<T>{std::move(x)}); },
                [c, f](caf::error& e) { guarded(c, f, caf::expected<T>{std::move(e)}); });
      },
      args_);
  }

 private:
  std::shared_ptr<C> c_;
  Handle h_;
  std::chrono::milliseconds timeout_;
  std::tuple<Ts...> args_;
};

template <class T, class C, class Handle, class... Ts>
asking<T, C, Handle, std::decay_t<Ts>...> ask(const std::shared_ptr<C>& c, const Handle& h,
                                              std::chrono::milliseconds timeout, Ts&&... xs) {
  return {c, h, timeout, std::forward<Ts>(xs)...};
}

} // namespace mneme::api
