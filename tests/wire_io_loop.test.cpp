// One io_loop driving many http_clients (wire/io_loop.hpp): each client
// keeps its own connection, every request and watch of every client runs
// on the one thread, and destroying half of the clients while their
// watches are open leaves the others (and a client made afterwards)
// working; a client whose last owner lets go in its own handler is freed
// by the loop after the callback.
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

namespace {

/// A server holding default/s1, a loop, and client options on that loop.
struct loop_fixture {
  podref::test::http_test_server srv;
  std::shared_ptr<wire::io_loop> loop;
  wire::client_config cfg;
  wire::http_client_options opts;

  loop_fixture() {
    REQUIRE(srv.api.create(podref::test::make_secret("default", "s1")));
    auto started = wire::io_loop::start();
    REQUIRE(started);
    loop = std::move(started).value();
    cfg.server = "http://127.0.0.1:" + std::to_string(srv.port());
    cfg.origin = "test";
    opts.loop = loop;
  }
};

} // namespace

TEST_CASE("many clients share one I/O loop, each on its own connection") {
  loop_fixture f;
  auto& loop = f.loop;
  auto& cfg = f.cfg;
  auto& opts = f.opts;
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

TEST_CASE("a client released in its own handler is detached and freed by "
          "the loop, not deadlocked on it") {
  // As a node agent whose last reference a DELETE's reply held.
  loop_fixture f;
  auto& loop = f.loop;
  auto& cfg = f.cfg;
  auto& opts = f.opts;
  auto made = wire::http_client::start(cfg, opts);
  REQUIRE(made);
  auto client = std::shared_ptr<wire::http_client>{std::move(made).value()};
  REQUIRE(loop->clients() == 1);
  auto status = std::make_shared<std::atomic<int>>(0);
  auto released = std::make_shared<std::atomic<bool>>(false);
  wire::http_client::handlers h;
  h.on_done = [keep = client, status, released](wire::http_response r) mutable {
    // Bounded: the test thread lets go right after the request.
    eventually([&] { return released->load(); });
    keep.reset(); // the last owner, on the loop's thread
    *status = r.status;
  };
  client->get("/api/v1/namespaces/default/secrets/s1", std::move(h));
  client.reset();
  *released = true;
  REQUIRE(eventually([&] { return status->load() == 200; }));
  // The handler returned, so the loop went on to free the client.
  CHECK(eventually([&] { return loop->clients() == 0; }));
  // And it serves a client made afterwards.
  auto late = wire::http_client::start(cfg, opts);
  REQUIRE(late);
  auto r = wire::call_and_wait(**late, "GET",
                               "/api/v1/namespaces/default/secrets/s1", {},
                               "application/json", std::chrono::seconds(20));
  CHECK(r.status == 200);
}
