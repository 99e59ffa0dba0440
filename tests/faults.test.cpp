// Fault scenarios, each ending with the engine's invariant check
// (support/invariants.hpp): after the fault clears, every registered object
// reads as the API server's latest version within a bounded virtual time,
// reference counts equal a recomputation from the registered pods, live
// reflectors equal referenced objects, and once every pod is unregistered
// nothing is left and no actor leaked.
//
// Scenarios 1 to 5 drive a manager actor and the in-memory API server on
// the deterministic scheduler (virtual time, exact action logs); scenario 6
// and the facade's restart run on podref's runtime with real threads and
// bounded waits.
#include "podref/actors/manager.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/sec.hpp>
#include <caf/send.hpp>
#include <caf/system_messages.hpp>

#include "podref/actors/memory_api_server.hpp"
#include "podref/messages/pod_registration.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/read_side/read_side.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/runtime/typed_managers.hpp"
#include "support/deterministic_fixture.hpp"
#include "podref/testing/invariant_checker.hpp"
#include "support/pod_builders.hpp"

using namespace podref;
using namespace std::chrono_literals;
using podref::testing::invariant_checker;
using podref::test::make_secret;

namespace {

using strings = std::vector<std::string>;

const error_info unavailable{errc::unavailable, "injected"};

/// Whether CTest runs this catalogue with watch multiplexing forced on
/// (PODREF_MUX_THRESHOLD=1, tests/CMakeLists.txt): one namespace list and
/// watch then serve the reflectors of "ns" (docs/multiplexing.md).
bool multiplexed() {
  const char* k = std::getenv("PODREF_MUX_THRESHOLD");
  return k != nullptr && std::atoi(k) > 0;
}

/// What a crashed actor's monitors see (an exception in a handler).
caf::error crash_reason() {
  return caf::make_error(caf::sec::runtime_error);
}

/// Ends `hdl` with `reason`, as a crash would (anon_send_exit takes only
/// exit_reason codes).
template <class Handle>
void crash(const Handle& hdl, caf::error reason) {
  caf::anon_send(caf::actor_cast<caf::actor>(hdl),
                 caf::exit_msg{hdl.address(), std::move(reason)});
}

std::string message_of(const caf::error& err) {
  return from_caf_error(err, error_info{errc::unavailable,
                                        caf::to_string(err)})
    .message;
}

struct faults_fixture : test::deterministic_fixture {
  detail::read_side_ptr rs = std::make_shared<detail::read_side>();
  detail::engine_counters& counters = rs->counters;
  /// Survives server incarnations (a restarted API server's etcd).
  memory_api_server_store_ptr store
    = std::make_shared<memory_api_server_store>();
  std::size_t history = 1000;
  /// The current server; the manager's resolver answers this one.
  memory_api_server_actor server;
  manager_actor mgr;
  /// The registered pods, by uid, as the test tracks them.
  std::map<std::string, pod_registration_ptr> pods;
  std::unique_ptr<invariant_checker> checker;

  faults_fixture() {
    server = spawn_server();
  }

  ~faults_fixture() {
    if (mgr)
      stop(mgr);
    stop(server);
  }

  memory_api_server_actor spawn_server() {
    memory_api_server_config cfg;
    cfg.history_capacity = history;
    cfg.store = store;
    auto result = spawn_memory_api_server(sys, cfg);
    run();
    return result;
  }

  /// Starts the manager with a resolver (unless `resolver` is false) that
  /// answers the fixture's current server, and the checker; records the
  /// baseline of running actors.
  void start_manager(bool resolver = true,
                     strategy s = strategy::watch,
                     caf::timespan default_ttl = std::chrono::minutes(1)) {
    manager_config cfg;
    cfg.res = resource::secrets;
    cfg.strategy = s;
    cfg.source = caf::actor_cast<object_source_actor>(server);
    if (resolver)
      cfg.resolve_source = [this] {
        return caf::actor_cast<object_source_actor>(server);
      };
    cfg.read_side = rs;
    cfg.recycle_period = caf::timespan{0};
    cfg.default_ttl = default_ttl;
    cfg.seed = 7;
    mgr = sys.spawn(manager, std::move(cfg));
    run();
    testing::invariant_options opts;
    opts.expect_reflectors = s == strategy::watch;
    checker = std::make_unique<invariant_checker>(
      sys, caf::actor_cast<caf::actor>(mgr),
      caf::actor_cast<caf::actor>(server),
      testing::counts_of(detail::counters_of(rs)), opts);
    if (s == strategy::watch)
      checker->set_read_side(rs);
    checker->record_baseline();
  }

  // -- the API server --------------------------------------------------------

  api_object write(const std::string& name, const std::string& value) {
    auto stored = request<api_object>(server, apply_atom::value,
                                      make_secret("ns", name, {{"k", value}}));
    REQUIRE(stored);
    return *stored;
  }

  template <class... Ts>
  void hook(Ts&&... xs) {
    caf::anon_send(server, std::forward<Ts>(xs)...);
    run();
  }

  std::vector<source_action> actions() {
    auto xs = request<std::vector<source_action>>(server, actions_atom::value);
    REQUIRE(xs);
    return *xs;
  }

  /// "verb(rv)" per action, e.g. "list(0)", "watch()".
  strings action_log() {
    strings result;
    for (const auto& x : actions())
      result.push_back(std::string{to_string(x.verb)} + "(" + x.rv + ")");
    return result;
  }

  std::size_t count(source_verb verb) {
    auto xs = actions();
    return static_cast<std::size_t>(
      std::count_if(xs.begin(), xs.end(),
                    [verb](const source_action& x) { return x.verb == verb; }));
  }

  /// When the server logged each list.
  std::vector<caf::timespan> list_times() {
    auto xs = actions();
    auto ts = request<std::vector<caf::timespan>>(server, times_atom::value);
    REQUIRE(ts);
    REQUIRE(ts->size() == xs.size());
    std::vector<caf::timespan> result;
    for (std::size_t i = 0; i < xs.size(); ++i)
      if (xs[i].verb == source_verb::list)
        result.push_back((*ts)[i]);
    return result;
  }

  // -- pods and reads ----------------------------------------------------------

  void reg(const std::string& pod_name, std::vector<std::string> names) {
    auto r = make_registration("ns", pod_name, "uid-" + pod_name,
                               std::move(names));
    pods[std::string{r->uid()}] = r;
    self->send(mgr, reg_pod_atom::value, r);
    run();
  }

  void unreg(const std::string& pod_name) {
    auto i = pods.find("uid-" + pod_name);
    REQUIRE(i != pods.end());
    self->send(mgr, unreg_pod_atom::value, i->second);
    pods.erase(i);
    run();
  }

  caf::expected<api_object> read(const std::string& name) {
    return request<api_object>(mgr, get_obj_atom::value, std::string{"ns"},
                               name);
  }

  /// The reflector (or cache entry) serving `name`: it answers the
  /// manager's delegated read itself.
  caf::strong_actor_ptr object_actor(const std::string& name) {
    caf::strong_actor_ptr result;
    auto handle = self->request(mgr, caf::infinite, get_obj_atom::value,
                                std::string{"ns"}, name);
    run();
    handle.receive([&](const api_object&) { result = self->current_sender(); },
                   [&](caf::error&) { result = self->current_sender(); });
    return result;
  }

  // -- invariants --------------------------------------------------------------

  /// (a) to (c) within the checker's bound (90 s of virtual time).
  void check_invariants() {
    auto mismatches = checker->check(pods);
    INFO(testing::describe(mismatches));
    CHECK(mismatches.empty());
  }

  /// Unregisters every pod, then (d).
  void check_drained() {
    while (!pods.empty())
      unreg(std::string{pods.begin()->second->name()});
    auto mismatches = checker->drained();
    INFO(testing::describe(mismatches));
    CHECK(mismatches.empty());
  }
};

} // namespace

// -- 1. lists fail N times -----------------------------------------------------

TEST_CASE_METHOD(faults_fixture,
                 "lists failing N times are retried with jittered "
                 "exponential backoff up to the cap, then the engine "
                 "converges",
                 "[faults]") {
  constexpr std::uint32_t failures = 9;
  write("s", "v1");
  start_manager();
  hook(clear_atom::value);
  hook(fail_atom::value, source_verb::list, failures, unavailable);
  reg("p", {"s"});
  // Jump from timer to timer: each retry lands at its exact due time, and
  // the server logs the list at that virtual time.
  auto& clock = sched.clock();
  while (counters.lists.load() < failures + 1 && clock.has_pending_timeout()) {
    clock.trigger_timeout();
    run();
  }
  auto times = list_times();
  REQUIRE(times.size() == failures + 1);
  caf::timespan base = 800ms;
  const caf::timespan cap = 30s;
  bool jittered = false;
  for (std::size_t i = 1; i < times.size(); ++i) {
    auto gap = times[i] - times[i - 1];
    INFO("retry " << i << ": waited " << gap.count() << " ns, base "
                  << base.count() << " ns");
    // The base plus jitter in [0, base), never beyond the cap.
    CHECK(gap >= base);
    CHECK(gap <= std::min(2 * base, cap));
    jittered |= gap != base && gap != cap;
    base = std::min(2 * base, cap);
  }
  CHECK(jittered);
  // The last retries wait exactly the cap: the base has reached it.
  CHECK(times.back() - times[times.size() - 2] == cap);
  // Bounded retries per unit of time: at most 7 lists in the first minute
  // (0, then at least 0.8, 2.4, 5.6, 12, 24.8 and 50.4 s), and once at the
  // cap one per 30 s.
  auto first_minute = std::count_if(times.begin(), times.end(),
                                    [&](caf::timespan t) {
                                      return t - times.front() < 60s;
                                    });
  CHECK(first_minute <= 7);
  CHECK(counters.reflectors_started.load() == 1);
  CHECK(count(source_verb::watch) == 1);
  check_invariants();
  write("s", "v2");
  check_invariants();
  check_drained();
}

// -- 2. a slow initial list ----------------------------------------------------

TEST_CASE_METHOD(faults_fixture,
                 "reads during a slow initial list fail with upstream's sync "
                 "timeout while the one reflector keeps waiting",
                 "[faults]") {
  write("s", "v1");
  start_manager();
  hook(hold_atom::value, caf::timespan{5s});
  reg("p1", {"s"});
  // Later lists are answered at once; the first stays held for 5 s.
  hook(hold_atom::value, caf::timespan{0});
  for (int i = 0; i < 4; ++i) {
    auto pending = send_request<api_object>(mgr, get_obj_atom::value,
                                            std::string{"ns"},
                                            std::string{"s"});
    CHECK_FALSE(pending.ready());
    advance(999ms);
    CHECK_FALSE(pending.ready());
    advance(1ms);
    REQUIRE(pending.ready());
    auto x = pending.take();
    REQUIRE_FALSE(x);
    CHECK(message_of(x.error())
          == "failed to sync secret cache: timed out waiting for the "
             "condition");
    if (i == 1) {
      // Another pod and an idle pass meanwhile change nothing.
      reg("p2", {"s"});
      self->send(mgr, recycle_atom::value);
      run();
    }
  }
  // Neither stopped nor duplicated: one reflector, one list in flight.
  CHECK(counters.reflectors_spawned.load() == 1);
  CHECK(counters.reflectors_started.load() == 1);
  CHECK(counters.reflectors_stopped.load() == 0);
  CHECK(counters.live_reflectors.load() == 1);
  CHECK(count(source_verb::list) == 1);
  CHECK(count(source_verb::watch) == 0);
  advance(1s); // 5 s: the list lands
  auto x = read("s");
  REQUIRE(x);
  CHECK(x->meta().resource_version == "1");
  CHECK(count(source_verb::list) == 1);
  check_invariants();
  check_drained();
}

// -- 3. watches closed, history expired, a burst of events ----------------------

TEST_CASE_METHOD(faults_fixture,
                 "watches ended every k events resume from the last version "
                 "without relisting",
                 "[faults]") {
  constexpr int k = 3;
  constexpr int updates = 15;
  write("a", "v0");
  write("b", "v0");
  start_manager();
  reg("p", {"a", "b"});
  hook(close_k_atom::value, std::uint32_t{k});
  hook(clear_atom::value);
  for (int i = 1; i <= updates; ++i) {
    write("a", "v" + std::to_string(i));
    write("b", "v" + std::to_string(i));
  }
  // Each watch delivered k events and ended; each re-watch resumed from the
  // last version seen, inside the history: no list.
  CHECK(count(source_verb::list) == 0);
  CHECK(count(source_verb::watch) == 2 * (updates / k));
  check_invariants();
  check_drained();
}

TEST_CASE_METHOD(faults_fixture,
                 "a watch whose version fell out of the history relists "
                 "with the newest state",
                 "[faults]") {
  write("s", "v1");
  start_manager();
  reg("p", {"s"});
  hook(clear_atom::value);
  // In one go: the watch ends, the object changes unseen, the history is
  // dropped. The re-watch is too old; the reflector lists "" (newest).
  caf::anon_send(server, close_atom::value);
  caf::anon_send(server, apply_atom::value,
                 make_secret("ns", "s", {{"k", "v2"}}));
  caf::anon_send(server, expire_atom::value);
  run();
  auto log = action_log();
  REQUIRE(log.size() == 3);
  CHECK(log[0] == "watch()");
  CHECK(log[1] == "list()");
  CHECK(log[2] == "watch()");
  CHECK(counters.reflectors_started.load() == 1);
  check_invariants();
  check_drained();
}

TEST_CASE_METHOD(faults_fixture,
                 "a burst of 100k updates leaves every reflector standing at "
                 "the latest version",
                 "[faults][burst]") {
  constexpr int objects = 10;
  constexpr int per_object = 10'000;
  std::vector<std::string> names;
  for (int i = 0; i < objects; ++i) {
    names.push_back("s" + std::to_string(i));
    write(names.back(), "v0");
  }
  start_manager();
  reg("p1", {names.begin(), names.begin() + objects / 2});
  reg("p2", {names.begin() + objects / 2, names.end()});
  auto burst = [&] {
    for (int n = 1; n <= per_object; ++n)
      for (const auto& name : names)
        caf::anon_send(server, apply_atom::value,
                       make_secret("ns", name,
                                   {{"k", "v" + std::to_string(n)}}));
    run();
  };
  // Multiplexed, the first reflector listed per object before the second
  // reference switched the namespace, then again at the multiplexer.
  const std::uint64_t first_lists = objects + (multiplexed() ? 1 : 0);
  SECTION("every event delivered") {
    burst();
    CHECK(counters.lists.load() == first_lists);
    CHECK(counters.watches.load() == objects);
  }
  SECTION("watches ending every 997 events, resuming from versions the "
          "1000-event history has dropped") {
    // The server applies the whole burst before a reflector resumes its
    // watch, by then far outside the history: each relists.
    hook(close_k_atom::value, std::uint32_t{997});
    burst();
    if (multiplexed()) {
      // The multiplexer lists the namespace again behind the reflectors'
      // watches, which never end.
      CHECK(counters.lists.load() == first_lists);
      auto xs = actions();
      CHECK(std::count_if(xs.begin(), xs.end(), [](const source_action& x) {
              return x.verb == source_verb::list && x.name.empty();
            }) >= 2);
    } else {
      CHECK(counters.lists.load() >= 2 * objects);
    }
  }
  // Nobody fell over: the same reflectors, each at the last version.
  CHECK(counters.reflectors_started.load() == objects);
  CHECK(counters.reflectors_stopped.load() == 0);
  for (const auto& name : names) {
    auto x = read(name);
    REQUIRE(x);
    CHECK(x->as_secret()->data.at("k") == "v" + std::to_string(per_object));
  }
  check_invariants();
  check_drained();
}

// -- 4. the API server is replaced ---------------------------------------------

TEST_CASE_METHOD(faults_fixture,
                 "after the API server dies and a replacement starts over "
                 "the same store, reflectors move to it and catch up",
                 "[faults][restart]") {
  auto a1 = write("a", "v1");
  write("b", "v1");
  start_manager();
  reg("p1", {"a"});
  reg("p2", {"a", "b"});
  check_invariants();
  auto old = server;
  crash(old, make_caf_error(error_info{errc::unavailable,
                                       "the API server restarted"}));
  run();
  // The outage: the resolver still answers the dead server, the manager
  // asks again; synced objects keep serving their last state.
  advance(300ms);
  auto x = read("a");
  REQUIRE(x);
  CHECK(*x == a1);
  {
    auto pin = rs->domain.pin();
    auto* slot = rs->index.find("ns/a", detail::hash_key("ns/a"));
    REQUIRE(slot != nullptr);
    CHECK(slot->load()->synced);
  }
  CHECK(counters.reflectors_started.load() == 2);
  // The replacement: same objects and versions, writes move on before the
  // manager finds it.
  server = spawn_server();
  checker->set_server(caf::actor_cast<caf::actor>(server));
  auto a2 = write("a", "v2");
  CHECK(a2.meta().resource_version == "3");
  advance(1s); // the resolver's cap
  // Each reflector listed at the new server from the last version it saw
  // (not "0"), then watched; nothing was respawned. Multiplexed, the
  // multiplexer did so once for both.
  auto log = action_log();
  auto calls = multiplexed() ? 1 : 2;
  CHECK(std::count(log.begin(), log.end(), "list(2)") == calls);
  CHECK(std::count(log.begin(), log.end(), "watch()") == calls);
  CHECK(counters.reflectors_started.load() == 2);
  CHECK(counters.reflectors_stopped.load() == 0);
  check_invariants();
  write("b", "v2");
  check_invariants();
  check_drained();
}

TEST_CASE_METHOD(faults_fixture,
                 "a replacement already published when the old server's "
                 "death is noticed is adopted at once",
                 "[faults][restart]") {
  write("s", "v1");
  start_manager();
  reg("p", {"s"});
  auto old = server;
  crash(old, caf::make_error(caf::sec::runtime_error));
  // Spawned before the manager ran: its resolver answers the new one.
  memory_api_server_config cfg;
  cfg.store = store;
  server = spawn_memory_api_server(sys, cfg);
  run();
  checker->set_server(caf::actor_cast<caf::actor>(server));
  CHECK(count(source_verb::list) == 1);
  CHECK(count(source_verb::watch) == 1);
  write("s", "v2");
  check_invariants();
  check_drained();
}

TEST_CASE_METHOD(faults_fixture,
                 "without a resolver reflectors keep retrying the dead "
                 "server until the embedder sends new_src",
                 "[faults][restart]") {
  auto s1 = write("s", "v1");
  start_manager(false);
  reg("p", {"s"});
  crash(server, crash_reason());
  run();
  advance(60s);
  // Still serving its last state; a new object cannot sync.
  auto x = read("s");
  REQUIRE(x);
  CHECK(*x == s1);
  reg("q", {"t"});
  {
    auto pending = send_request<api_object>(mgr, get_obj_atom::value,
                                            std::string{"ns"},
                                            std::string{"t"});
    advance(1s);
    REQUIRE(pending.ready());
    auto t = pending.take();
    REQUIRE_FALSE(t);
    CHECK(from_caf_error(t.error(), unavailable).code == errc::sync_timeout);
  }
  server = spawn_server();
  checker->set_server(caf::actor_cast<caf::actor>(server));
  write("t", "v1");
  self->send(mgr, new_src_atom::value,
             caf::actor_cast<object_source_actor>(server));
  run();
  check_invariants();
  check_drained();
}

TEST_CASE_METHOD(faults_fixture,
                 "cache entries fetch from the replacement server",
                 "[faults][restart]") {
  write("s", "v1");
  start_manager(true, strategy::cache, 10s);
  reg("p", {"s"});
  auto x = read("s");
  REQUIRE(x);
  CHECK(x->as_secret()->data.at("k") == "v1");
  crash(server, crash_reason());
  run();
  server = spawn_server();
  checker->set_server(caf::actor_cast<caf::actor>(server));
  write("s", "v2");
  advance(1s);
  // The TTL ends; the next read fetches from the new server.
  check_invariants();
  CHECK(count(source_verb::get) >= 1);
  check_drained();
}

// -- 5. a reflector crashes ----------------------------------------------------

TEST_CASE_METHOD(faults_fixture,
                 "a crashed reflector is replaced by the manager and reads "
                 "recover",
                 "[faults]") {
  write("a", "v1");
  write("b", "v1");
  start_manager();
  reg("p1", {"a", "b"});
  reg("p2", {"a"});
  check_invariants();
  auto victim = object_actor("a");
  REQUIRE(victim);
  REQUIRE(victim->address() != mgr.address());
  write("a", "v2");
  caf::anon_send(caf::actor_cast<caf::actor>(victim),
                 caf::exit_msg{victim->address(), crash_reason()});
  victim = nullptr;
  run();
  CHECK(counters.reflectors_started.load() == 3);
  CHECK(counters.reflectors_stopped.load() == 1);
  write("a", "v3");
  check_invariants();
  check_drained();
}

// -- 6. shutdown with reads in flight (real threads) ---------------------------

TEST_CASE("shutdown completes every read blocked on a held list with "
          "shut_down, promptly",
          "[faults][facade]") {
  constexpr int objects = 3;
  constexpr int readers_per_object = 3;
  runtime rt;
  api_server api{rt};
  for (int i = 0; i < objects; ++i)
    REQUIRE(api.create(make_secret("default", "s" + std::to_string(i))));
  // Lists take 10 s, reads give up after 5 s: only shutdown ends them
  // earlier.
  caf::anon_send(caf::actor_cast<memory_api_server_actor>(api.actor()),
                 hold_atom::value, caf::timespan{10s});
  manager_options opts;
  opts.sync_timeout = 5s;
  secret_manager sm{rt, api, opts};
  sm.register_pod(test::pod_with_secrets("default", "pod", "uid",
                                         {"s0", "s1", "s2"}, {}));
  REQUIRE(sm.manager().sync());
  std::vector<std::future<result<secret_ptr>>> readers;
  for (int r = 0; r < readers_per_object; ++r)
    for (int i = 0; i < objects; ++i)
      readers.push_back(std::async(std::launch::async, [&sm, i] {
        return sm.get_secret("default", "s" + std::to_string(i));
      }));
  // Wait until every reader has gone to the actors (bounded).
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (sm.manager().stats().waited_reads < readers.size()
         && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  REQUIRE(sm.manager().stats().waited_reads == readers.size());
  for (auto& f : readers)
    CHECK(f.wait_for(0s) == std::future_status::timeout);
  auto shutdown_at = std::chrono::steady_clock::now();
  sm.manager().shutdown();
  for (auto& f : readers) {
    REQUIRE(f.wait_for(3s) == std::future_status::ready);
    auto s = f.get();
    REQUIRE_FALSE(s);
    CHECK(s.error().code == errc::shut_down);
  }
  CHECK(std::chrono::steady_clock::now() - shutdown_at < 3s);
}

// -- the facade's restart (real threads) -----------------------------------------

TEST_CASE("managers on an api_server follow its restart",
          "[faults][facade][restart]") {
  runtime rt;
  api_server api{rt};
  REQUIRE(api.create(make_secret("default", "s", {{"k", "v1"}})));
  secret_manager watch{rt, api};
  secret_manager get{rt, api, strategy::get};
  invariant_checker checker{rt.system(), watch.manager().actor(),
                            api.actor(), testing::counts_of(watch.manager())};
  checker.record_baseline();
  auto p = test::pod_with_secrets("default", "pod", "uid", {"s"}, {});
  watch.register_pod(p);
  REQUIRE(watch.manager().wait_quiescent(5s));
  auto old = api.actor();
  REQUIRE(api.restart());
  CHECK(api.actor() != old);
  checker.set_server(api.actor());
  // Synced: served throughout.
  auto s = watch.get_secret("default", "s");
  REQUIRE(s);
  CHECK((*s)->data.at("k") == "v1");
  auto updated = api.update(make_secret("default", "s", {{"k", "v2"}}));
  REQUIRE(updated);
  CHECK(updated->meta().resource_version == "2");
  // Get reads live from the new server.
  auto live = get.get_secret("default", "s");
  REQUIRE(live);
  CHECK((*live)->data.at("k") == "v2");
  std::vector<pod_registration_ptr> pods{
    make_registration(p, resource::secrets)};
  auto mismatches = checker.check(pods);
  INFO(testing::describe(mismatches));
  CHECK(mismatches.empty());
  auto st = watch.manager().stats();
  CHECK(st.reflectors_started == 1);
  CHECK(st.open_watches == 1);
  watch.unregister_pod(p);
  REQUIRE(watch.manager().sync());
  mismatches = checker.drained();
  INFO(testing::describe(mismatches));
  CHECK(mismatches.empty());
}

TEST_CASE("the api_server facade injects faults into its current server",
          "[faults][facade]") {
  runtime rt;
  api_server api{rt};
  REQUIRE(api.create(make_secret("ns", "a")));
  const error_info injected{errc::unavailable, "injected"};
  auto get_fails_once = [&] {
    api.fail_next(source_verb::get, 1, injected);
    auto x = api.get(resource::secrets, "ns", "a");
    REQUIRE_FALSE(x);
    CHECK(x.error() == injected);
    CHECK(api.get(resource::secrets, "ns", "a"));
  };
  get_fails_once();
  REQUIRE(api.restart());
  get_fails_once(); // the hooks follow the replacement
}
