// give_way's check interval, and podref's sharing policy: installed by the
// runtime for "sharing", counting jobs queued or running, and back to zero
// once every actor is idle.
#include "podref/runtime/detail/give_way.hpp"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <caf/actor_system.hpp>
#include <caf/actor_cast.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "podref/runtime/runtime.hpp"

using namespace podref;

namespace {

using ping_atom = caf::atom_constant<caf::atom("ping")>;

/// Ticks until a check; how many ticks that took.
int ticks_to_check(detail::give_way_clock& c) {
  for (int n = 1; n <= 100000; ++n)
    if (c.tick())
      return n;
  return -1;
}

/// Waits (bounded, without sleeping) until `x` reads 0; its last value.
std::uint32_t drained(const detail::pending_jobs& x) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (x.load() != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  return x.load();
}

} // namespace

TEST_CASE("give_way checks every 16th read and backs off while jobs stay "
          "pending",
          "[give_way]") {
  detail::give_way_clock c;
  CHECK(ticks_to_check(c) == 16);
  CHECK_FALSE(c.checked(0)); // nothing pending: no yield, same interval
  CHECK(ticks_to_check(c) == 16);
  std::vector<int> intervals;
  for (int i = 0; i < 8; ++i) {
    CHECK(c.checked(3)); // pending: yield, then check half as often
    intervals.push_back(ticks_to_check(c));
  }
  CHECK(intervals == std::vector<int>{32, 64, 128, 256, 512, 1024, 1024, 1024});
  CHECK_FALSE(c.checked(0)); // seen idle: back to every 16th read
  CHECK(ticks_to_check(c) == 16);
}

TEST_CASE("the sharing policy counts pending jobs back to zero",
          "[give_way]") {
  runtime rt; // default: podref's "sharing"
  auto* pending = detail::pending_jobs_of(rt.system());
  REQUIRE(pending != nullptr);
  {
    auto echo = rt.system().spawn([]() -> caf::behavior {
      return {[](ping_atom, int x) { return x + 1; }};
    });
    caf::scoped_actor self{rt.system()};
    for (int i = 0; i < 200; ++i) {
      int got = -1;
      self->request(echo, caf::infinite, ping_atom::value, i)
        .receive([&](int x) { got = x; }, [](caf::error&) {});
      REQUIRE(got == i + 1);
    }
    // Many senders at once: jobs queue up, and are all accounted for.
    std::vector<std::thread> senders;
    for (int t = 0; t < 4; ++t)
      senders.emplace_back([&rt, echo] {
        caf::scoped_actor s{rt.system()};
        for (int i = 0; i < 500; ++i)
          s->request(echo, caf::infinite, ping_atom::value, i)
            .receive([](int) {}, [](caf::error&) {});
      });
    for (auto& t : senders)
      t.join();
  }
  CHECK(drained(*pending) == 0);
}

namespace {

/// Runs `chains` ping-pong chains of `rounds` actor-to-actor sends at once,
/// each started from its own thread; true when every chain ended within
/// 30 s: with idle polling on, workers poll and sleep between such sends,
/// and every job must still run, alone or side by side.
bool chains_end(runtime& rt, int chains, int rounds) {
  auto pong = rt.system().spawn([](caf::event_based_actor* self)
                                  -> caf::behavior {
    return {[self](ping_atom, int n, caf::actor done_to, caf::actor back) {
      self->send(back, ping_atom::value, n - 1, done_to);
    }};
  });
  auto ping = rt.system().spawn([pong](caf::event_based_actor* self)
                                  -> caf::behavior {
    return {[self, pong](ping_atom, int n, caf::actor done_to) {
      if (n == 0)
        self->send(done_to, caf::ok_atom::value);
      else
        self->send(pong, ping_atom::value, n, done_to,
                   caf::actor_cast<caf::actor>(self));
    }};
  });
  std::atomic<int> ended{0};
  std::vector<std::thread> starters;
  for (int c = 0; c < chains; ++c)
    starters.emplace_back([&] {
      caf::scoped_actor self{rt.system()};
      self->send(ping, ping_atom::value, rounds,
                 caf::actor_cast<caf::actor>(self));
      self->receive([&](caf::ok_atom) { ++ended; },
                    caf::after(std::chrono::seconds(30)) >> [] {});
    });
  for (auto& t : starters)
    t.join();
  return ended == chains;
}

} // namespace

TEST_CASE("actor-to-actor chains all run, with and without idle polling",
          "[give_way]") {
  for (std::size_t spin : {0u, 200u}) {
    INFO("idle_spin_us " << spin);
    runtime_options opts;
    opts.idle_spin_us = spin;
    runtime rt{opts};
    CHECK(chains_end(rt, 1, 2000));
    CHECK(chains_end(rt, 3, 2000));
    CHECK(drained(*detail::pending_jobs_of(rt.system())) == 0);
  }
}

TEST_CASE("reads give way only with podref's sharing policy", "[give_way]") {
  runtime_options opts;
  opts.policy = "stealing";
  runtime rt{opts};
  CHECK(detail::pending_jobs_of(rt.system()) == nullptr);
  detail::give_way(nullptr); // no scheduler to give way to: a no-op
}
