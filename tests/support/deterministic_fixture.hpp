// A Catch2 fixture running CAF on its deterministic test scheduler: no
// worker threads, messages run only when a test calls run(), and time is
// virtual (advance() moves it; delayed sends and request timeouts use it).
//
// Use it with TEST_CASE_METHOD, never with CAF's test DSL (expect, allow,
// inject), which crashes under Catch2.
//
// Lifetime: ~actor_system waits for every actor. Stop or drop every actor a
// test spawns before the fixture ends; an actor referenced by a pending
// delayed message or by a response promise it still holds stays alive, so
// release those (advance time) or send it an exit first.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/blocking_actor.hpp>
#include <caf/error.hpp>
#include <caf/exit_reason.hpp>
#include <caf/expected.hpp>
#include <caf/message.hpp>
#include <caf/message_id.hpp>
#include <caf/response_handle.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/sec.hpp>
#include <caf/send.hpp>
#include <caf/timespan.hpp>

namespace podref::test {

/// A request sent from a scoped_actor of its own, whose reply a test
/// collects later (e.g. after advancing virtual time). Its own mailbox
/// holds nothing but that reply, so ready() is exact and take() never
/// blocks.
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

/// The deterministic actor system and helpers to drive it.
struct deterministic_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scheduler::test_coordinator& sched;
  /// Can send at any time, but receives only what a run() has delivered.
  caf::scoped_actor self;

  deterministic_fixture()
    : sys(prepare(cfg)),
      sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())),
      self(sys) {
    // nop
  }

  /// Runs jobs until no actor has anything left to do; returns how many ran.
  std::size_t run() {
    return sched.run();
  }

  /// Advances virtual time by `d`, firing what falls due, then runs until
  /// idle; returns how many jobs ran.
  std::size_t advance(caf::timespan d) {
    sched.advance_time(d);
    return run();
  }

  /// Sends a request and runs until idle, without waiting for the reply.
  template <class T, class Handle, class... Ts>
  pending_reply<T> send_request(const Handle& dest, Ts&&... xs) {
    pending_reply<T> result{sys, dest, std::forward<Ts>(xs)...};
    run();
    return result;
  }

  /// Sends a request, runs until idle and returns the reply: a T, the error
  /// the receiver answered with, or caf::sec::request_timeout when no reply
  /// came (never blocks).
  template <class T, class Handle, class... Ts>
  caf::expected<T> request(const Handle& dest, Ts&&... xs) {
    return send_request<T>(dest, std::forward<Ts>(xs)...).take();
  }

  /// Sends `dest` an exit (user_shutdown) and runs until idle.
  template <class Handle>
  void stop(const Handle& dest) {
    caf::anon_send_exit(dest, caf::exit_reason::user_shutdown);
    run();
  }

private:
  static caf::actor_system_config& prepare(caf::actor_system_config& x) {
    x.set("scheduler.policy", caf::atom("testing"));
    return x;
  }
};

} // namespace podref::test
