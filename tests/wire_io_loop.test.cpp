// One io_loop driving many http_clients (wire/io_loop.hpp): each client
// keeps its own connection, every request and watch of every client runs
// on the one thread, and destroying half of the clients while their
// watches are open leaves the others (and a client made afterwards)
// working.
#include "podref/wire/http_call.hpp"
#include "podref/wire/http_client.hpp"
#include "podref/wire/io_loop.hpp"

#include "support/eventually.hpp"
#include "support/http_test_client.hpp"
#include "support/pod_builders.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace podref;
using podref::test::eventually;

TEST_CASE("many clients share one I/O loop, each on its own connection") {
  podref::test::http_test_server srv;
  REQUIRE(srv.api.create(podref::test::make_secret("default", "s1")));
  auto started = wire::io_loop::start();
  REQUIRE(started);
  auto loop = std::move(started).value();
  wire::client_config cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(srv.port());
  cfg.origin = "test";
  wire::http_client_options opts;
  opts.loop = loop;
  opts.plain_http = wire::plain_http_mode::h2_prior_knowledge;
  constexpr int n = 40;
  std::vector<std::unique_ptr<wire::http_client>> clients;
  auto events = std::make_shared<std::atomic<int>>(0);
  for (int i = 0; i < n; ++i) {
    auto c = wire::http_client::start(cfg, opts);
    REQUIRE(c);
    clients.push_back(std::move(c).value());
    wire::http_client::handlers h;
    h.on_stream = [events](std::string_view chunk) {
      if (chunk.find("ADDED") != std::string_view::npos)
        ++*events;
      return true;
    };
    clients.back()->get(
      "/api/v1/namespaces/default/secrets?watch=true&resourceVersion=0",
      std::move(h));
  }
  CHECK(loop->clients() == n);
  REQUIRE(eventually([&] { return events->load() == n; }));
  for (auto& c : clients) {
    CHECK(c->stats().open_streams == 1);
    CHECK(c->stats().connects == 1); // its own, not a shared one
  }
  // Half of them go while their watches are open.
  clients.resize(n / 2);
  CHECK(loop->clients() == n / 2);
  for (auto& c : clients) {
    auto r = wire::call_and_wait(*c, "GET",
                                 "/api/v1/namespaces/default/secrets/s1", {},
                                 "application/json", std::chrono::seconds(20));
    CHECK(r.status == 200);
    CHECK(c->stats().connects == 1); // the watch's connection, reused
  }
  auto made = wire::http_client::start(cfg, opts);
  REQUIRE(made);
  auto late = std::move(made).value();
  auto r = wire::call_and_wait(*late, "GET",
                               "/api/v1/namespaces/default/secrets/s1", {},
                               "application/json", std::chrono::seconds(20));
  CHECK(r.status == 200);
  clients.clear();
  late.reset();
  CHECK(loop->clients() == 0);
}
