// What the wire tests' cases share: a bounded wait on a real condition
// (support/eventually.hpp), Watch options for loaded machines, a Secret's value of key "k" as text,
// and the API server's actions of one object. Header-only.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "podref/runtime/api_server.hpp"
#include "podref/runtime/typed_managers.hpp"

#include "support/eventually.hpp"

namespace podref::test {

/// Watch, with reads waiting up to 10 s for a first sync rather than
/// upstream's 1 s (a loaded sanitizer build may take longer than that),
/// and a short first backoff so that retries come within a test's time.
inline manager_options watching() {
  manager_options o;
  o.strategy = strategy::watch;
  o.sync_timeout = std::chrono::seconds(10);
  o.backoff_initial = std::chrono::milliseconds(20);
  o.backoff_cap = std::chrono::milliseconds(200);
  return o;
}

/// The value of key "k" of ns/name, or "error: " and the read's error.
inline std::string value_of(secret_manager& mgr, const std::string& name,
                            const std::string& ns = "default") {
  auto got = mgr.get_secret(ns, name);
  if (!got)
    return "error: " + got.error().message;
  auto i = (*got)->data.find("k");
  return i == (*got)->data.end() ? "" : i->second;
}

/// The gets, lists and watches the API server answered for `name`.
inline source_action_counts actions_of(api_server& api,
                                       const std::string& name) {
  source_action_counts out;
  auto log = api.actions();
  REQUIRE(log);
  for (const auto& a : *log)
    if (a.name == name)
      out.add(a.verb);
  return out;
}

} // namespace podref::test
