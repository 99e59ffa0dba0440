// `podref simulate` end to end: the built binary runs short simulations over
// the example manifests (from the source tree, its default directory) and
// over scratch directories, and its summary and exit status are checked.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "support/run_process.hpp"

// The command-line tests need the podref binary (PODREF_BUILD_TOOLS).
#ifdef PODREF_CLI_PATH

namespace fs = std::filesystem;
using podref::test::process_result;
using podref::test::run_process;

namespace {

/// Runs `podref simulate ARGS` in `dir` (default: the source tree).
process_result simulate(std::vector<std::string> args,
                        const std::string& dir = PODREF_SOURCE_DIR) {
  args.insert(args.begin(), {PODREF_CLI_PATH, "simulate"});
  return run_process(args, {}, dir);
}

/// A scratch directory of manifests that removes itself.
struct scratch_dir {
  fs::path path;
  explicit scratch_dir(const std::string& tag)
    : path(fs::temp_directory_path()
           / ("podref-simulate-" + tag + "-" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream{path / name, std::ios::binary} << text;
  }
};

const std::string pod_with_missing_secret = R"(apiVersion: v1
kind: Pod
metadata:
  name: lonely
  namespace: default
spec:
  containers:
    - name: app
      image: app:1
      envFrom:
        - secretRef:
            name: missing-secret
        - configMapRef:
            name: settings
)";

const std::string settings_config_map = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
data:
  mode: test
)";

/// Checks what must hold for one manager after a passing run.
void check_manager(const nlohmann::json& m) {
  INFO(m.dump());
  CHECK(m["reflectors_started"].get<int>() > 0);
  CHECK(m["reflectors_started"] == m["reflectors_stopped"]);
  CHECK(m["live_reflectors"] == 0);
  CHECK(m["open_watches"] == 0);
  CHECK(m["registered_pods"] == 0);
  CHECK(m["referenced_objects"] == 0);
  CHECK(m["api_actions"]["list"].get<int>() > 0);
}

} // namespace

TEST_CASE("simulate --json runs the example node and its invariants hold") {
  auto result = simulate({"--json", "--duration", "2", "--pod-rate", "50",
                          "--pod-lifetime", "0.5", "--max-pods", "20",
                          "--update-rate", "100", "--readers", "2",
                          "--read-rate", "300", "--seed", "7"});
  INFO(result.out << result.err);
  REQUIRE(result.status == 0);
  // Not a terminal: no progress line.
  CHECK(result.err.empty());
  auto s = nlohmann::json::parse(result.out);
  CHECK(s["invariants"]["pass"] == true);
  CHECK(s["invariants"]["failures"].empty());
  CHECK(s["config"]["seed"] == 7);
  CHECK(s["templates"] == 8);
  CHECK(s["objects"]["loaded"].get<int>() > 0);
  CHECK(s["objects"]["referenced"].get<int>() > 0);
  auto arrived = s["pods"]["arrived"].get<int>();
  CHECK(arrived > 0);
  CHECK(s["pods"]["left"] == arrived);
  CHECK(s["pods"]["peak_live"].get<int>() <= 20);
  CHECK(s["updates"]["total"].get<int>() > 0);
  CHECK(s["updates"]["failed"] == 0);
  CHECK(s["reads"]["total"].get<int>() > 0);
  CHECK(s["reads"]["failed"] == s["reads"]["benign_failures"]);
  CHECK(s["reads"]["snapshot"].get<int>() > 0);
  const auto& l = s["latency_us"];
  CHECK(l["samples"].get<int>() > 0);
  CHECK(l["p50"] <= l["p99"]);
  CHECK(l["p99"] <= l["p999"]);
  CHECK(l["p999"] <= l["max"]);
  check_manager(s["secrets"]);
  check_manager(s["configmaps"]);
  CHECK(s["elapsed_s"].get<double>() < 10);
  const auto& d = s["delivery"];
  CHECK(d["pod_arrivals"]["asked_per_s"] == 50.0);
  CHECK(d["pod_arrivals"]["delivered_per_s"].get<double>() > 0);
  CHECK(d["updates"]["asked_per_s"] == 100.0);
  CHECK(d["reads"]["asked_per_s"] == 600.0);
  CHECK(d["shortfalls"].is_array());
}

namespace {

/// A short run with `strategy`; neither Cache nor Get watches or keeps
/// reflectors, both read with GETs.
void check_unwatched_strategy(const std::string& strategy) {
  auto result = simulate({"--json", "--strategy", strategy, "--duration",
                          "0.5", "--pod-rate", "40", "--pod-lifetime", "0.3",
                          "--readers", "1", "--read-rate", "200"});
  INFO(strategy << ": " << result.out << result.err);
  REQUIRE(result.status == 0);
  auto s = nlohmann::json::parse(result.out);
  CHECK(s["invariants"]["pass"] == true);
  CHECK(s["config"]["strategy"] == strategy);
  CHECK(s["reads"]["total"].get<int>() > 0);
  for (const char* which : {"secrets", "configmaps"}) {
    const auto& m = s[which];
    CHECK(m["reflectors_started"] == 0);
    CHECK(m["live_reflectors"] == 0);
    CHECK(m["registered_pods"] == 0);
    CHECK(m["api_actions"]["watch"] == 0);
    CHECK(m["api_actions"]["get"].get<int>() > 0);
  }
}

} // namespace

TEST_CASE("simulate --fault-period injects every API server fault and the "
          "invariants still hold") {
  // Five kinds in turn, one per 0.1 s: 2 s see each kind several times,
  // restarts of the server actor included.
  auto result = simulate({"--json", "--duration", "2", "--pod-rate", "40",
                          "--pod-lifetime", "0.5", "--update-rate", "100",
                          "--readers", "2", "--read-rate", "200",
                          "--fault-period", "0.1", "--seed", "3"});
  INFO(result.out << result.err);
  REQUIRE(result.status == 0);
  auto s = nlohmann::json::parse(result.out);
  CHECK(s["invariants"]["pass"] == true);
  CHECK(s["config"]["fault_period_s"] == 0.1);
  CHECK(s["faults"]["injected"].get<int>() >= 10);
  CHECK(s["pods"]["left"] == s["pods"]["arrived"]);
  CHECK(s["reads"]["snapshot"].get<int>() > 0);
  CHECK(s["secrets"]["live_reflectors"] == 0);
}

TEST_CASE("simulate runs the Get strategy") {
  check_unwatched_strategy("Get");
}

TEST_CASE("simulate runs the Cache strategy") {
  check_unwatched_strategy("Cache");
}

TEST_CASE("simulate prints a summary table") {
  auto result = simulate({"--duration", "0.5", "--readers", "1"});
  INFO(result.out << result.err);
  CHECK(result.status == 0);
  CHECK(result.err.empty());
  for (const char* text : {"pods ", "reads ", "latency ", "p999",
                           "reflectors started", "API lists",
                           "live reflectors", "invariants: PASS"})
    CHECK(result.out.find(text) != std::string::npos);
}

TEST_CASE("simulate answers a missing object as not found throughout") {
  scratch_dir dir{"missing"};
  dir.write("pod.yaml", pod_with_missing_secret);
  dir.write("objects.yaml", settings_config_map);
  auto result = simulate({"--json", "--manifests", dir.path.string(),
                          "--duration", "0.5", "--pod-rate", "20",
                          "--pod-lifetime", "0.2", "--update-rate", "50"});
  INFO(result.out << result.err);
  REQUIRE(result.status == 0);
  auto s = nlohmann::json::parse(result.out);
  CHECK(s["invariants"]["pass"] == true);
  CHECK(s["objects"]["loaded"] == 1);
  CHECK(s["objects"]["referenced"] == 2);
  CHECK(s["templates"] == 1);
}

TEST_CASE("simulate says when a run falls short of the rates asked") {
  // The only object the pod references is missing: nothing can be updated.
  scratch_dir dir{"short"};
  dir.write("pod.yaml", R"(apiVersion: v1
kind: Pod
metadata: {name: lonely, namespace: default}
spec:
  containers:
    - name: app
      image: app:1
      envFrom: [{secretRef: {name: missing-secret}}]
)");
  SECTION("in --json") {
    auto result = simulate({"--json", "--manifests", dir.path.string(),
                            "--duration", "0.5", "--update-rate", "40"});
    INFO(result.out << result.err);
    REQUIRE(result.status == 0);
    auto s = nlohmann::json::parse(result.out);
    CHECK(s["invariants"]["pass"] == true);
    const auto& d = s["delivery"];
    CHECK(d["updates"]["asked_per_s"] == 40.0);
    CHECK(d["updates"]["delivered_per_s"] == 0.0);
    REQUIRE(d["shortfalls"].size() >= 1);
    auto first = d["shortfalls"][0].get<std::string>();
    CHECK(first.rfind("updates: 0.0/s of the 40.0/s asked (0%); ", 0) == 0);
    CHECK(first.find("found no mutable object that a live pod references")
          != std::string::npos);
  }
  SECTION("in the table, as a warning that does not fail the run") {
    auto result = simulate({"--manifests", dir.path.string(), "--duration",
                            "0.5", "--update-rate", "40"});
    INFO(result.out << result.err);
    CHECK(result.status == 0);
    CHECK(result.out.find("warning: the run fell short of what was asked: "
                          "updates: 0.0/s of the 40.0/s asked")
          != std::string::npos);
    CHECK(result.out.find("invariants: PASS") != std::string::npos);
  }
}

TEST_CASE("simulate rejects bad flags with exit status 2") {
  struct bad_case {
    std::vector<std::string> args;
    std::string mentions;
  };
  const std::vector<bad_case> cases{
    {{"--pod-rate", "0"}, "--pod-rate"},
    {{"--readers", "many"}, "--readers"},
    {{"--duration", "-1"}, "--duration"},
    {{"--max-pods", "0"}, "--max-pods"},
    {{"--frobnicate"}, "frobnicate"},
    {{"--strategy", "watch"}, "--strategy"},
  };
  for (const auto& c : cases) {
    auto result = simulate(c.args);
    INFO(c.args.front() << ": " << result.err);
    CHECK(result.status == 2);
    CHECK(result.out.empty());
    CHECK(result.err.find(c.mentions) != std::string::npos);
    CHECK(result.err.find("Usage:") != std::string::npos);
  }
}

TEST_CASE("simulate fails clearly without usable manifests") {
  SECTION("the default directory outside the repository root") {
    scratch_dir dir{"cwd"};
    auto result = simulate({"--duration", "0.5"}, dir.path.string());
    CHECK(result.status == 1);
    CHECK(result.out.empty());
    CHECK(result.err
          == "podref: simulate: no manifests directory "
             "'examples/manifests' (run from the repository root or pass "
             "--manifests DIR)\n");
  }
  SECTION("a missing directory") {
    auto result = simulate({"--manifests", "no-such-dir"});
    CHECK(result.status == 1);
    CHECK(result.err.find("'no-such-dir'") != std::string::npos);
  }
  SECTION("a directory without pods") {
    scratch_dir dir{"nopods"};
    dir.write("objects.yaml", settings_config_map);
    auto result = simulate({"--manifests", dir.path.string()});
    CHECK(result.status == 1);
    CHECK(result.err.find("no pods or pod templates") != std::string::npos);
  }
  SECTION("a broken manifest names its file") {
    scratch_dir dir{"broken"};
    dir.write("pod.yaml", pod_with_missing_secret);
    dir.write("broken.yaml", "kind: Pod\nmetadata: {name: [x\n");
    auto result = simulate({"--manifests", dir.path.string()});
    CHECK(result.status == 1);
    CHECK(result.err.find("broken.yaml") != std::string::npos);
  }
  SECTION("a file with bad documents among good ones is refused, every "
          "error listed") {
    scratch_dir dir{"partly"};
    dir.write("pod.yaml", pod_with_missing_secret + "---\nkind: Pod\nspec: 1\n"
                            + "---\nkind: Secret\ndata: {k: \"!\"}\n");
    auto result = simulate({"--manifests", dir.path.string()});
    CHECK(result.status == 1);
    CHECK(result.out.empty());
    const auto file = (dir.path / "pod.yaml").string();
    CHECK(result.err
          == "podref: " + file
               + ": document 1: spec: expected a map, got a number\n"
                 "podref: "
               + file
               + ": document 2: data.k: illegal base64 data at input byte "
                 "0\n");
  }
}

TEST_CASE("simulate --help lists its flags") {
  auto result = simulate({"--help"});
  CHECK(result.status == 0);
  for (const char* flag : {"--manifests", "--duration", "--pod-rate",
                           "--pod-lifetime", "--max-pods", "--update-rate",
                           "--readers", "--read-rate", "--seed", "--json"})
    CHECK(result.out.find(flag) != std::string::npos);
}

#endif // PODREF_CLI_PATH
