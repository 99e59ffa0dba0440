// `podref node` as a process against a scripted API server: --json events
// (registered, checked with the kubelet's wording), /readyz, /healthz and
// /metrics on loopback, the --duration stop; bad flags fail with 1.
#include "support/run_process.hpp"
#include "support/scripted_http_server.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

using podref::test::run_process;
using podref::test::scripted_http_server;
using podref::test::split_lines;
using tcp = boost::asio::ip::tcp;

namespace {

const std::string pod = R"({"metadata":{"name":"web","namespace":"ns1","uid":"u1","resourceVersion":"8"},)"
                        R"("spec":{"nodeName":"n1","containers":[{"name":"c","image":"i",)"
                        R"("envFrom":[{"secretRef":{"name":"creds"}}]}]},"status":{"phase":"Running"}})";

scripted_http_server::answer_fn cluster_with_one_pod() {
  return [](const std::string& path, int) -> std::string {
    if (path.find("watch=true") != std::string::npos)
      return scripted_http_server::watch({}, true);
    if (path.rfind("/api/v1/pods?", 0) == 0)
      return scripted_http_server::reply(
        200, R"({"kind":"PodList","metadata":{"resourceVersion":"10"},"items":[)"
               + pod + "]}");
    return scripted_http_server::reply(
      200, R"({"kind":"List","metadata":{"resourceVersion":"5"},"items":[]})");
  };
}

std::string write_kubeconfig(const std::string& url) {
  auto path = std::string{"/tmp/podref-node-cli-"}
              + std::to_string(::getpid()) + ".kubeconfig";
  std::ofstream f{path};
  f << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
       "    server: "
    << url
    << "\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: x\n  context:\n"
       "    cluster: c\n    user: u\ncurrent-context: x\n";
  return path;
}

unsigned short free_port() {
  boost::asio::io_context ioc;
  tcp::acceptor a{ioc, {boost::asio::ip::make_address("127.0.0.1"), 0}};
  return a.local_endpoint().port();
}

/// GET `path` on 127.0.0.1:`port`: "STATUS BODY", or "" when nothing
/// answers.
std::string http_get(unsigned short port, const std::string& path) {
  boost::asio::io_context ioc;
  tcp::socket s{ioc};
  boost::system::error_code ec;
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  if (ec)
    return "";
  std::string req = "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
  boost::asio::write(s, boost::asio::buffer(req), ec);
  std::string reply;
  char buf[4096];
  for (;;) {
    auto n = s.read_some(boost::asio::buffer(buf), ec);
    reply.append(buf, n);
    if (ec)
      break;
  }
  auto status = reply.size() > 12 ? reply.substr(9, 3) : std::string{};
  auto body = reply.find("\r\n\r\n");
  return status + " " + (body == std::string::npos ? "" : reply.substr(body + 4));
}

} // namespace

TEST_CASE("podref node reports a pod's missing Secret and serves its "
          "metrics") {
  scripted_http_server srv{cluster_with_one_pod()};
  auto kubeconfig = write_kubeconfig(srv.url());
  auto port = free_port();
  podref::test::process_result res;
  std::atomic<int> pid{0};
  podref::test::run_limits limits;
  limits.limit = std::chrono::seconds(60);
  limits.started = [&](int p) { pid = p; };
  // Runs until the pod's check shows in the metrics, then SIGTERM; the
  // duration only bounds a node that never gets there.
  std::thread child{[&] {
    res = run_process({PODREF_CLI_PATH, "node", "--kubeconfig", kubeconfig,
                       "--node-name", "n1", "--json", "--duration", "50",
                       "--metrics", "127.0.0.1:" + std::to_string(port)},
                      limits);
  }};
  std::string ready;
  std::string metrics;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(40);
  while (std::chrono::steady_clock::now() < deadline) {
    ready = http_get(port, "/readyz");
    metrics = http_get(port, "/metrics");
    if (ready == "200 ok"
        && metrics.find("\npodref_node_pods_with_problems 1\n")
             != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto healthz = http_get(port, "/healthz");
  auto missing = http_get(port, "/nothing");
  if (pid != 0)
    ::kill(pid, SIGTERM);
  child.join();
  std::remove(kubeconfig.c_str());
  CHECK(ready == "200 ok");
  CHECK(healthz == "200 ok");
  CHECK(missing.rfind("404 ", 0) == 0);
  CHECK(metrics.find("\nkubelet_running_pods 1\n") != std::string::npos);
  CHECK(metrics.find("rest_client_requests_total{code=\"200\",host=\"127.0.0.1:")
        != std::string::npos);
  INFO(res.err);
  REQUIRE(res.status == 0);
  bool registered = false;
  bool checked = false;
  for (const auto& line : split_lines(res.out)) {
    auto j = nlohmann::json::parse(line);
    if (j["event"] == "registered" && j["name"] == "web")
      registered = true;
    if (j["event"] == "checked" && j["name"] == "web") {
      checked = true;
      CHECK(j["problems"]
            == nlohmann::json::array({"container \"c\": secret \"creds\" not found"}));
    }
  }
  CHECK(registered);
  CHECK(checked);
  CHECK(split_lines(res.out).back().find("\"event\":\"stopped\"")
        != std::string::npos);
}

TEST_CASE("podref node refuses a bad strategy and a non-loopback endpoint") {
  scripted_http_server srv{cluster_with_one_pod()};
  auto kubeconfig = write_kubeconfig(srv.url());
  auto bad = run_process({PODREF_CLI_PATH, "node", "--kubeconfig", kubeconfig,
                          "--node-name", "n1", "--strategy", "Sometimes"});
  CHECK(bad.status == 1);
  CHECK(bad.err.find("--strategy") != std::string::npos);
  auto open = run_process({PODREF_CLI_PATH, "node", "--kubeconfig", kubeconfig,
                           "--node-name", "n1", "--metrics", "0.0.0.0:0",
                           "--duration", "1"});
  CHECK(open.status == 1);
  CHECK(open.err.find("loopback") != std::string::npos);
  std::remove(kubeconfig.c_str());
}
