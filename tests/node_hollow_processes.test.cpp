// `podref hollow` across processes: one `podref apiserver` and three
// `podref hollow` processes on loopback (one per node client, one sharing
// its connections, one over HTTP/1.1), each creating and updating its pods
// and objects. Every process exits 0 with every node converged, and the
// API server stops cleanly on SIGTERM. Every wait is bounded: the children
// are killed past their limits, the kubeconfig is waited for with a
// deadline.
#include "support/run_process.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

using podref::test::process_result;
using podref::test::run_limits;
using podref::test::run_process;

namespace {

bool exists(const std::string& path) {
  std::ifstream f{path};
  return f.good();
}

} // namespace

TEST_CASE("hollow processes against one podref apiserver converge and exit "
          "cleanly") {
  auto kubeconfig = std::string{"/tmp/podref-hollow-procs-"}
                    + std::to_string(::getpid()) + ".kubeconfig";
  std::remove(kubeconfig.c_str());
  std::atomic<int> server_pid{0};
  process_result server;
  std::thread server_thread{[&] {
    run_limits limits;
    limits.limit = std::chrono::seconds(90);
    limits.started = [&](int pid) { server_pid = pid; };
    server = run_process({PODREF_CLI_PATH, "apiserver", "--listen",
                          "127.0.0.1:0", "--write-kubeconfig", kubeconfig},
                         limits);
  }};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!exists(kubeconfig) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  bool serving = exists(kubeconfig);

  struct hollow_run {
    std::vector<std::string> extra;
    process_result result;
  };
  std::vector<hollow_run> runs{{{"--node-prefix", "a-", "--h2c"}, {}},
                               {{"--node-prefix", "b-", "--h2c",
                                 "--share-connections"},
                                {}},
                               {{"--node-prefix", "c-"}, {}}};
  if (serving) {
    std::vector<std::thread> threads;
    for (auto& run : runs)
      threads.emplace_back([&kubeconfig, &run] {
        std::vector<std::string> argv{PODREF_CLI_PATH, "hollow",
                                      "--kubeconfig", kubeconfig,
                                      "--nodes", "4",
                                      "--pods-per-node", "3",
                                      "--create-pods", "--update-rate", "10",
                                      "--duration", "3", "--settle", "20",
                                      "--json"};
        argv.insert(argv.end(), run.extra.begin(), run.extra.end());
        run_limits limits;
        limits.limit = std::chrono::seconds(60);
        run.result = run_process(argv, limits);
      });
    for (auto& t : threads)
      t.join();
  }
  if (server_pid > 0)
    ::kill(server_pid, SIGTERM);
  server_thread.join();
  std::remove(kubeconfig.c_str());

  REQUIRE(serving);
  for (const auto& run : runs) {
    INFO(run.extra[1] << " stdout: " << run.result.out);
    INFO("stderr: " << run.result.err);
    CHECK(run.result.status == 0);
    auto j = nlohmann::json::parse(run.result.out, nullptr, false);
    REQUIRE(j.is_object());
    CHECK(j["ok"] == true);
    CHECK(j["convergence"]["converged_nodes"] == 4);
    CHECK(j["agents"]["registered_pods"] == 12);
    CHECK(!j["sync"]["all_synced_s"].is_null());
    CHECK(j["propagation"]["writes"].get<int>() > 0);
    CHECK(j["propagation"]["failed_writes"] == 0);
    // Each node lists and watches its pods (and registered its Node).
    CHECK(j["api"]["requests_by_verb"]["POST"] == 4);
    CHECK(j["created"]["failed"] == 0);
    CHECK(j["deleted"]["failed"] == 0);
  }
  CHECK(runs[1].result.out.find("\"connections\":1,") != std::string::npos);
  INFO("apiserver stderr: " << server.err);
  CHECK(server.status == 0);
  CHECK(server.out.find("stopped on signal 15") != std::string::npos);
}
