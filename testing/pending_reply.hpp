// pending_reply: a request whose reply is collected later, without blocking.
//
// The request goes out from a scoped_actor of its own, so its mailbox holds
// nothing but that reply: ready() is exact and take() never blocks. It works
// on both schedulers: on CAF's deterministic one the caller runs the jobs (or
// advances virtual time) between the request and take(); on the real one the
// caller polls ready().
#pragma once

#include <memory>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/blocking_actor.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <caf/message.hpp>
#include <caf/message_id.hpp>
#include <caf/response_handle.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/sec.hpp>

namespace podref::testing {

template <class T>
class pending_reply {
public:
  template <class Handle, class... Ts>
  pending_reply(caf::actor_system& sys, const Handle& dest, Ts&&... xs)
    : self_(std::make_unique<caf::scoped_actor>(sys)) {
    mid_ = (*self_)
             ->request(dest, caf::infinite, std::forward<Ts>(xs)...)
             .id();
  }

  /// True once the reply (a value or an error) has arrived.
  bool ready() const {
    return !(*self_)->mailbox().empty();
  }

  /// The reply; caf::sec::request_timeout when none has arrived yet.
  caf::expected<T> take() {
    if (!ready())
      return caf::make_error(caf::sec::request_timeout);
    caf::expected<T> result{caf::make_error(caf::sec::unexpected_response)};
    // Output `message` skips CAF's static signature check; the handlers
    // below still only match a T or an error.
    caf::response_handle<caf::blocking_actor, caf::message, true> handle{
      mid_, self_->ptr()};
    handle.receive([&](T& x) { result = std::move(x); },
                   [&](caf::error& err) { result = std::move(err); });
    return result;
  }

private:
  std::unique_ptr<caf::scoped_actor> self_;
  caf::message_id mid_;
};

} // namespace podref::testing
