// `podref simulate --serve`: the running simulation's in-memory API server
// behind the HTTP front of `podref apiserver`, read with libcurl while the
// simulation runs (a list, a watch that sees the simulation's own updates,
// /metrics), the kubeconfig it writes, and the loopback rule.
#include "support/run_process.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <curl/curl.h>
#include <nlohmann/json.hpp>

#ifdef PODREF_CLI_PATH

using json = nlohmann::json;
using podref::test::run_process;

namespace {

unsigned short free_port() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor a{
    ioc, {boost::asio::ip::make_address("127.0.0.1"), 0}};
  return a.local_endpoint().port();
}

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

/// GET `url`: the status (0 when nothing answers) and the body.
std::pair<long, std::string> get(const std::string& url) {
  std::string body;
  auto* h = curl_easy_init();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 20000L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
  long status = 0;
  if (curl_easy_perform(h) == CURLE_OK)
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(h);
  return {status, body};
}

} // namespace

TEST_CASE("simulate --serve serves the running simulation's API server") {
  auto port = std::to_string(free_port());
  auto base = "http://127.0.0.1:" + port;
  auto kubeconfig = "/tmp/podref-simulate-serve-" + std::to_string(::getpid())
                    + ".kubeconfig";
  podref::test::process_result res;
  std::thread child{[&] {
    res = run_process({PODREF_CLI_PATH, "simulate", "--duration", "4",
                       "--readers", "1", "--serve", "127.0.0.1:" + port,
                       "--write-kubeconfig", kubeconfig},
                      {}, PODREF_SOURCE_DIR);
  }};
  // Up within the guard (the simulation loads its manifests first).
  long health = 0;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (health != 200 && std::chrono::steady_clock::now() < until) {
    health = get(base + "/healthz").first;
    if (health != 200)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto [list_status, list_body] = get(base + "/api/v1/secrets");
  std::string rv;
  std::size_t items = 0;
  if (list_status == 200) {
    auto list = json::parse(list_body);
    rv = list["metadata"]["resourceVersion"].get<std::string>();
    items = list["items"].size();
  }
  // The simulation's updater writes its objects while it runs: a watch from
  // the list's version sees them.
  auto [watch_status, events] = get(
    base + "/api/v1/secrets?watch=true&timeoutSeconds=1&resourceVersion=" + rv);
  auto metrics = get(base + "/metrics").second;
  child.join();
  std::ifstream kc_file{kubeconfig};
  std::stringstream kc;
  kc << kc_file.rdbuf();
  std::remove(kubeconfig.c_str());
  INFO(res.err);
  CHECK(health == 200);
  CHECK(list_status == 200);
  CHECK(items > 0);
  CHECK(watch_status == 200);
  CHECK(events.find("{\"type\":\"MODIFIED\"") != std::string::npos);
  CHECK(metrics.find("apiserver_request_total{code=\"200\"")
        != std::string::npos);
  CHECK(res.status == 0);
  CHECK(res.out.find("serving on " + base + "\n") != std::string::npos);
  CHECK(res.out.find("invariants: PASS") != std::string::npos);
  CHECK(kc.str().find("server: " + base) != std::string::npos);
}

TEST_CASE("simulate --serve keeps plain HTTP on loopback") {
  auto res = run_process({PODREF_CLI_PATH, "simulate", "--duration", "0.2",
                          "--serve", "0.0.0.0:0"},
                         {}, PODREF_SOURCE_DIR);
  CHECK(res.status == 1);
  CHECK(res.err.find("TLS and credentials are required beyond loopback")
        != std::string::npos);
  auto orphan = run_process({PODREF_CLI_PATH, "simulate", "--duration", "0.2",
                             "--write-kubeconfig", "/tmp/x"},
                            {}, PODREF_SOURCE_DIR);
  CHECK(orphan.status == 2);
  CHECK(orphan.err.find("need --serve") != std::string::npos);
}

#endif
