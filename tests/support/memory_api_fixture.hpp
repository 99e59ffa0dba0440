// What the in-memory API server's tests share: object builders, a recording
// watcher and a fixture that talks to one server on the deterministic
// scheduler (tests/memory_api_*.test.cpp).
#pragma once

#include "podref/actors/memory_api_server.hpp"

#include "support/deterministic_fixture.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor_cast.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace podref::test {


// -- objects ------------------------------------------------------------------

inline api_object make_secret(const std::string& ns, const std::string& name,
                       const std::string& value = "v") {
  auto x = std::make_shared<secret>();
  x->metadata.ns = ns;
  x->metadata.name = name;
  x->type = "Opaque";
  x->data["key"] = value;
  return api_object{secret_ptr{std::move(x)}};
}

inline api_object make_config_map(const std::string& ns, const std::string& name,
                           const std::string& value = "v") {
  auto x = std::make_shared<config_map>();
  x->metadata.ns = ns;
  x->metadata.name = name;
  x->data["key"] = value;
  return api_object{config_map_ptr{std::move(x)}};
}

inline std::string value_of(const api_object& x) {
  if (auto s = x.as_secret())
    return s->data.at("key");
  return x.as_config_map()->data.at("key");
}

inline error_info info_of(const caf::error& err) {
  return from_caf_error(err, error_info{errc::unavailable, "not podref's"});
}

// -- watchers -----------------------------------------------------------------

/// What a recording watcher received, in order.
struct watch_log {
  struct event_record {
    watch_id id;
    watch_event event;
  };
  struct end_record {
    watch_id id;
    caf::error err;
  };
  std::vector<event_record> events;
  std::vector<end_record> ends;

  std::vector<std::uint64_t> versions() const {
    std::vector<std::uint64_t> result;
    for (const auto& x : events)
      result.push_back(x.event.resource_version);
    return result;
  }

  std::vector<watch_event_type> types() const {
    std::vector<watch_event_type> result;
    for (const auto& x : events)
      result.push_back(x.event.type);
    return result;
  }
};

// Writes from the test scheduler's single thread only.
inline watcher_actor::behavior_type recorder(watcher_actor::pointer,
                                      std::shared_ptr<watch_log> log) {
  return {
    [log](w_event_atom, watch_id id, const watch_event& ev) {
      log->events.push_back(watch_log::event_record{id, ev});
    },
    [log](w_end_atom, watch_id id, const caf::error& err) {
      log->ends.push_back(watch_log::end_record{id, err});
    },
  };
}

/// Watches ns/a of `server` with itself as the watcher and logs whether the
/// reply ("id") or an event ("event") came first.
inline watcher_actor::behavior_type
self_watcher(watcher_actor::pointer self, memory_api_server_actor server,
             std::shared_ptr<std::vector<std::string>> order) {
  self
    ->request(server, caf::infinite, watch_atom::value, resource::secrets,
              std::string{"ns"}, std::string{"a"}, std::string{"0"},
              caf::actor_cast<watcher_actor>(self))
    .then([order](watch_id) { order->push_back("id"); },
          [order](caf::error&) { order->push_back("error"); });
  return {
    [order](w_event_atom, watch_id, const watch_event&) {
      order->push_back("event");
    },
    [order](w_end_atom, watch_id, const caf::error&) {
      order->push_back("end");
    },
  };
}

// -- fixture ------------------------------------------------------------------

struct fixture : podref::test::deterministic_fixture {
  memory_api_server_actor server;

  explicit fixture(memory_api_server_config config = {}) {
    server = spawn_memory_api_server(sys, config);
    run();
  }

  ~fixture() {
    stop(server);
  }

  caf::expected<api_object> create(const api_object& x) {
    return request<api_object>(server, create_atom::value, x);
  }

  caf::expected<api_object> update(const api_object& x) {
    return request<api_object>(server, caf::update_atom::value, x);
  }

  caf::expected<api_object> apply(const api_object& x) {
    return request<api_object>(server, apply_atom::value, x);
  }

  caf::expected<caf::ok_atom> remove(resource res, const std::string& ns,
                                     const std::string& name) {
    return request<caf::ok_atom>(server, caf::delete_atom::value, res, ns,
                                 name);
  }

  caf::expected<api_object> get(resource res, const std::string& ns,
                                const std::string& name,
                                const std::string& rv = "") {
    return request<api_object>(server, caf::get_atom::value, res, ns, name,
                               rv);
  }

  caf::expected<list_result> list(resource res, const std::string& ns,
                                  const std::string& name,
                                  const std::string& rv = "0") {
    return request<list_result>(server, list_atom::value, res, ns, name, rv);
  }

  watcher_actor spawn_watcher(std::shared_ptr<watch_log> log) {
    auto result = sys.spawn(recorder, std::move(log));
    run();
    return result;
  }

  caf::expected<watch_id> watch(resource res, const std::string& ns,
                                const std::string& name,
                                const std::string& from,
                                const watcher_actor& watcher) {
    return request<watch_id>(server, watch_atom::value, res, ns, name, from,
                             watcher);
  }

  std::size_t watches() {
    auto n = request<std::size_t>(server, watches_atom::value);
    REQUIRE(n);
    return *n;
  }

  std::vector<source_action> actions() {
    auto xs = request<std::vector<source_action>>(server, actions_atom::value);
    REQUIRE(xs);
    return *xs;
  }

  template <class... Ts>
  void tell(Ts&&... xs) {
    caf::anon_send(server, std::forward<Ts>(xs)...);
    run();
  }
};

struct small_history_fixture : fixture {
  small_history_fixture() : fixture(memory_api_server_config{3, nullptr}) {
    // nop
  }
};

struct small_log_fixture : fixture {
  small_log_fixture() : fixture(memory_api_server_config{1000, nullptr, 4}) {
    // nop
  }
};

inline constexpr auto secrets = resource::secrets;
inline constexpr auto config_maps = resource::config_maps;

} // namespace podref::test
