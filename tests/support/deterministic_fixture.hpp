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

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/sec.hpp>
#include <caf/send.hpp>
#include <caf/timespan.hpp>

#include "podref/testing/pending_reply.hpp"

namespace podref::test {

using testing::pending_reply;

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

  /// The virtual clock's reading, in nanoseconds since its epoch (what the
  /// engine's actors stamp with).
  std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
             sys.clock().now().time_since_epoch())
      .count();
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
