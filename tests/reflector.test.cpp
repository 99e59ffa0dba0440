// The reflector actor against the in-memory API server, in virtual time:
// client-go's list/watch semantics (reference kubelet-manager.md 3.2), reads
// (3.5), idle recycling (3.6), stopping (3.7), immutable objects (3.8) and
// upstream's watch_based_manager_test.go cases (5.2 #3 to #5).
#include "podref/actors/reflector.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor_clock.hpp>
#include <caf/behavior.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/system_messages.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "podref/actors/memory_api_server.hpp"
#include "podref/read_side/engine_counters.hpp"
#include "podref/read_side/epoch.hpp"
#include "podref/read_side/object_slot.hpp"
#include "support/deterministic_fixture.hpp"

using namespace podref;
using namespace std::chrono_literals;

namespace {

// -- objects ------------------------------------------------------------------

api_object make_secret(const std::string& value, bool immutable = false) {
  auto x = std::make_shared<secret>();
  x->metadata.ns = "ns";
  x->metadata.name = "name";
  x->data["key"] = value;
  if (immutable)
    x->immutable = true;
  return secret_ptr{std::move(x)};
}

api_object make_config_map(const std::string& value) {
  auto x = std::make_shared<config_map>();
  x->metadata.ns = "ns";
  x->metadata.name = "name";
  x->data["key"] = value;
  return config_map_ptr{std::move(x)};
}

api_object at_version(api_object obj, std::uint64_t rv) {
  auto x = std::make_shared<secret>(*obj.as_secret());
  x->metadata.resource_version = std::to_string(rv);
  return secret_ptr{std::move(x)};
}

// -- a scripted source, for what the API server's action log cannot show ------

/// One call a reflector made, with the resourceVersion it asked for.
struct source_call {
  source_verb verb;
  std::string rv;
};

bool operator==(const source_call& x, const source_call& y) {
  return x.verb == y.verb && x.rv == y.rv;
}

std::ostream& operator<<(std::ostream& out, const source_call& x) {
  return out << to_string(x.verb) << '(' << '"' << x.rv << '"' << ')';
}

/// Shared between a test and its scripted source; only touched while the
/// deterministic scheduler is idle or from the source's own handlers.
struct script {
  std::vector<source_call> calls;
  std::vector<watch_id> cancelled;
  /// What every list answers.
  list_result list;
  watch_id next_watch = 1;
  /// Sent to the watcher ahead of the next watch reply, once.
  std::optional<watch_event> early_event;
};

using script_ptr = std::shared_ptr<script>;

object_source_actor::behavior_type
scripted_source(object_source_actor::pointer self, script_ptr sc) {
  return {
    [](caf::get_atom, resource, const std::string&, const std::string&,
       const std::string&) -> caf::result<api_object> { return api_object{}; },
    [sc](list_atom, resource, const std::string&, const std::string&,
         const std::string& rv) -> caf::result<list_result> {
      sc->calls.push_back(source_call{source_verb::list, rv});
      return sc->list;
    },
    [self, sc](watch_atom, resource, const std::string&, const std::string&,
               const std::string& rv,
               const watcher_actor& watcher) -> caf::result<watch_id> {
      sc->calls.push_back(source_call{source_verb::watch, rv});
      auto id = sc->next_watch++;
      if (sc->early_event) {
        self->send(watcher, w_event_atom::value, id, *sc->early_event);
        sc->early_event.reset();
      }
      return id;
    },
    [sc](cancel_atom, watch_id id) { sc->cancelled.push_back(id); },
  };
}

// -- the fixture --------------------------------------------------------------

/// The outcome of one read.
struct read_result {
  bool done = false;
  api_object object;
  std::optional<error_info> error;
};

struct fixture : test::deterministic_fixture {
  // Declaration order matters: the domain outlives the slot.
  detail::epoch_domain domain;
  std::shared_ptr<detail::engine_counters> counters
    = std::make_shared<detail::engine_counters>();
  memory_api_server_actor server = spawn_memory_api_server(sys);
  object_source_actor scripted;
  std::shared_ptr<detail::object_slot> slot;
  reflector_actor refl;
  /// Monitors `refl` (an actor nobody references terminates).
  caf::actor observer;

  ~fixture() {
    if (observer)
      caf::anon_send_exit(observer, caf::exit_reason::kill);
    if (refl)
      caf::anon_send_exit(refl, caf::exit_reason::kill);
    if (scripted)
      caf::anon_send_exit(scripted, caf::exit_reason::kill);
    caf::anon_send_exit(server, caf::exit_reason::kill);
    run();
  }

  /// Spawns the reflector for ns/name and runs until idle.
  void start(resource res = resource::secrets) {
    start_with(server, res);
  }

  void start_with(const object_source_actor& source,
                  resource res = resource::secrets) {
    slot = std::make_shared<detail::object_slot>(res, "ns", "name", domain);
    reflector_config cfg;
    cfg.res = res;
    cfg.source = source;
    cfg.slot = slot;
    cfg.counters = counters;
    cfg.seed = 42;
    refl = spawn_reflector_actor(sys, std::move(cfg));
    run();
  }

  script_ptr start_scripted(list_result list) {
    auto sc = std::make_shared<script>();
    sc->list = std::move(list);
    scripted = sys.spawn(scripted_source, sc);
    start_with(scripted);
    return sc;
  }

  /// What a reader sees now.
  detail::object_snapshot snapshot() {
    auto pin = domain.pin();
    return *slot->load();
  }

  static read_result to_read_result(caf::expected<api_object> x) {
    read_result result;
    if (x) {
      result.done = true;
      result.object = std::move(*x);
    } else if (x.error() != caf::sec::request_timeout) {
      result.done = true;
      result.error = from_caf_error(x.error(),
                                    error_info{errc::unavailable,
                                               caf::to_string(x.error())});
    }
    return result;
  }

  /// A get_obj through the reflector, run until idle.
  read_result read() {
    return to_read_result(request<api_object>(refl, get_obj_atom::value));
  }

  test::pending_reply<api_object> start_read() {
    return send_request<api_object>(refl, get_obj_atom::value);
  }

  template <class... Ts>
  void tell(Ts&&... xs) {
    caf::anon_send(refl, std::forward<Ts>(xs)...);
    run();
  }

  /// Writes through the API server; returns the stored object.
  template <class Atom>
  api_object write(Atom atom, const api_object& obj) {
    auto x = request<api_object>(server, atom, obj);
    REQUIRE(x);
    return std::move(*x);
  }

  void remove() {
    auto x = request<caf::ok_atom>(server, caf::delete_atom::value,
                                   resource::secrets, std::string{"ns"},
                                   std::string{"name"});
    REQUIRE(x);
  }

  template <class... Ts>
  void hook(Ts&&... xs) {
    caf::anon_send(server, std::forward<Ts>(xs)...);
    run();
  }

  /// The verbs of the API server's action log, in order.
  std::vector<std::string> verbs() {
    auto xs = request<std::vector<source_action>>(server, actions_atom::value);
    REQUIRE(xs);
    std::vector<std::string> result;
    for (auto& x : *xs)
      result.emplace_back(to_string(x.verb));
    return result;
  }

  std::size_t count(const std::string& verb) {
    auto xs = verbs();
    return static_cast<std::size_t>(std::count(xs.begin(), xs.end(), verb));
  }

  std::size_t server_watches() {
    auto n = request<std::size_t>(server, watches_atom::value);
    REQUIRE(n);
    return *n;
  }

  /// Advances virtual time in 1 ms steps until the API server has logged
  /// `n` lists; returns the time that took.
  caf::timespan advance_until_lists(std::size_t n) {
    caf::timespan elapsed{0};
    while (count("list") < n && elapsed < 60s) {
      advance(1ms);
      elapsed += 1ms;
    }
    return elapsed;
  }

  /// Records how `refl` terminates.
  std::shared_ptr<std::optional<caf::error>> monitor_reflector() {
    auto down = std::make_shared<std::optional<caf::error>>();
    observer = sys.spawn([hdl = refl, down](caf::event_based_actor* self) {
      self->monitor(hdl);
      self->set_down_handler([self, down](caf::down_msg& dm) {
        *down = dm.reason;
        self->quit();
      });
      return caf::behavior{[](caf::ok_atom) {
        // nop
      }};
    });
    run();
    return down;
  }

  void check_counters_released() {
    CHECK(counters->live_reflectors == 0);
    CHECK(counters->open_watches == 0);
    CHECK(counters->busy == 0);
    CHECK(counters->reflectors_started == 1);
    CHECK(counters->reflectors_stopped == 1);
  }
};

const error_info unavailable{errc::unavailable, "injected"};

} // namespace

// -- list and watch -----------------------------------------------------------

TEST_CASE_METHOD(fixture, "a reflector lists once and then watches once") {
  write(create_atom::value, make_secret("v1"));
  hook(clear_atom::value);
  start();
  CHECK(verbs() == std::vector<std::string>{"list", "watch"});
  auto snap = snapshot();
  CHECK(snap.synced);
  CHECK(snap.running);
  CHECK(snap.object.as_secret()->data.at("key") == "v1");
  CHECK(counters->live_reflectors == 1);
  CHECK(counters->reflectors_started == 1);
  CHECK(counters->lists == 1);
  CHECK(counters->watches == 1);
  CHECK(counters->open_watches == 1);
  CHECK(counters->busy == 0);
  CHECK(server_watches() == 1);
}

TEST_CASE_METHOD(fixture,
                 "the first list asks for version 0 and later calls resume "
                 "from the last version seen") {
  auto v100 = at_version(make_secret("v1"), 100);
  auto sc = start_scripted(list_result{{v100}, "100"});
  using calls = std::vector<source_call>;
  CHECK(sc->calls
        == calls{{source_verb::list, "0"}, {source_verb::watch, "100"}});
  CHECK(snapshot().object == v100);
  SECTION("a watch that ends normally is re-opened from the last event") {
    auto v105 = at_version(make_secret("v2"), 105);
    tell(w_event_atom::value, watch_id{1},
         watch_event{watch_event_type::modified, v105, 105});
    CHECK(snapshot().object == v105);
    tell(w_end_atom::value, watch_id{1}, caf::error{});
    CHECK(sc->calls.size() == 3);
    CHECK(sc->calls.back() == source_call{source_verb::watch, "105"});
    CHECK(counters->open_watches == 1);
    // Watch 1 is over: its late events are ignored.
    tell(w_event_atom::value, watch_id{1},
         watch_event{watch_event_type::deleted, v105, 106});
    CHECK(snapshot().object == v105);
  }
  SECTION("an expired watch relists from the newest version") {
    auto v300 = at_version(make_secret("v3"), 300);
    sc->list = list_result{{v300}, "300"};
    tell(w_end_atom::value, watch_id{1},
         make_caf_error(error_info{errc::expired, "too old"}));
    CHECK(sc->calls
          == calls{{source_verb::list, "0"},
                   {source_verb::watch, "100"},
                   {source_verb::list, ""},
                   {source_verb::watch, "300"}});
    CHECK(snapshot().object == v300);
  }
  SECTION("a restarted reflector lists from its last version") {
    tell(w_event_atom::value, watch_id{1},
         watch_event{watch_event_type::bookmark, api_object{}, 150});
    advance(1s);
    tell(idle_atom::value, caf::timespan{0});
    CHECK(sc->cancelled == std::vector<watch_id>{1});
    CHECK_FALSE(snapshot().running);
    auto v200 = at_version(make_secret("v2"), 200);
    sc->list = list_result{{v200}, "200"};
    CHECK(read().object == v200);
    CHECK(sc->calls
          == calls{{source_verb::list, "0"},
                   {source_verb::watch, "100"},
                   {source_verb::list, "150"},
                   {source_verb::watch, "200"}});
  }
}

TEST_CASE_METHOD(fixture,
                 "events that overtake the reply to their watch are applied") {
  auto sc = std::make_shared<script>();
  sc->list = list_result{{}, "100"};
  auto v150 = at_version(make_secret("v1"), 150);
  sc->early_event = watch_event{watch_event_type::added, v150, 150};
  scripted = sys.spawn(scripted_source, sc);
  start_with(scripted);
  CHECK(snapshot().object == v150);
  CHECK(counters->open_watches == 1);
}

TEST_CASE_METHOD(fixture, "watch events update the published snapshot") {
  start();
  CHECK(snapshot().synced);
  CHECK_FALSE(snapshot().object);
  auto created = write(create_atom::value, make_secret("v1"));
  CHECK(snapshot().object == created);
  auto modified = write(caf::update_atom::value, make_secret("v2"));
  CHECK(snapshot().object == modified);
  CHECK(read().object == modified);
  remove();
  auto snap = snapshot();
  CHECK_FALSE(snap.object);
  CHECK(snap.synced);
  CHECK(snap.running);
  CHECK(verbs() == std::vector<std::string>{"list", "watch"});
}

TEST_CASE_METHOD(fixture,
                 "a watch closed by the server is re-opened without a list") {
  write(create_atom::value, make_secret("v1"));
  start();
  hook(clear_atom::value);
  hook(close_atom::value);
  CHECK(verbs() == std::vector<std::string>{"watch"});
  CHECK(server_watches() == 1);
  CHECK(counters->open_watches == 1);
  auto modified = write(caf::update_atom::value, make_secret("v2"));
  CHECK(snapshot().object == modified);
}

TEST_CASE_METHOD(fixture,
                 "a watch from a compacted version relists and watches again") {
  write(create_atom::value, make_secret("v1"));
  start();
  // Another object moves the cluster's version past ours; expiring the
  // history then makes our version too old to watch from.
  auto other = std::make_shared<secret>();
  other->metadata.ns = "ns";
  other->metadata.name = "other";
  write(create_atom::value, api_object{secret_ptr{std::move(other)}});
  hook(expire_atom::value);
  hook(clear_atom::value);
  hook(close_atom::value);
  CHECK(verbs() == std::vector<std::string>{"watch", "list", "watch"});
  CHECK(snapshot().synced);
  CHECK(counters->open_watches == 1);
  CHECK(counters->busy == 0);
  auto modified = write(caf::update_atom::value, make_secret("v2"));
  CHECK(snapshot().object == modified);
}

TEST_CASE_METHOD(fixture,
                 "failed lists are retried after growing backoff delays") {
  auto stored = write(create_atom::value, make_secret("v1"));
  hook(clear_atom::value);
  hook(fail_atom::value, source_verb::list, std::uint32_t{2}, unavailable);
  start();
  CHECK(count("list") == 1);
  CHECK_FALSE(snapshot().synced);
  CHECK(snapshot().running);
  CHECK(counters->busy == 1);
  advance(799ms);
  CHECK(count("list") == 1);
  auto first = 799ms + advance_until_lists(2);
  auto second = advance_until_lists(3);
  // Base 800 ms plus jitter below the base, then the doubled base.
  CHECK(first >= 800ms);
  CHECK(first < 1600ms);
  CHECK(second >= 1600ms);
  CHECK(second < 3200ms);
  CHECK(verbs() == std::vector<std::string>{"list", "list", "list", "watch"});
  CHECK(snapshot().synced);
  CHECK(snapshot().object == stored);
  CHECK(counters->busy == 0);
  SECTION("a successful list resets the backoff") {
    hook(fail_atom::value, source_verb::watch, std::uint32_t{1}, unavailable);
    hook(close_atom::value);
    CHECK(count("watch") == 2);
    CHECK(counters->open_watches == 0);
    CHECK(counters->busy == 1);
    advance(799ms);
    CHECK(count("watch") == 2);
    caf::timespan waited = 799ms;
    while (count("watch") < 3 && waited < 60s) {
      advance(1ms);
      waited += 1ms;
    }
    CHECK(waited < 1600ms);
    CHECK(count("list") == 3);
    CHECK(counters->open_watches == 1);
    CHECK(counters->busy == 0);
  }
}

// -- reads --------------------------------------------------------------------

TEST_CASE_METHOD(fixture,
                 "a read before the first sync waits for the list to land") {
  auto stored = write(create_atom::value, make_secret("v1"));
  hook(hold_atom::value, caf::timespan{500ms});
  start();
  auto pending = start_read();
  CHECK_FALSE(pending.ready());
  advance(499ms);
  CHECK_FALSE(pending.ready());
  advance(1ms);
  REQUIRE(pending.ready());
  auto x = to_read_result(pending.take());
  CHECK_FALSE(x.error);
  CHECK(x.object == stored);
}

TEST_CASE_METHOD(fixture,
                 "a read gives up after the sync timeout while the reflector "
                 "keeps listing") {
  struct case_t {
    const char* desc;
    resource res;
    api_object obj;
    const char* text;
  };
  case_t cases[] = {
    {"secrets", resource::secrets, make_secret("v1"),
     "failed to sync secret cache: timed out waiting for the condition"},
    {"config maps", resource::config_maps, make_config_map("v1"),
     "failed to sync configmap cache: timed out waiting for the condition"},
  };
  for (auto& c : cases) {
    DYNAMIC_SECTION(c.desc) {
      auto stored = write(create_atom::value, c.obj);
      hook(hold_atom::value, caf::timespan{120s});
      start(c.res);
      auto pending = start_read();
      advance(999ms);
      CHECK_FALSE(pending.ready());
      advance(1ms);
      REQUIRE(pending.ready());
      auto x = to_read_result(pending.take());
      REQUIRE(x.error);
      CHECK(x.error->code == errc::sync_timeout);
      CHECK(x.error->message == c.text);
      CHECK(snapshot().running);
      CHECK_FALSE(snapshot().synced);
      CHECK(counters->busy == 1);
      advance(119s);
      CHECK(snapshot().synced);
      CHECK(read().object == stored);
      CHECK(count("list") == 1);
    }
  }
}

TEST_CASE_METHOD(fixture, "a missing object reads as not found") {
  start();
  auto x = read();
  REQUIRE(x.error);
  CHECK(x.error->code == errc::not_found);
  CHECK(x.error->message == "secret \"name\" not found");
  CHECK(snapshot().running);
}

// -- immutable objects --------------------------------------------------------

TEST_CASE_METHOD(fixture, "an immutable secret stops the reflector") {
  // Upstream's TestImmutableSecretStopsTheReflector.
  struct case_t {
    const char* desc;
    std::optional<bool> initial; // immutable?, or no initial object
    std::optional<bool> eventual;
  };
  case_t cases[] = {
    {"secret doesn't exist, created as mutable", std::nullopt, false},
    {"secret doesn't exist, created as immutable", std::nullopt, true},
    {"mutable secret modified to mutable", false, false},
    {"mutable secret modified to immutable", false, true},
    {"immutable secret", true, std::nullopt},
  };
  for (auto& c : cases) {
    DYNAMIC_SECTION(c.desc) {
      api_object initial;
      if (c.initial)
        initial = write(create_atom::value, make_secret("v1", *c.initial));
      start();
      auto x = read();
      if (c.initial) {
        CHECK(x.object == initial);
      } else {
        REQUIRE(x.error);
        CHECK(x.error->code == errc::not_found);
      }
      CHECK(snapshot().running == (!c.initial || !*c.initial));
      if (c.eventual) {
        auto eventual = write(apply_atom::value,
                              make_secret("v2", *c.eventual));
        CHECK(read().object == eventual);
        CHECK(snapshot().running == !*c.eventual);
      }
      // A stopped immutable object is served from the cache for good.
      if (!snapshot().running) {
        CHECK(snapshot().synced);
        auto lists = count("list");
        CHECK(read().object);
        CHECK(count("list") == lists);
        CHECK(counters->open_watches == 0);
        CHECK(server_watches() == 0);
      }
    }
  }
}

TEST_CASE_METHOD(fixture,
                 "a snapshot read of an immutable object stops the watch") {
  SECTION("immutable") {
    write(create_atom::value, make_secret("v1", true));
    start();
    tell(immut_atom::value);
    CHECK_FALSE(snapshot().running);
    CHECK(snapshot().synced);
    CHECK(counters->open_watches == 0);
  }
  SECTION("mutable") {
    write(create_atom::value, make_secret("v1"));
    start();
    tell(immut_atom::value);
    CHECK(snapshot().running);
    CHECK(counters->open_watches == 1);
  }
}

// -- idle recycling -----------------------------------------------------------

TEST_CASE_METHOD(fixture, "a reflector not read for too long stops watching") {
  // Upstream's TestMaxIdleTimeStopsTheReflector, with idle_chk(60s) for
  // startRecycleIdleWatch.
  auto stored = write(create_atom::value, make_secret("v1"));
  start();
  CHECK(read().object == stored);
  CHECK(snapshot().running);
  advance(90s);
  tell(idle_atom::value, caf::timespan{60s});
  CHECK_FALSE(snapshot().running);
  CHECK_FALSE(snapshot().synced);
  CHECK(counters->open_watches == 0);
  CHECK(server_watches() == 0);
  // A read restarts the reflector and waits for a fresh list.
  CHECK(read().object == stored);
  CHECK(snapshot().running);
  for (int i = 0; i < 3; ++i) {
    advance(20s);
    CHECK(read().object == stored);
  }
  tell(idle_atom::value, caf::timespan{60s});
  CHECK(snapshot().running);
  CHECK(verbs() == std::vector<std::string>{"list", "watch", "list", "watch"});
}

TEST_CASE_METHOD(fixture,
                 "a reflector is idle only when unread for strictly longer "
                 "than the limit") {
  write(create_atom::value, make_secret("v1"));
  start();
  read();
  advance(60s);
  tell(idle_atom::value, caf::timespan{60s});
  CHECK(snapshot().running);
  SECTION("one more nanosecond makes it idle") {
    advance(1ns);
    tell(idle_atom::value, caf::timespan{60s});
    CHECK_FALSE(snapshot().running);
  }
  SECTION("snapshot reads recorded on the slot count as reads") {
    auto now = sys.clock().now().time_since_epoch();
    slot->touch(std::chrono::duration_cast<std::chrono::nanoseconds>(now)
                  .count());
    advance(1ns);
    tell(idle_atom::value, caf::timespan{60s});
    CHECK(snapshot().running);
  }
}

TEST_CASE_METHOD(fixture, "a slow first list does not stop the reflector") {
  // Upstream's TestReflectorNotStoppedOnSlowInitialization.
  auto stored = write(create_atom::value, make_secret("v1"));
  hook(hold_atom::value, caf::timespan{120s});
  start();
  advance(90s);
  tell(idle_atom::value, caf::timespan{60s});
  CHECK(snapshot().running);
  CHECK_FALSE(snapshot().synced);
  auto pending = start_read();
  advance(1s);
  REQUIRE(pending.ready());
  auto x = to_read_result(pending.take());
  REQUIRE(x.error);
  CHECK(x.error->message.find("failed to sync") == 0);
  advance(29s);
  CHECK(snapshot().synced);
  tell(idle_atom::value, caf::timespan{60s});
  CHECK(snapshot().running);
  CHECK(read().object == stored);
  CHECK(count("list") == 1);
}

// -- source replacement -------------------------------------------------------

namespace {

/// A second API server with ns/name at version 3 ("b3").
struct second_server {
  memory_api_server_actor hdl;
  api_object stored;
};

second_server spawn_second(fixture& f) {
  second_server result;
  result.hdl = spawn_memory_api_server(f.sys);
  f.run();
  for (auto value : {"b1", "b2", "b3"}) {
    auto x = f.request<api_object>(result.hdl, apply_atom::value,
                                   make_secret(value));
    REQUIRE(x);
    result.stored = *x;
  }
  return result;
}

} // namespace

TEST_CASE_METHOD(fixture,
                 "new_src moves a watching reflector: its watch is cancelled "
                 "at the old source and it lists at the new one from its "
                 "last version") {
  write(create_atom::value, make_secret("v1"));
  start();
  auto b = spawn_second(*this);
  tell(new_src_atom::value, caf::actor_cast<object_source_actor>(b.hdl));
  CHECK(server_watches() == 0);
  auto acts = request<std::vector<source_action>>(b.hdl, actions_atom::value);
  REQUIRE(acts);
  REQUIRE(acts->size() == 2);
  CHECK((*acts)[0].verb == source_verb::list);
  CHECK((*acts)[0].rv == "1");
  CHECK((*acts)[1].verb == source_verb::watch);
  CHECK(snapshot().synced);
  CHECK(snapshot().object == b.stored);
  CHECK(counters->open_watches == 1);
  CHECK(counters->busy == 0);
  CHECK(counters->reflectors_started == 1);
  auto b4 = request<api_object>(b.hdl, caf::update_atom::value,
                                make_secret("b4"));
  REQUIRE(b4);
  CHECK(snapshot().object == *b4);
  // The old source no longer reaches the reflector.
  write(caf::update_atom::value, make_secret("v2"));
  CHECK(snapshot().object == *b4);
  stop(b.hdl);
}

TEST_CASE_METHOD(fixture,
                 "replies and events of a source the reflector has left are "
                 "ignored") {
  SECTION("a list held at the old source") {
    hook(hold_atom::value, caf::timespan{10s});
    start();
    auto pending = start_read();
    CHECK_FALSE(pending.ready());
    auto b = spawn_second(*this);
    tell(new_src_atom::value, caf::actor_cast<object_source_actor>(b.hdl));
    // The parked read is served by the list at the new source.
    REQUIRE(pending.ready());
    auto x = to_read_result(pending.take());
    CHECK(x.object == b.stored);
    write(create_atom::value, make_secret("v1"));
    advance(10s); // the old list lands late
    CHECK(snapshot().object == b.stored);
    CHECK(counters->lists == 2);
    CHECK(counters->open_watches == 1);
    CHECK(counters->busy == 0);
    stop(b.hdl);
  }
  SECTION("an event from another actor with the current watch's id") {
    write(create_atom::value, make_secret("v1"));
    start();
    auto b = spawn_second(*this);
    tell(new_src_atom::value, caf::actor_cast<object_source_actor>(b.hdl));
    REQUIRE(snapshot().object == b.stored);
    // Both servers numbered their watch 1; the old one is not the source.
    auto stale = write(caf::update_atom::value, make_secret("v2"));
    sys.spawn([dest = refl, stale](caf::event_based_actor* self) {
      self->send(dest, w_event_atom::value, watch_id{1},
                 watch_event{watch_event_type::modified, stale, 2});
    });
    run();
    CHECK(snapshot().object == b.stored);
    stop(b.hdl);
  }
}

TEST_CASE_METHOD(fixture,
                 "a reflector stopped for idleness restarts at its new "
                 "source on the next read") {
  write(create_atom::value, make_secret("v1"));
  start();
  read();
  advance(90s);
  tell(idle_atom::value, caf::timespan{60s});
  REQUIRE_FALSE(snapshot().running);
  auto b = spawn_second(*this);
  tell(new_src_atom::value, caf::actor_cast<object_source_actor>(b.hdl));
  auto acts = request<std::vector<source_action>>(b.hdl, actions_atom::value);
  REQUIRE(acts);
  CHECK(acts->empty());
  CHECK(read().object == b.stored);
  CHECK(snapshot().running);
  CHECK(counters->open_watches == 1);
  stop(b.hdl);
}

// -- stopping -----------------------------------------------------------------

TEST_CASE_METHOD(fixture,
                 "r_stop fails waiting reads as not registered and quits") {
  hook(hold_atom::value, caf::timespan{120s});
  start();
  auto down = monitor_reflector();
  auto pending = start_read();
  CHECK_FALSE(pending.ready());
  const auto* before = slot->load();
  tell(r_stop_atom::value);
  REQUIRE(pending.ready());
  auto x = to_read_result(pending.take());
  REQUIRE(x.error);
  CHECK(x.error->code == errc::not_registered);
  CHECK(x.error->message == "object \"ns\"/\"name\" not registered");
  REQUIRE(down->has_value());
  CHECK_FALSE(**down);
  // Nothing published (the manager unindexed the slot before the stop):
  // the slot still holds the unsynced snapshot of the list in flight.
  CHECK(slot->load() == before);
  CHECK(snapshot().running);
  CHECK_FALSE(snapshot().synced);
  check_counters_released();
  // The held list lands on a dead reflector: nothing changes.
  advance(120s);
  check_counters_released();
}

TEST_CASE_METHOD(fixture, "r_stop cancels the open watch") {
  write(create_atom::value, make_secret("v1"));
  start();
  auto down = monitor_reflector();
  CHECK(server_watches() == 1);
  const auto* before = slot->load();
  tell(r_stop_atom::value);
  CHECK(down->has_value());
  CHECK(server_watches() == 0);
  CHECK(slot->load() == before); // nothing published
  CHECK(snapshot().synced);
  CHECK(snapshot().object);
  check_counters_released();
}

TEST_CASE_METHOD(fixture, "a killed reflector releases what it held") {
  SECTION("an open watch") {
    write(create_atom::value, make_secret("v1"));
    start();
    CHECK(counters->open_watches == 1);
    caf::anon_send_exit(refl, caf::exit_reason::kill);
    run();
    CHECK(server_watches() == 0);
    CHECK_FALSE(snapshot().synced);
    check_counters_released();
  }
  SECTION("a list in flight and a waiting read") {
    hook(hold_atom::value, caf::timespan{120s});
    start();
    auto pending = start_read();
    CHECK(counters->busy == 1);
    caf::anon_send_exit(refl, caf::exit_reason::kill);
    run();
    REQUIRE(pending.ready());
    CHECK_FALSE(pending.take());
    check_counters_released();
  }
}

// -- reuse (reflector_pool) ---------------------------------------------------

namespace {

api_object make_other(const std::string& value) {
  auto x = std::make_shared<secret>();
  x->metadata.ns = "ns";
  x->metadata.name = "other";
  x->data["key"] = value;
  return secret_ptr{std::move(x)};
}

/// A fixture whose reflector is parked and reused for ns/other.
struct reuse_fixture : fixture {
  std::shared_ptr<detail::object_slot> other;

  /// Parks the reflector and activates it again for ns/other, as the
  /// manager does (both messages queued before either is handled).
  void reuse_for_other(bool run_now = true) {
    other = std::make_shared<detail::object_slot>(resource::secrets, "ns",
                                                  "other", domain);
    auto hdl = caf::actor_cast<caf::actor>(refl);
    caf::anon_send(hdl, r_park_atom::value);
    caf::anon_send(hdl, r_reuse_atom::value,
                   reflector_activation{other, server, 7});
    if (run_now)
      run();
  }

  /// Parks the reflector (outside its typed interface, as the manager).
  void park() {
    caf::anon_send(caf::actor_cast<caf::actor>(refl), r_park_atom::value);
    run();
  }

  detail::object_snapshot other_snapshot() {
    auto pin = domain.pin();
    return *other->load();
  }
};

} // namespace

TEST_CASE_METHOD(reuse_fixture,
                 "a parked reflector stops counting and forgets its object") {
  write(create_atom::value, make_secret("v1"));
  start();
  CHECK(server_watches() == 1);
  const auto* before = slot->load();
  park();
  CHECK(server_watches() == 0);
  CHECK(slot->load() == before); // nothing published
  CHECK(snapshot().object);
  check_counters_released();
  // Still alive: a read finds it, but as gone.
  auto x = read();
  REQUIRE(x.done);
  CHECK_FALSE(x.object);
}

TEST_CASE_METHOD(reuse_fixture,
                 "a reused reflector ignores its previous object's late list "
                 "reply") {
  write(create_atom::value, make_secret("v1"));
  write(create_atom::value, make_other("o1"));
  // Only the first list is held: the reuse syncs first, then the old
  // object's list reply arrives.
  hook(hold_atom::value, caf::timespan{10s});
  start();
  CHECK(count("list") == 1);
  hook(hold_atom::value, caf::timespan{0});
  reuse_for_other();
  CHECK(count("list") == 2);
  CHECK(counters->live_reflectors == 1);
  CHECK(counters->reflectors_started == 2);
  CHECK(counters->reflectors_stopped == 1);
  REQUIRE(other_snapshot().synced);
  advance(10s);
  auto snap = other_snapshot();
  REQUIRE(snap.synced);
  REQUIRE(snap.object);
  CHECK(snap.object.meta().name == "other");
  CHECK_FALSE(snapshot().synced); // the old slot is left alone
  CHECK(count("watch") == 1);     // the old reply opened no watch
  CHECK(counters->busy == 0);
  CHECK(counters->open_watches == 1);
  CHECK(server_watches() == 1);
  auto x = read();
  REQUIRE(x.done);
  REQUIRE(x.object);
  CHECK(x.object.meta().name == "other");
}

TEST_CASE_METHOD(reuse_fixture,
                 "a reused reflector ignores its previous object's watch "
                 "events") {
  write(create_atom::value, make_secret("v1"));
  write(create_atom::value, make_other("o1"));
  start();
  CHECK(server_watches() == 1);
  // The park and the reuse are queued; an update of the old object reaches
  // the server before it sees the cancel, so its event reaches the reused
  // reflector.
  reuse_for_other(false);
  caf::anon_send(server, caf::update_atom::value, make_secret("v2"));
  run();
  auto snap = other_snapshot();
  REQUIRE(snap.synced);
  REQUIRE(snap.object);
  CHECK(snap.object.as_secret()->data.at("key") == "o1");
  // An event of the old watch (id 1) arriving while the new one (id 2) is
  // open, e.g. delayed in a busy mailbox: ignored.
  caf::anon_send(caf::actor_cast<watcher_actor>(refl), w_event_atom::value,
                 watch_id{1},
                 watch_event{watch_event_type::modified, make_secret("v9"),
                             100});
  caf::anon_send(caf::actor_cast<watcher_actor>(refl), w_end_atom::value,
                 watch_id{1}, caf::error{});
  run();
  snap = other_snapshot();
  REQUIRE(snap.object);
  CHECK(snap.object.meta().name == "other");
  CHECK(snap.object.as_secret()->data.at("key") == "o1");
  CHECK(count("watch") == 2); // the old end started no new watch
  // Later writes of the old object do not reach it; the new one's do.
  write(caf::update_atom::value, make_secret("v3"));
  write(caf::update_atom::value, make_other("o2"));
  snap = other_snapshot();
  REQUIRE(snap.object);
  CHECK(snap.object.meta().name == "other");
  CHECK(snap.object.as_secret()->data.at("key") == "o2");
  CHECK(server_watches() == 1);
  CHECK(counters->open_watches == 1);
  CHECK(counters->busy == 0);
}

TEST_CASE_METHOD(reuse_fixture,
                 "a reflector parked right after its reuse never lists") {
  write(create_atom::value, make_secret("v1"));
  write(create_atom::value, make_other("o1"));
  start();
  hook(clear_atom::value);
  reuse_for_other(false);
  park();
  CHECK(count("list") == 0);
  CHECK(server_watches() == 0);
  CHECK(counters->live_reflectors == 0);
  CHECK(counters->reflectors_started == 2);
  CHECK(counters->reflectors_stopped == 2);
  CHECK(counters->busy == 0);
  CHECK_FALSE(other_snapshot().running);
}
