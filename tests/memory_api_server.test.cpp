// The in-memory API server: versions, events, watch resumption, the action
// log and the fault hooks the reflector tests rely on (after client-go's
// fake clientset and fake watch), all on the deterministic scheduler.
#include "podref/actors/memory_api_server.hpp"
#include "podref/manifest/objects_of.hpp"

#include "support/memory_api_fixture.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

using namespace podref;
using namespace std::chrono_literals;

using namespace podref::test;

// -- writes -------------------------------------------------------------------

TEST_CASE_METHOD(fixture, "every write raises the cluster resourceVersion by "
                          "one and stores a stamped copy") {
  auto input = make_secret("ns", "a");
  auto created = create(input);
  REQUIRE(created);
  CHECK(created->meta().resource_version == "1");
  CHECK(input.meta().resource_version.empty()); // the input stays untouched
  CHECK(value_of(*created) == "v");
  auto updated = update(make_secret("ns", "a", "v2"));
  REQUIRE(updated);
  CHECK(updated->meta().resource_version == "2");
  CHECK(value_of(*updated) == "v2");
  auto applied = apply(make_config_map("ns", "a"));
  REQUIRE(applied);
  CHECK(applied->kind() == config_maps);
  CHECK(applied->meta().resource_version == "3");
  auto reapplied = apply(make_config_map("ns", "a", "v3"));
  REQUIRE(reapplied);
  CHECK(reapplied->meta().resource_version == "4");
  CHECK(remove(config_maps, "ns", "a"));
  auto listed = list(secrets, "ns", "a");
  REQUIRE(listed);
  CHECK(listed->resource_version == "5");
  auto got = get(secrets, "ns", "a");
  REQUIRE(got);
  CHECK(*got == *updated);
}

TEST_CASE_METHOD(fixture, "each write sends its event type to the watcher "
                          "with the new resourceVersion") {
  auto log = std::make_shared<watch_log>();
  auto id = watch(secrets, "ns", "a", "0", spawn_watcher(log));
  REQUIRE(id);
  REQUIRE(create(make_secret("ns", "a")));
  REQUIRE(update(make_secret("ns", "a", "v2")));
  REQUIRE(apply(make_secret("ns", "a", "v3")));
  REQUIRE(remove(secrets, "ns", "a"));
  REQUIRE(apply(make_secret("ns", "a", "v4")));
  using t = watch_event_type;
  CHECK(log->types()
        == std::vector<t>{t::added, t::modified, t::modified, t::deleted,
                          t::added});
  CHECK(log->versions() == std::vector<std::uint64_t>{1, 2, 3, 4, 5});
  REQUIRE(log->events.size() == 5);
  for (const auto& x : log->events) {
    CHECK(x.id == *id);
    CHECK(x.event.object.resource_version() == x.event.resource_version);
  }
  // DELETED carries the last state at the version of the deletion.
  CHECK(value_of(log->events[3].event.object) == "v3");
  CHECK(log->events[3].event.object.meta().resource_version == "4");
  CHECK(log->ends.empty());
}

TEST_CASE_METHOD(fixture, "create fails for an existing object, update and "
                          "delete fail for a missing one") {
  REQUIRE(create(make_secret("ns", "a")));
  auto again = create(make_secret("ns", "a"));
  REQUIRE_FALSE(again);
  CHECK(info_of(again.error()).message == "secrets \"a\" already exists");
  auto missing = update(make_config_map("ns", "x"));
  REQUIRE_FALSE(missing);
  CHECK(info_of(missing.error())
        == error_info{errc::not_found, "configmaps \"x\" not found"});
  auto gone = remove(secrets, "ns", "x");
  REQUIRE_FALSE(gone);
  CHECK(info_of(gone.error())
        == error_info{errc::not_found, "secrets \"x\" not found"});
  auto unnamed = apply(make_secret("ns", ""));
  REQUIRE_FALSE(unnamed);
  CHECK(info_of(unnamed.error()).code == errc::invalid_argument);
  auto empty = create(api_object{});
  REQUIRE_FALSE(empty);
  CHECK(info_of(empty.error()).code == errc::invalid_argument);
  // Failed writes take no version.
  auto listed = list(secrets, "ns", "a");
  REQUIRE(listed);
  CHECK(listed->resource_version == "1");
}

// -- reads --------------------------------------------------------------------

TEST_CASE_METHOD(fixture, "get answers the object or a not-found error "
                          "naming the plural resource") {
  REQUIRE(create(make_secret("ns", "a")));
  auto found = get(secrets, "ns", "a");
  REQUIRE(found);
  CHECK(found->meta().name == "a");
  auto secret_missing = get(secrets, "ns", "x");
  REQUIRE_FALSE(secret_missing);
  CHECK(info_of(secret_missing.error())
        == error_info{errc::not_found, "secrets \"x\" not found"});
  auto config_map_missing = get(config_maps, "ns", "x");
  REQUIRE_FALSE(config_map_missing);
  CHECK(info_of(config_map_missing.error())
        == error_info{errc::not_found, "configmaps \"x\" not found"});
  // Same name, other resource: not found either.
  CHECK_FALSE(get(config_maps, "ns", "a"));
}

TEST_CASE_METHOD(fixture, "list by name answers the matching object and the "
                          "cluster resourceVersion") {
  REQUIRE(create(make_secret("ns", "a")));
  REQUIRE(create(make_secret("ns", "b")));
  REQUIRE(create(make_config_map("ns", "a")));
  auto a = list(secrets, "ns", "a");
  REQUIRE(a);
  REQUIRE(a->items.size() == 1);
  CHECK(a->items[0].meta().name == "a");
  CHECK(a->items[0].kind() == secrets);
  CHECK(a->items[0].meta().resource_version == "1");
  CHECK(a->resource_version == "3");
  // The requested version does not change the answer.
  auto old = list(secrets, "ns", "a", "1");
  REQUIRE(old);
  CHECK(old->items.size() == 1);
  CHECK(old->resource_version == "3");
  auto none = list(secrets, "ns", "x");
  REQUIRE(none);
  CHECK(none->items.empty());
  CHECK(none->resource_version == "3");
}

TEST_CASE_METHOD(fixture, "namespaces are isolated and an empty namespace "
                          "means default") {
  auto stored = create(make_secret("", "a", "in-default"));
  REQUIRE(stored);
  CHECK(stored->meta().ns == "default");
  REQUIRE(create(make_secret("other", "a", "in-other")));
  auto in_default = get(secrets, "default", "a");
  REQUIRE(in_default);
  CHECK(value_of(*in_default) == "in-default");
  auto in_empty = get(secrets, "", "a");
  REQUIRE(in_empty);
  CHECK(value_of(*in_empty) == "in-default");
  auto in_other = get(secrets, "other", "a");
  REQUIRE(in_other);
  CHECK(value_of(*in_other) == "in-other");
  CHECK_FALSE(get(secrets, "third", "a"));
  auto log = std::make_shared<watch_log>();
  REQUIRE(watch(secrets, "other", "a", "0", spawn_watcher(log)));
  REQUIRE(update(make_secret("default", "a", "changed")));
  REQUIRE(remove(secrets, "default", "a"));
  REQUIRE(log->events.size() == 1); // only the initial ADDED
  CHECK(value_of(log->events[0].event.object) == "in-other");
  auto other_list = list(secrets, "other", "a");
  REQUIRE(other_list);
  CHECK(other_list->items.size() == 1);
}

// -- watches ------------------------------------------------------------------

TEST_CASE_METHOD(fixture, "watch events go only to the watchers of the "
                          "changed object") {
  auto log_a = std::make_shared<watch_log>();
  auto log_b = std::make_shared<watch_log>();
  auto id_a = watch(secrets, "ns", "a", "0", spawn_watcher(log_a));
  auto id_b = watch(secrets, "ns", "b", "0", spawn_watcher(log_b));
  REQUIRE(id_a);
  REQUIRE(id_b);
  CHECK(*id_a != *id_b);
  REQUIRE(create(make_secret("ns", "a")));
  REQUIRE(create(make_secret("ns", "b")));
  REQUIRE(update(make_secret("ns", "a", "v2")));
  REQUIRE(create(make_config_map("ns", "a"))); // other resource, same name
  CHECK(log_a->versions() == std::vector<std::uint64_t>{1, 3});
  CHECK(log_b->versions() == std::vector<std::uint64_t>{2});
  for (const auto& x : log_a->events) {
    CHECK(x.id == *id_a);
    CHECK(x.event.object.meta().name == "a");
    CHECK(x.event.object.kind() == secrets);
  }
  CHECK(log_b->events.at(0).id == *id_b);
  CHECK(watches() == 2);
}

TEST_CASE_METHOD(fixture, "a watch from version 0 starts with ADDED for the "
                          "current object") {
  REQUIRE(create(make_secret("ns", "a")));
  REQUIRE(update(make_secret("ns", "a", "v2")));
  REQUIRE(create(make_secret("ns", "b")));
  auto log = std::make_shared<watch_log>();
  auto watcher = spawn_watcher(log);
  REQUIRE(watch(secrets, "ns", "a", "0", watcher));
  REQUIRE(log->events.size() == 1);
  CHECK(log->events[0].event.type == watch_event_type::added);
  CHECK(log->events[0].event.resource_version == 2);
  CHECK(value_of(log->events[0].event.object) == "v2");
  // "" starts now as well; a missing object sends nothing until created.
  auto empty_log = std::make_shared<watch_log>();
  REQUIRE(watch(secrets, "ns", "c", "", spawn_watcher(empty_log)));
  CHECK(empty_log->events.empty());
  REQUIRE(create(make_secret("ns", "c")));
  CHECK(empty_log->versions() == std::vector<std::uint64_t>{4});
  CHECK(log->events.size() == 1);
}

TEST_CASE_METHOD(fixture, "a watch resumed from an old resourceVersion "
                          "replays exactly the missed events") {
  REQUIRE(create(make_secret("ns", "a")));          // 1
  REQUIRE(update(make_secret("ns", "a", "v2")));    // 2
  REQUIRE(create(make_secret("ns", "b")));          // 3
  REQUIRE(update(make_secret("ns", "a", "v3")));    // 4
  REQUIRE(remove(secrets, "ns", "a"));              // 5
  REQUIRE(update(make_secret("ns", "b", "v2")));    // 6
  auto log = std::make_shared<watch_log>();
  REQUIRE(watch(secrets, "ns", "a", "2", spawn_watcher(log)));
  using t = watch_event_type;
  CHECK(log->versions() == std::vector<std::uint64_t>{4, 5});
  CHECK(log->types() == std::vector<t>{t::modified, t::deleted});
  // Live events follow the replay.
  REQUIRE(create(make_secret("ns", "a"))); // 7
  CHECK(log->versions() == std::vector<std::uint64_t>{4, 5, 7});
  // Resuming from the newest version replays nothing.
  auto current = std::make_shared<watch_log>();
  REQUIRE(watch(secrets, "ns", "a", "7", spawn_watcher(current)));
  CHECK(current->events.empty());
}

TEST_CASE_METHOD(fixture, "a requester that watches itself gets the watch id "
                          "before the first event") {
  REQUIRE(create(make_secret("ns", "a")));
  auto order = std::make_shared<std::vector<std::string>>();
  auto watcher = sys.spawn(self_watcher, server, order);
  run();
  CHECK(*order == std::vector<std::string>{"id", "event"});
  caf::anon_send_exit(watcher, caf::exit_reason::user_shutdown);
  run();
}

TEST_CASE_METHOD(small_history_fixture, "a watch from a version that fell "
                                        "out of the history fails with "
                                        "expired") {
  for (int i = 1; i <= 5; ++i) // versions 1..5; the history keeps 3..5
    REQUIRE(apply(make_secret("ns", "a", "v" + std::to_string(i))));
  auto log = std::make_shared<watch_log>();
  auto watcher = spawn_watcher(log);
  auto too_old = watch(secrets, "ns", "a", "1", watcher);
  REQUIRE_FALSE(too_old);
  CHECK(info_of(too_old.error())
        == error_info{errc::expired, "too old resource version: 1 (2)"});
  auto oldest = watch(secrets, "ns", "a", "2", watcher);
  REQUIRE(oldest);
  CHECK(log->versions() == std::vector<std::uint64_t>{3, 4, 5});
  auto bad = watch(secrets, "ns", "a", "abc", watcher);
  REQUIRE_FALSE(bad);
  CHECK(info_of(bad.error()).code == errc::invalid_argument);
  CHECK(watches() == 1);
}

TEST_CASE_METHOD(fixture, "expire() makes every older version expired") {
  REQUIRE(create(make_secret("ns", "a")));
  REQUIRE(update(make_secret("ns", "a", "v2")));
  tell(expire_atom::value);
  auto log = std::make_shared<watch_log>();
  auto watcher = spawn_watcher(log);
  auto expired = watch(secrets, "ns", "a", "1", watcher);
  REQUIRE_FALSE(expired);
  CHECK(info_of(expired.error())
        == error_info{errc::expired, "too old resource version: 1 (2)"});
  CHECK(watch(secrets, "ns", "a", "2", watcher));
  CHECK(log->events.empty());
  CHECK(watch(secrets, "ns", "a", "0", watcher));
  CHECK(log->versions() == std::vector<std::uint64_t>{2});
  REQUIRE(update(make_secret("ns", "a", "v3")));
  CHECK(log->versions() == std::vector<std::uint64_t>{2, 3, 3});
}

TEST_CASE_METHOD(fixture, "cancel drops a watch without a w_end") {
  auto log = std::make_shared<watch_log>();
  auto watcher = spawn_watcher(log);
  auto id = watch(secrets, "ns", "a", "0", watcher);
  REQUIRE(id);
  REQUIRE(watch(secrets, "ns", "b", "0", watcher));
  CHECK(watches() == 2);
  tell(cancel_atom::value, *id);
  tell(cancel_atom::value, watch_id{999}); // unknown ids are ignored
  CHECK(watches() == 1);
  REQUIRE(create(make_secret("ns", "a")));
  CHECK(log->events.empty());
  CHECK(log->ends.empty());
}

TEST_CASE_METHOD(fixture, "close_w() ends every watch with an empty error") {
  auto log = std::make_shared<watch_log>();
  auto watcher = spawn_watcher(log);
  auto a = watch(secrets, "ns", "a", "0", watcher);
  auto b = watch(config_maps, "ns", "b", "0", watcher);
  REQUIRE(a);
  REQUIRE(b);
  tell(close_atom::value);
  REQUIRE(log->ends.size() == 2);
  CHECK(log->ends[0].id == *a);
  CHECK(log->ends[1].id == *b);
  for (const auto& x : log->ends)
    CHECK_FALSE(x.err);
  CHECK(watches() == 0);
  REQUIRE(create(make_secret("ns", "a")));
  CHECK(log->events.empty());
}

TEST_CASE_METHOD(fixture, "bookmark() sends the current resourceVersion to "
                          "every open watch") {
  auto log_a = std::make_shared<watch_log>();
  auto log_b = std::make_shared<watch_log>();
  REQUIRE(watch(secrets, "ns", "a", "0", spawn_watcher(log_a)));
  REQUIRE(watch(secrets, "ns", "b", "0", spawn_watcher(log_b)));
  REQUIRE(create(make_secret("ns", "a")));
  REQUIRE(create(make_config_map("ns", "c")));
  tell(bookmark_atom::value);
  REQUIRE(log_a->events.size() == 2);
  CHECK(log_a->events[1].event.type == watch_event_type::bookmark);
  CHECK(log_a->events[1].event.resource_version == 2);
  CHECK_FALSE(log_a->events[1].event.object);
  REQUIRE(log_b->events.size() == 1);
  CHECK(log_b->events[0].event.type == watch_event_type::bookmark);
  CHECK(log_b->events[0].event.resource_version == 2);
}

TEST_CASE_METHOD(fixture, "a dead watcher's watches are dropped") {
  auto log_a = std::make_shared<watch_log>();
  auto log_b = std::make_shared<watch_log>();
  auto doomed = spawn_watcher(log_a);
  auto survivor = spawn_watcher(log_b);
  REQUIRE(watch(secrets, "ns", "a", "0", doomed));
  REQUIRE(watch(secrets, "ns", "b", "0", doomed));
  REQUIRE(watch(secrets, "ns", "a", "0", survivor));
  CHECK(watches() == 3);
  caf::anon_send_exit(doomed, caf::exit_reason::user_shutdown);
  run();
  CHECK(watches() == 1);
  REQUIRE(create(make_secret("ns", "a")));
  CHECK(log_a->events.empty());
  CHECK(log_b->versions() == std::vector<std::uint64_t>{1});
}

namespace {

/// The server's state, read between runs of the deterministic scheduler
/// (the server is idle then).
const memory_api_server_state& state_of(const memory_api_server_actor& hdl) {
  using impl = caf::stateful_actor<memory_api_server_state,
                                   memory_api_server_actor::base>;
  auto* self = dynamic_cast<impl*>(caf::actor_cast<caf::abstract_actor*>(hdl));
  REQUIRE(self != nullptr);
  return self->state;
}

/// Empty entries of the fan-out index, counted.
std::size_t empty_entries(const memory_api_server_state& st) {
  std::size_t n = 0;
  for (const auto& kvp : st.watches_by_key)
    n += kvp.second.empty() ? 1 : 0;
  return n;
}

/// A fixture that opens watches on the secrets ns/s0, ns/s1, ...
struct numbered_fixture : fixture {
  /// Watches ns/s0 .. ns/s<n-1> from version 0; their ids.
  std::vector<watch_id> watch_numbered(int n, const watcher_actor& watcher) {
    std::vector<watch_id> ids;
    for (int i = 0; i < n; ++i) {
      auto id = watch(secrets, "ns", "s" + std::to_string(i), "0", watcher);
      REQUIRE(id);
      ids.push_back(*id);
    }
    return ids;
  }
};

} // namespace

TEST_CASE_METHOD(fixture, "a watcher that keeps re-watching is listed with "
                          "a bounded number of ids and dropped at its end") {
  auto log = std::make_shared<watch_log>();
  auto watcher = spawn_watcher(log);
  auto addr = watcher.address();
  for (int i = 0; i < 1000; ++i) {
    auto id = watch(secrets, "ns", "a", "0", watcher);
    REQUIRE(id);
    tell(cancel_atom::value, *id);
  }
  auto last = watch(secrets, "ns", "a", "0", watcher);
  REQUIRE(last);
  CHECK(watches() == 1);
  {
    const auto& st = state_of(server);
    REQUIRE(st.watchers.count(addr) == 1);
    // Cancels leave their ids; the list sheds them as it grows.
    CHECK(st.watchers.at(addr).ids.size() <= 4);
    CHECK(st.watchers.at(addr).ids.back() == *last);
  }
  // Still monitored after 1000 cancels: its end drops its open watch.
  caf::anon_send_exit(watcher, caf::exit_reason::user_shutdown);
  run();
  CHECK(watches() == 0);
  CHECK(state_of(server).watchers.count(addr) == 0);
}

TEST_CASE_METHOD(numbered_fixture, "a watcher with many open watches that "
                                   "keeps replacing a few is listed with at "
                                   "most twice as many ids") {
  auto log = std::make_shared<watch_log>();
  auto watcher = spawn_watcher(log);
  constexpr int open = 1000;
  auto live = watch_numbered(open, watcher);
  for (int i = 0; i < 5000; ++i) {
    auto k = static_cast<std::size_t>(i % open);
    tell(cancel_atom::value, live[k]);
    auto id = watch(secrets, "ns", "s" + std::to_string(k), "0", watcher);
    REQUIRE(id);
    live[k] = *id;
  }
  CHECK(watches() == open);
  const auto& entry = state_of(server).watchers.at(watcher.address());
  const auto& ids = entry.ids;
  CHECK(ids.size() <= 2 * open + 4);
  // Amortised: the prunes examined a few ids per watch opened, not the
  // whole list every few opens.
  CHECK(entry.pruned_over <= 3 * (open + 5000));
  for (auto id : live) // every open watch is still listed
    CHECK(std::find(ids.begin(), ids.end(), id) != ids.end());
}

TEST_CASE_METHOD(numbered_fixture, "cancelled watches leave a bounded number "
                                   "of empty index entries and fan-out stays "
                                   "exact") {
  auto log = std::make_shared<watch_log>();
  auto watcher = spawn_watcher(log);
  constexpr int n = 5000;
  auto ids = watch_numbered(n, watcher);
  auto kept = watch(secrets, "ns", "kept", "0", watcher);
  REQUIRE(kept);
  for (auto id : ids)
    tell(cancel_atom::value, id);
  CHECK(watches() == 1);
  {
    const auto& st = state_of(server);
    CHECK(st.empty_watch_keys == empty_entries(st));
    // Swept whenever the empty ones pass half of the entries (and 1024).
    CHECK(st.empty_watch_keys <= 1024);
    CHECK(st.watches_by_key.size() <= 1025);
  }
  // An emptied entry watched again, a swept one, and the kept one all get
  // exactly their own events.
  auto again = watch(secrets, "ns", "s" + std::to_string(n - 1), "0", watcher);
  auto swept = watch(secrets, "ns", "s0", "0", watcher);
  REQUIRE(again);
  REQUIRE(swept);
  CHECK(state_of(server).empty_watch_keys
        == empty_entries(state_of(server)));
  REQUIRE(create(make_secret("ns", "s" + std::to_string(n - 1))));
  REQUIRE(create(make_secret("ns", "s0")));
  REQUIRE(create(make_secret("ns", "kept")));
  REQUIRE(create(make_secret("ns", "s1")));
  std::vector<watch_id> got;
  for (const auto& x : log->events)
    got.push_back(x.id);
  CHECK(got == std::vector<watch_id>{*again, *swept, *kept});
}

// -- action log and faults ----------------------------------------------------

TEST_CASE_METHOD(fixture, "the action log records get, list and watch with "
                          "namespace, name and the resourceVersion asked "
                          "for, and clear() empties it") {
  auto log = std::make_shared<watch_log>();
  REQUIRE(create(make_secret("ns1", "a")));
  REQUIRE(update(make_secret("ns1", "a", "v2")));
  REQUIRE(get(secrets, "ns1", "a"));
  CHECK_FALSE(get(config_maps, "ns2", "b")); // failed calls count too
  REQUIRE(get(secrets, "ns1", "a", "0"));
  REQUIRE(list(secrets, "ns1", "a"));
  REQUIRE(watch(config_maps, "ns3", "c", "0", spawn_watcher(log)));
  REQUIRE(remove(secrets, "ns1", "a"));
  auto expected = std::vector<source_action>{
    {source_verb::get, secrets, "ns1", "a", ""},
    {source_verb::get, config_maps, "ns2", "b", ""},
    {source_verb::get, secrets, "ns1", "a", "0"},
    {source_verb::list, secrets, "ns1", "a", "0"},
    {source_verb::watch, config_maps, "ns3", "c", ""},
  };
  CHECK(actions() == expected);
  tell(clear_atom::value);
  CHECK(actions().empty());
  REQUIRE(get(secrets, "ns1", "x").error()); // not found, still recorded
  CHECK(actions().size() == 1);
}

TEST_CASE_METHOD(small_log_fixture, "a full action log drops its older half") {
  for (int i = 0; i < 4; ++i)
    CHECK_FALSE(get(secrets, "ns", "o" + std::to_string(i)));
  CHECK(actions().size() == 4);
  CHECK_FALSE(get(secrets, "ns", "o4"));
  auto xs = actions();
  REQUIRE(xs.size() == 3);
  CHECK(xs.front().name == "o2");
  CHECK(xs.back().name == "o4");
}

TEST_CASE_METHOD(fixture, "fail(list, 2, err) fails exactly two lists, then "
                          "lists succeed") {
  REQUIRE(create(make_secret("ns", "a")));
  auto err = error_info{errc::unavailable, "injected"};
  tell(fail_atom::value, source_verb::list, std::uint32_t{2}, err);
  for (int i = 0; i < 2; ++i) {
    auto failed = list(secrets, "ns", "a");
    REQUIRE_FALSE(failed);
    CHECK(info_of(failed.error()) == err);
  }
  auto ok = list(secrets, "ns", "a");
  REQUIRE(ok);
  CHECK(ok->items.size() == 1);
  CHECK(get(secrets, "ns", "a")); // other verbs were never affected
  CHECK(actions().size() == 4);   // the failed lists count
}

TEST_CASE_METHOD(fixture, "fail() affects only its verb and fail(verb, 0) "
                          "clears it") {
  auto err = error_info{errc::unavailable, "down"};
  tell(fail_atom::value, source_verb::watch, std::uint32_t{5}, err);
  tell(fail_atom::value, source_verb::get, std::uint32_t{1}, err);
  auto log = std::make_shared<watch_log>();
  auto watcher = spawn_watcher(log);
  auto failed = watch(secrets, "ns", "a", "0", watcher);
  REQUIRE_FALSE(failed);
  CHECK(info_of(failed.error()) == err);
  CHECK(watches() == 0);
  tell(fail_atom::value, source_verb::watch, std::uint32_t{0}, err);
  CHECK(watch(secrets, "ns", "a", "0", watcher));
  CHECK(list(secrets, "ns", "a"));
  auto get_failed = get(secrets, "ns", "a");
  REQUIRE_FALSE(get_failed);
  CHECK(info_of(get_failed.error()) == err);
}

TEST_CASE_METHOD(fixture, "hold(120s) keeps a list unanswered until virtual "
                          "time advances 120 s") {
  REQUIRE(create(make_secret("ns", "a")));
  tell(hold_atom::value, caf::timespan{120s});
  auto held = send_request<list_result>(server, list_atom::value, secrets,
                                        std::string{"ns"}, std::string{"a"},
                                        std::string{"0"});
  CHECK_FALSE(held.ready());
  CHECK(actions().size() == 1); // recorded on arrival
  // Other calls are not held; the answer shows the state at release time.
  REQUIRE(update(make_secret("ns", "a", "v2")));
  advance(90s);
  CHECK_FALSE(held.ready());
  advance(30s);
  REQUIRE(held.ready());
  auto answer = held.take();
  REQUIRE(answer);
  REQUIRE(answer->items.size() == 1);
  CHECK(value_of(answer->items[0]) == "v2");
  CHECK(answer->resource_version == "2");
  // hold(0) answers at once again.
  tell(hold_atom::value, caf::timespan{0});
  CHECK(list(secrets, "ns", "a"));
}

TEST_CASE_METHOD(fixture, "a held list that was made to fail fails at "
                          "release") {
  tell(hold_atom::value, caf::timespan{10s});
  auto err = error_info{errc::unavailable, "slow and broken"};
  tell(fail_atom::value, source_verb::list, std::uint32_t{1}, err);
  auto held = send_request<list_result>(server, list_atom::value, secrets,
                                        std::string{"ns"}, std::string{"a"},
                                        std::string{""});
  CHECK_FALSE(held.ready());
  advance(10s);
  auto answer = held.take();
  REQUIRE_FALSE(answer);
  CHECK(info_of(answer.error()) == err);
}

TEST_CASE_METHOD(fixture, "close_k(k) ends each watch normally after its "
                          "k-th event") {
  REQUIRE(create(make_secret("ns", "a"))); // 1
  tell(close_k_atom::value, std::uint32_t{2});
  auto log = std::make_shared<watch_log>();
  auto watcher = spawn_watcher(log);
  auto live = watch(secrets, "ns", "a", "1", watcher);
  REQUIRE(live);
  REQUIRE(update(make_secret("ns", "a", "v2"))); // 2
  CHECK(log->ends.empty());
  REQUIRE(update(make_secret("ns", "a", "v3"))); // 3
  REQUIRE(log->ends.size() == 1);
  CHECK(log->ends[0].id == *live);
  CHECK_FALSE(log->ends[0].err);
  CHECK(watches() == 0);
  REQUIRE(update(make_secret("ns", "a", "v4"))); // 4: nobody watches
  CHECK(log->versions() == std::vector<std::uint64_t>{2, 3});
  SECTION("a replay stops at the k-th event; the rest waits for the next "
          "watch") {
    auto replay = watch(secrets, "ns", "a", "1", watcher);
    REQUIRE(replay);
    CHECK(log->versions() == std::vector<std::uint64_t>{2, 3, 2, 3});
    REQUIRE(log->ends.size() == 2);
    CHECK(log->ends[1].id == *replay);
    CHECK(watches() == 0);
    REQUIRE(watch(secrets, "ns", "a", "3", watcher));
    CHECK(log->versions() == std::vector<std::uint64_t>{2, 3, 2, 3, 4});
    CHECK(watches() == 1);
  }
  SECTION("close_k(0) turns it off") {
    tell(close_k_atom::value, std::uint32_t{0});
    REQUIRE(watch(secrets, "ns", "a", "4", watcher));
    for (int i = 5; i <= 8; ++i)
      REQUIRE(update(make_secret("ns", "a", "v" + std::to_string(i))));
    CHECK(log->versions().size() == 6);
    CHECK(log->ends.size() == 1);
    CHECK(watches() == 1);
  }
}

TEST_CASE_METHOD(fixture, "act_times() tells when each action of the log "
                          "was recorded, in virtual time") {
  auto log = std::make_shared<watch_log>();
  REQUIRE(list(secrets, "ns", "a"));
  advance(5s);
  CHECK_FALSE(get(secrets, "ns", "a"));
  advance(2s);
  REQUIRE(watch(secrets, "ns", "a", "0", spawn_watcher(log)));
  auto times = request<std::vector<caf::timespan>>(server, times_atom::value);
  REQUIRE(times);
  REQUIRE(times->size() == actions().size());
  REQUIRE(times->size() == 3);
  CHECK((*times)[1] - (*times)[0] == 5s);
  CHECK((*times)[2] - (*times)[1] == 2s);
  tell(clear_atom::value);
  times = request<std::vector<caf::timespan>>(server, times_atom::value);
  REQUIRE(times);
  CHECK(times->empty());
}

TEST_CASE_METHOD(fixture, "peek() answers the stored object or not found "
                          "without recording an action") {
  auto stored = create(make_secret("ns", "a"));
  REQUIRE(stored);
  auto x = request<api_object>(server, peek_atom::value, secrets,
                               std::string{"ns"}, std::string{"a"});
  REQUIRE(x);
  CHECK(*x == *stored);
  auto missing = request<api_object>(server, peek_atom::value, config_maps,
                                     std::string{"ns"}, std::string{"a"});
  REQUIRE_FALSE(missing);
  CHECK(info_of(missing.error())
        == error_info{errc::not_found, "configmaps \"a\" not found"});
  CHECK(actions().empty());
}

// -- restarts -----------------------------------------------------------------

TEST_CASE_METHOD(podref::test::deterministic_fixture,
                 "a server spawned over a dead server's store serves its "
                 "objects and versions, with a history that starts afresh") {
  memory_api_server_config cfg;
  cfg.store = std::make_shared<memory_api_server_store>();
  auto first = spawn_memory_api_server(sys, cfg);
  run();
  REQUIRE(request<api_object>(first, create_atom::value,
                              make_secret("ns", "a", "v1"))); // 1
  REQUIRE(request<api_object>(first, create_atom::value,
                              make_secret("ns", "b", "v1"))); // 2
  REQUIRE(request<api_object>(first, caf::update_atom::value,
                              make_secret("ns", "a", "v2"))); // 3
  auto log = std::make_shared<watch_log>();
  auto watcher = sys.spawn(recorder, log);
  run();
  REQUIRE(request<watch_id>(first, watch_atom::value, secrets,
                            std::string{"ns"}, std::string{"a"},
                            std::string{"3"}, watcher));
  stop(first);
  // The old server's watch ended with its exit.
  REQUIRE(log->ends.size() == 1);
  CHECK(info_of(log->ends[0].err).code == errc::shut_down);
  auto second = spawn_memory_api_server(sys, cfg);
  run();
  auto a = request<api_object>(second, caf::get_atom::value, secrets,
                               std::string{"ns"}, std::string{"a"},
                               std::string{});
  REQUIRE(a);
  CHECK(value_of(*a) == "v2");
  CHECK(a->meta().resource_version == "3");
  auto listed = request<list_result>(second, list_atom::value, secrets,
                                     std::string{"ns"}, std::string{"b"},
                                     std::string{"0"});
  REQUIRE(listed);
  CHECK(listed->resource_version == "3");
  auto c = request<api_object>(second, create_atom::value,
                               make_secret("ns", "c"));
  REQUIRE(c);
  CHECK(c->meta().resource_version == "4");
  // Versions before the restart are no longer in any history.
  auto expired = request<watch_id>(second, watch_atom::value, secrets,
                                   std::string{"ns"}, std::string{"a"},
                                   std::string{"2"}, watcher);
  REQUIRE_FALSE(expired);
  CHECK(info_of(expired.error()).code == errc::expired);
  REQUIRE(request<watch_id>(second, watch_atom::value, secrets,
                            std::string{"ns"}, std::string{"c"},
                            std::string{"3"}, watcher));
  CHECK(log->versions() == std::vector<std::uint64_t>{4});
  // The action log is the new server's own.
  auto acts = request<std::vector<source_action>>(second, actions_atom::value);
  REQUIRE(acts);
  CHECK(acts->size() == 4);
  stop(second);
  stop(watcher);
}

// -- lifetime -----------------------------------------------------------------

TEST_CASE_METHOD(fixture, "an exiting server ends open watches and held "
                          "lists with shut_down") {
  auto log = std::make_shared<watch_log>();
  auto id = watch(secrets, "ns", "a", "0", spawn_watcher(log));
  REQUIRE(id);
  tell(hold_atom::value, caf::timespan{60s});
  auto held = send_request<list_result>(server, list_atom::value, secrets,
                                        std::string{"ns"}, std::string{"a"},
                                        std::string{"0"});
  stop(server);
  REQUIRE(log->ends.size() == 1);
  CHECK(log->ends[0].id == *id);
  CHECK(info_of(log->ends[0].err).code == errc::shut_down);
  REQUIRE(held.ready());
  auto answer = held.take();
  REQUIRE_FALSE(answer);
  CHECK(info_of(answer.error()).code == errc::shut_down);
  advance(60s); // the pending release finds nobody
}

// -- embedding helpers --------------------------------------------------------

TEST_CASE("objects_of extracts the Secrets and ConfigMaps of decoded "
          "manifests in order") {
  manifest_result decoded;
  decoded.objects.push_back({0, "Secret", make_secret("ns", "s").as_secret()});
  decoded.objects.push_back({1, "Pod", std::make_shared<const pod>()});
  decoded.objects.push_back(
    {2, "ConfigMap", make_config_map("ns", "c").as_config_map()});
  decoded.objects.push_back({3, "Node", std::make_shared<const node>()});
  decoded.objects.push_back({4, "Secret", secret_ptr{}});
  auto xs = objects_of(decoded);
  REQUIRE(xs.size() == 2);
  CHECK(xs[0].kind() == secrets);
  CHECK(xs[0].meta().name == "s");
  CHECK(xs[1].kind() == config_maps);
  CHECK(xs[1].meta().name == "c");
  manifest_result failed;
  failed.errors = {"x.yaml: document 0: broken"};
  CHECK(objects_of(failed).empty());
  CHECK(objects_of(std::vector<manifest_result>{decoded, failed, decoded})
          .size()
        == 4);
}

TEST_CASE("load_objects stores objects in a running server and reports the "
          "first failure") {
  caf::actor_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", 1);
  caf::actor_system sys{cfg};
  auto server = spawn_memory_api_server(sys);
  auto stored = load_objects(
    sys, server,
    {make_secret("ns", "a"), make_config_map("ns", "b"),
     make_secret("ns", "a", "v2")});
  REQUIRE(stored);
  CHECK(*stored == 3);
  auto failed = load_objects(sys, server,
                             {make_secret("ns", "c"), make_secret("ns", "")});
  REQUIRE_FALSE(failed);
  CHECK(failed.error().code == errc::invalid_argument);
  caf::scoped_actor self{sys};
  self
    ->request(server, caf::infinite, list_atom::value, secrets,
              std::string{"ns"}, std::string{"a"}, std::string{"0"})
    .receive(
      [](const list_result& x) {
        REQUIRE(x.items.size() == 1);
        CHECK(value_of(x.items[0]) == "v2");
        CHECK(x.resource_version == "4"); // a, b, a again, c
      },
      [](caf::error& err) { FAIL(caf::to_string(err)); });
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
}
