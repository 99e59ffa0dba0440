// The coarse access stamp of snapshot reads (read_side/access_stamp.hpp)
// against idle recycling, on the deterministic scheduler: the manager
// publishes the stamp, reads record it the way object_manager's snapshot
// path does (read_side::record_read), and the recycling timer's passes on
// virtual time decide which watches stop.
//
// The contract, a knowing difference from upstream (which stores the exact
// time of every read): a snapshot read counts as a read at the last instant
// of its recycling period, so a watch never stops earlier than upstream's,
// at the same pass when max idle is a multiple of the period (the default)
// and otherwise at most one period later.
#include "podref/read_side/access_stamp.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor_cast.hpp>

#include "podref/actors/manager.hpp"
#include "podref/actors/memory_api_server.hpp"
#include "podref/read_side/read_side.hpp"
#include "support/manager_fixture.hpp"
#include "support/pod_builders.hpp"

using namespace podref;
using namespace std::chrono_literals;
using podref::test::make_secret;

namespace {

constexpr auto period = std::chrono::minutes(1);

struct fixture : podref::test::manager_fixture_base {
  fixture() {
    create(make_secret("ns", "name"));
  }

  /// A manager whose recycling timer runs every `recycle_period` (0: only
  /// passes the test sends), referencing ns/name; runs until it is synced.
  void start(caf::timespan max_idle, caf::timespan recycle_period = period) {
    auto cfg = config_for(resource::secrets);
    cfg.max_idle = max_idle;
    cfg.recycle_period = recycle_period;
    spawn_manager(std::move(cfg));
    self->send(mgr, add_ref_atom::value, std::string{"ns"},
               std::string{"name"}, std::string{"pod"});
    run();
    REQUIRE(watching());
  }

  /// What object_manager's snapshot path does for a synced read.
  void snapshot_read() {
    auto guard = rs->domain.pin();
    auto* slot = rs->find("ns", "name");
    REQUIRE(slot != nullptr);
    REQUIRE(slot->load()->synced);
    rs->record_read(*slot);
  }

  std::int64_t last_access() {
    auto guard = rs->domain.pin();
    return rs->find("ns", "name")->last_access_ns();
  }

  bool watching() {
    return rs->counters.open_watches.load() == 1;
  }
};

} // namespace

TEST_CASE_METHOD(fixture,
                 "a snapshot read records the last instant of its recycling "
                 "period, and only once per period") {
  start(std::chrono::minutes(5));
  auto t0 = now_ns();
  advance(10s);
  snapshot_read();
  CHECK(last_access() == t0 + std::chrono::nanoseconds(period).count() - 1);
  advance(40s);
  snapshot_read();
  CHECK(last_access() == t0 + std::chrono::nanoseconds(period).count() - 1);
  // The timer pass at one period opens the next one.
  advance(10s);
  snapshot_read();
  CHECK(last_access()
        == t0 + 2 * std::chrono::nanoseconds(period).count() - 1);
}

TEST_CASE_METHOD(fixture,
                 "with max idle a multiple of the period, a snapshot-read "
                 "watch stops at upstream's pass") {
  start(std::chrono::minutes(5));
  // Read 30 s in: upstream stops at the first pass more than 5 min later,
  // the one at 6 min.
  advance(30s);
  snapshot_read();
  advance(4min + 30s);
  CHECK(watching()); // the pass at 5 min: 4.5 min unread
  advance(1min);
  CHECK_FALSE(watching()); // the pass at 6 min: 5.5 min unread
}

TEST_CASE_METHOD(fixture,
                 "with another max idle, a snapshot-read watch stops at most "
                 "one period after upstream's pass, never before") {
  start(90s);
  // Read 10 s in: upstream stops at the pass at 2 min (110 s unread);
  // counted as read at 1 min - 1 ns, the watch stops at 3 min.
  advance(10s);
  snapshot_read();
  advance(1min + 50s);
  CHECK(watching());
  advance(1min);
  CHECK_FALSE(watching());
}

TEST_CASE_METHOD(fixture,
                 "a read through the actors records its exact time, even "
                 "below a snapshot read's bound") {
  start(std::chrono::minutes(5));
  advance(10s);
  snapshot_read();
  advance(10s);
  auto x = request<api_object>(mgr, get_obj_atom::value, std::string{"ns"},
                               std::string{"name"});
  REQUIRE(x);
  CHECK(last_access() == now_ns());
  // A later snapshot read in the same period raises it to the bound again.
  snapshot_read();
  CHECK(last_access() > now_ns());
}

TEST_CASE_METHOD(fixture,
                 "without a timer, a snapshot read counts as a read at the "
                 "latest pass") {
  start(std::chrono::minutes(1), caf::timespan{0});
  snapshot_read(); // counts as read at the start (never read is idle)
  advance(30s);
  self->send(mgr, recycle_atom::value);
  run();
  auto pass = now_ns();
  advance(20s);
  snapshot_read();
  CHECK(last_access() == pass);
  advance(40s);
  self->send(mgr, recycle_atom::value);
  run();
  CHECK(watching()); // exactly max idle after the pass
  advance(1ns);
  self->send(mgr, recycle_atom::value);
  run();
  CHECK_FALSE(watching());
}
