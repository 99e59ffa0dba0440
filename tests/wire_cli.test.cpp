// `podref get` and `podref refs --kubeconfig` as processes, against
// `podref apiserver`'s front in this process (the API actions they cause
// counted on the server) and against `podref apiserver` run as a process
// (plain HTTP, and HTTPS with the token of the kubeconfig it writes).
#include "podref/runtime/api_server.hpp"
#include "podref/wire/server_kubeconfig.hpp"
#include "support/http_test_client.hpp"
#include "support/pod_builders.hpp"
#include "support/run_process.hpp"

#include <catch2/catch.hpp>

#include "support/temp_dir.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#ifdef PODREF_CLI_PATH

using namespace podref;
using podref::test::run_process;
using podref::test::split_lines;

using podref::test::temp_dir;

namespace {

test::process_result podref_cli(std::vector<std::string> args) {
  args.insert(args.begin(), PODREF_CLI_PATH);
  return run_process(args);
}

/// The front in this process and a kubeconfig for it.
struct front_with_kubeconfig {
  test::http_test_server server;
  temp_dir dir;
  std::string kubeconfig = dir.path + "/kc";

  front_with_kubeconfig() {
    wire::server_kubeconfig kc;
    kc.url = server.front->url();
    REQUIRE(wire::write_kubeconfig(kubeconfig, kc));
  }

  source_action_counts actions_of(const std::string& name) {
    source_action_counts out;
    auto log = server.api.actions();
    REQUIRE(log);
    for (const auto& a : *log)
      if (a.name == name)
        out.add(a.verb);
    return out;
  }
};

const std::string pod_json =
  R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"default"},)"
  R"("spec":{"imagePullSecrets":[{"name":"pull"}],"containers":[{"name":"c","image":"i",)"
  R"("envFrom":[{"configMapRef":{"name":"env"}}],)"
  R"("env":[{"name":"X","valueFrom":{"secretKeyRef":{"name":"db","key":"p"}}}]}]}})";

/// `podref apiserver` as a child process until destroyed (SIGTERM).
struct apiserver_process {
  temp_dir dir;
  std::string kubeconfig = dir.path + "/kc";
  pid_t pid = -1;

  explicit apiserver_process(std::vector<std::string> extra) {
    std::vector<std::string> args{PODREF_CLI_PATH, "apiserver", "--listen",
                                  "127.0.0.1:0", "--write-kubeconfig",
                                  kubeconfig};
    args.insert(args.end(), extra.begin(), extra.end());
    auto log = dir.path + "/out";
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      std::vector<char*> argv;
      for (auto& a : args)
        argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    // Up once it names the kubeconfig it wrote (a bounded wait).
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in{log};
      std::stringstream text;
      text << in.rdbuf();
      if (text.str().find("kubeconfig: ") != std::string::npos)
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL("podref apiserver did not start");
  }

  ~apiserver_process() {
    ::kill(pid, SIGTERM);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
};

} // namespace

TEST_CASE("podref get reads one object as a Watch manager and prints keys "
          "and sizes, never values") {
  front_with_kubeconfig f;
  REQUIRE(f.server.api.create(
    test::make_secret("default", "s1", {{"password", "hunter2"}, {"u", "x"}})));
  auto res = podref_cli({"get", "secret", "default/s1", "--kubeconfig",
                         f.kubeconfig});
  INFO(res.err);
  CHECK(res.status == 0);
  CHECK(res.out.find("Name:             s1\n") != std::string::npos);
  CHECK(res.out.find("password:  7 bytes\n") != std::string::npos);
  CHECK(res.out.find("u:  1 bytes\n") != std::string::npos);
  CHECK(res.out.find("hunter2") == std::string::npos);
  CHECK(res.out.find("aHVudGVyMg") == std::string::npos);
  // A kubelet reflector's requests: one list from the watch cache, then
  // its watch, which the command may exit before sending (it prints once
  // the list has synced).
  auto n = f.actions_of("s1");
  CHECK(n.lists == 1);
  CHECK(n.watches <= 1);
  CHECK(n.gets == 0);
}

TEST_CASE("podref get -o json and -o yaml print the whole object") {
  front_with_kubeconfig f;
  REQUIRE(f.server.api.create(
    test::make_secret("default", "s1", {{"k", "v1"}})));
  auto js = podref_cli({"get", "secrets", "default/s1", "--kubeconfig",
                        f.kubeconfig, "-o", "json"});
  INFO(js.err);
  REQUIRE(js.status == 0);
  auto doc = nlohmann::json::parse(js.out);
  CHECK(doc["kind"] == "Secret");
  CHECK(doc["apiVersion"] == "v1");
  CHECK(doc["metadata"]["name"] == "s1");
  CHECK(doc["metadata"]["resourceVersion"] == "1");
  CHECK(doc["data"]["k"] == "djE=");
  auto ym = podref_cli({"get", "secret", "s1", "--kubeconfig", f.kubeconfig,
                        "-o", "yaml"});
  INFO(ym.err);
  REQUIRE(ym.status == 0);
  CHECK(ym.out.rfind("apiVersion: v1\ndata:\n  k: djE=\nkind: Secret\n", 0)
        == 0);
  CHECK(ym.out.find("  name: s1\n") != std::string::npos);
  // Strings that would read back as another type are quoted (YAML 1.1's
  // booleans too, as kubectl's go-yaml writes them); line breaks make a
  // literal block; the key "n" is a YAML 1.1 boolean as well.
  REQUIRE(f.server.api.create(test::make_config_map(
    "default", "c1",
    {{"flag", "yes"}, {"count", "10"}, {"n", "off"}, {"text", "a\nb\n"},
     {"plain", "v1"}})));
  auto cm = podref_cli({"get", "cm", "default/c1", "--kubeconfig",
                        f.kubeconfig, "-o", "yaml"});
  INFO(cm.err);
  REQUIRE(cm.status == 0);
  CHECK(cm.out.rfind("apiVersion: v1\ndata:\n  count: \"10\"\n"
                     "  flag: \"yes\"\n  \"n\": \"off\"\n  plain: v1\n"
                     "  text: |\n    a\n    b\nkind: ConfigMap\n",
                     0)
        == 0);
}

TEST_CASE("podref get of a missing object prints upstream's NotFound") {
  front_with_kubeconfig f;
  auto res = podref_cli({"get", "cm", "default/nope", "--kubeconfig",
                         f.kubeconfig});
  CHECK(res.status == 1);
  CHECK(res.out.empty());
  CHECK(res.err
        == "Error from server (NotFound): configmaps \"nope\" not found\n");
  auto bad_kind = podref_cli({"get", "pods", "default/x", "--kubeconfig",
                              f.kubeconfig});
  CHECK(bad_kind.status == 2);
  auto bad_name = podref_cli({"get", "secret", "default/Bad_Name",
                              "--kubeconfig", f.kubeconfig});
  CHECK(bad_name.status == 1);
  CHECK(bad_name.err.find("podref get: name: ") == 0);
}

TEST_CASE("podref refs --kubeconfig lists what a namespace's pods "
          "reference") {
  front_with_kubeconfig f;
  test::http_test_client http{f.server.port()};
  REQUIRE(http.call(boost::beast::http::verb::post,
                    "/api/v1/namespaces/default/pods", pod_json)
            .status
          == 201);
  auto res = podref_cli({"refs", "--kubeconfig", f.kubeconfig, "-n",
                         "default"});
  INFO(res.err);
  CHECK(res.status == 0);
  CHECK(split_lines(res.out)
        == std::vector<std::string>{
          "KIND  NAMESPACE  NAME  SECRETS   CONFIGMAPS",
          "Pod   default    web   db, pull  env"});
  auto js = podref_cli({"refs", "--kubeconfig", f.kubeconfig, "--json"});
  CHECK(js.status == 0);
  CHECK(js.out
        == R"({"kind":"Pod","namespace":"default","name":"web","secrets":["db","pull"],"configmaps":["env"]})"
           "\n");
  auto empty = podref_cli({"refs", "--kubeconfig", f.kubeconfig, "-n",
                           "other"});
  CHECK(empty.status == 0);
  CHECK(empty.out.empty());
  auto both = podref_cli({"refs", "--kubeconfig", f.kubeconfig, "x.yaml"});
  CHECK(both.status == 2);
}

TEST_CASE("podref refs and get against podref apiserver as a process, over "
          "HTTP and over HTTPS with a token") {
  const std::string manifests = PODREF_SOURCE_DIR "/examples/manifests/";
  // The file mode's rows of the pod, to compare with the cluster's.
  auto from_file = podref_cli({"refs", manifests + "pod.yaml"});
  REQUIRE(from_file.status == 0);
  for (bool tls : {false, true}) {
    DYNAMIC_SECTION((tls ? "https" : "http")) {
      temp_dir tls_dir;
      std::vector<std::string> extra{"--load", manifests + "pod.yaml",
                                     "--load",
                                     manifests + "objects-default.yaml"};
      if (tls) {
        extra.push_back("--tls-dir");
        extra.push_back(tls_dir.path + "/tls");
      }
      apiserver_process server{extra};
      auto refs = podref_cli({"refs", "--kubeconfig", server.kubeconfig,
                              "-n", "default"});
      INFO(refs.err);
      CHECK(refs.status == 0);
      CHECK(refs.out == from_file.out);
      auto got = podref_cli({"get", "secret", "default/db-credentials",
                             "--kubeconfig", server.kubeconfig});
      INFO(got.err);
      CHECK(got.status == 0);
      CHECK(got.out.find("password:  ") != std::string::npos);
      auto missing = podref_cli({"get", "secret", "default/nope",
                                 "--kubeconfig", server.kubeconfig});
      CHECK(missing.status == 1);
      CHECK(missing.err
            == "Error from server (NotFound): secrets \"nope\" not found\n");
    }
  }
}

#endif // PODREF_CLI_PATH
