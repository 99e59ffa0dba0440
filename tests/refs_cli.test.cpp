// `podref refs` end to end (the built binary, run as a child process), and the
// example manifests it is demonstrated with: they must decode, and every
// Secret and ConfigMap their pods reference must exist among them, because
// the simulation loads them into the in-memory API server.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "podref/messages/pod_references.hpp"
#include "podref/manifest/manifest.hpp"
#include "podref/version.hpp"
#include "support/run_process.hpp"

namespace fs = std::filesystem;
using podref::test::process_result;
using podref::test::run_process;
using podref::test::split_lines;

namespace {

const std::string examples_dir = "examples/manifests";

/// The example manifests as paths relative to the source tree, sorted.
std::vector<std::string> example_files() {
  std::vector<std::string> files;
  for (const auto& entry :
       fs::directory_iterator(fs::path{PODREF_SOURCE_DIR} / examples_dir)) {
    auto ext = entry.path().extension();
    if (entry.is_regular_file()
        && (ext == ".yaml" || ext == ".yml" || ext == ".json"))
      files.push_back(examples_dir + "/" + entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace

TEST_CASE("every example manifest decodes") {
  auto files = example_files();
  REQUIRE(files.size() >= 10);
  for (const auto& file : files) {
    auto result = podref::load_manifest_file(
      (fs::path{PODREF_SOURCE_DIR} / file).string());
    INFO(file << ": " << Catch::Detail::stringify(result.errors));
    CHECK(result.ok());
    CHECK_FALSE(result.objects.empty());
  }
}

TEST_CASE("every Secret and ConfigMap the example pods use exists") {
  using key = std::pair<std::string, std::string>; // namespace, name
  std::set<key> secrets;
  std::set<key> config_maps;
  std::vector<podref::pod_ptr> pods;
  for (const auto& file : example_files()) {
    auto result = podref::load_manifest_file(
      (fs::path{PODREF_SOURCE_DIR} / file).string());
    REQUIRE(result.ok());
    for (const auto& obj : result.objects) {
      if (auto s = std::get_if<podref::secret_ptr>(&obj.object))
        secrets.emplace((*s)->metadata.ns, (*s)->metadata.name);
      else if (auto c = std::get_if<podref::config_map_ptr>(&obj.object))
        config_maps.emplace((*c)->metadata.ns, (*c)->metadata.name);
      else if (auto p = std::get_if<podref::pod_ptr>(&obj.object))
        pods.push_back(*p);
    }
  }
  REQUIRE(pods.size() == 8);
  for (const auto& p : pods) {
    const auto& ns = p->metadata.ns;
    for (const auto& name : podref::secret_names(*p)) {
      INFO("Secret " << ns << "/" << name << " used by " << p->metadata.name);
      CHECK(secrets.count({ns, name}) == 1);
    }
    for (const auto& name : podref::config_map_names(*p)) {
      INFO("ConfigMap " << ns << "/" << name << " used by "
                        << p->metadata.name);
      CHECK(config_maps.count({ns, name}) == 1);
    }
  }
}

TEST_CASE("the example Node carries the Cache strategy's TTL annotation") {
  auto result = podref::load_manifest_file(
    (fs::path{PODREF_SOURCE_DIR} / examples_dir / "node.yaml").string());
  REQUIRE(result.ok());
  REQUIRE(result.objects.size() == 1);
  auto n = std::get<podref::node_ptr>(result.objects.front().object);
  CHECK(n->metadata.name == "worker-1");
  CHECK(n->metadata.annotations.at("node.alpha.kubernetes.io/ttl") == "15");
}

// The command-line tests need the podref binary (PODREF_BUILD_TOOLS).
#ifdef PODREF_CLI_PATH

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

/// Runs the podref binary in the source tree, so example paths are relative
/// and the expected lines below do not depend on where the tree lives.
process_result podref_cli(std::vector<std::string> args,
                          const std::string& input = {}) {
  args.insert(args.begin(), PODREF_CLI_PATH);
  return run_process(args, input, PODREF_SOURCE_DIR);
}

/// A scratch directory that removes itself.
struct scratch_dir {
  fs::path path;
  scratch_dir()
    : path(fs::temp_directory_path()
           / ("podref-refs-cli-" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream{path / name, std::ios::binary} << text;
    return (path / name).string();
  }
};

// The expected `refs --json` lines, in file order.
const std::string anchors_line =
  R"({"file":"examples/manifests/anchors.yaml","doc":0,"kind":"Deployment",)"
  R"("namespace":"default","name":"api",)"
  R"("secrets":["db-credentials","web-tls"],)"
  R"("configmaps":["app-config","app-env","worker-queues"]})";
const std::string cronjob_line =
  R"({"file":"examples/manifests/cronjob.yaml","doc":0,"kind":"CronJob",)"
  R"("namespace":"shop","name":"nightly-report",)"
  R"("secrets":["postgres-credentials","smtp-credentials"],)"
  R"("configmaps":["report-settings"]})";
const std::string daemonset_line =
  R"({"file":"examples/manifests/daemonset-csi.yaml","doc":0,)"
  R"("kind":"DaemonSet","namespace":"monitoring","name":"log-shipper",)"
  R"("secrets":["vault-csi-credentials"],)"
  R"("configmaps":["fluent-bit-config"]})";
const std::string deployment_line =
  R"({"file":"examples/manifests/deployment-projected.yaml","doc":0,)"
  R"("kind":"Deployment","namespace":"shop","name":"storefront",)"
  R"("secrets":["payment-gateway","registry-credentials","storefront-tls"],)"
  R"("configmaps":["storefront-config"]})";
const std::string job_line =
  R"({"file":"examples/manifests/job.yaml","doc":0,"kind":"Job",)"
  R"("namespace":"shop","name":"db-migrate",)"
  R"("secrets":["postgres-credentials"],"configmaps":["db-migrations"]})";
const std::string list_line =
  R"({"file":"examples/manifests/list.json","doc":0,"kind":"Pod",)"
  R"("namespace":"shop","name":"cart-worker",)"
  R"("secrets":["payment-gateway"],"configmaps":["feature-flags"]})";
const std::string pod_line =
  R"({"file":"examples/manifests/pod.yaml","doc":0,"kind":"Pod",)"
  R"("namespace":"default","name":"web-client",)"
  R"("secrets":["api-tokens","db-credentials","registry-credentials",)"
  R"("web-tls"],"configmaps":["app-config","app-env","nginx-conf"]})";
const std::string statefulset_line =
  R"({"file":"examples/manifests/statefulset.yaml","doc":1,)"
  R"("kind":"StatefulSet","namespace":"shop","name":"orders-db",)"
  R"("secrets":["postgres-credentials"],"configmaps":["postgres-init"]})";

/// Checks that `line` is a `{"file", "error"}` object for `file` whose message
/// names the file first, as load_manifest_file reports it.
void check_error_line(const std::string& line, const std::string& file) {
  INFO(line);
  auto value = nlohmann::ordered_json::parse(line);
  REQUIRE(value.is_object());
  REQUIRE(value.size() == 2);
  CHECK(value.begin().key() == "file");
  CHECK(std::next(value.begin()).key() == "error");
  CHECK(value["file"] == file);
  auto message = value["error"].get<std::string>();
  CHECK(message.rfind(file, 0) == 0);
}

const std::string broken_pod = "apiVersion: v1\n"
                               "kind: Pod\n"
                               "metadata:\n"
                               "  name: broken\n"
                               "spec:\n"
                               "  containers: not-a-list\n";

} // namespace

TEST_CASE("refs --json prints one line per pod-bearing example object") {
  auto args = example_files();
  args.insert(args.begin(), {"refs", "--json"});
  auto result = podref_cli(args);
  INFO(result.err);
  CHECK(result.status == 0);
  CHECK(result.err.empty());
  // Secret, ConfigMap, Node and Service documents print nothing.
  std::vector<std::string> expected{anchors_line,    cronjob_line,
                                    daemonset_line,  deployment_line,
                                    job_line,        list_line,
                                    pod_line,        statefulset_line};
  CHECK(split_lines(result.out) == expected);
}

TEST_CASE("refs reads standard input for - and shows it as <stdin>") {
  auto job = read_file(fs::path{PODREF_SOURCE_DIR} / examples_dir / "job.yaml");
  REQUIRE_FALSE(job.empty());

  SECTION("json") {
    auto result = podref_cli({"refs", "--json", "-"}, job);
    INFO(result.err);
    CHECK(result.status == 0);
    CHECK(split_lines(result.out)
          == std::vector<std::string>{
            R"({"file":"<stdin>","doc":0,"kind":"Job","namespace":"shop",)"
            R"("name":"db-migrate","secrets":["postgres-credentials"],)"
            R"("configmaps":["db-migrations"]})"});
  }
  SECTION("plain: a table without a file column") {
    auto result = podref_cli({"refs", "-"}, job);
    INFO(result.err);
    CHECK(result.status == 0);
    CHECK(result.err.empty());
    CHECK(split_lines(result.out)
          == std::vector<std::string>{
            "KIND  NAMESPACE  NAME        SECRETS               CONFIGMAPS",
            "Job   shop       db-migrate  postgres-credentials  "
            "db-migrations"});
  }
}

TEST_CASE("refs plain output names the file when given several") {
  auto result = podref_cli({"refs", examples_dir + "/job.yaml",
                            examples_dir + "/statefulset.yaml",
                            examples_dir + "/node.yaml"});
  INFO(result.err);
  CHECK(result.status == 0);
  // Columns are as wide as their widest cell plus two blanks.
  CHECK(split_lines(result.out)
        == std::vector<std::string>{
          "FILE                                 KIND         NAMESPACE  "
          "NAME        SECRETS               CONFIGMAPS",
          "examples/manifests/job.yaml          Job          shop       "
          "db-migrate  postgres-credentials  db-migrations",
          "examples/manifests/statefulset.yaml  StatefulSet  shop       "
          "orders-db   postgres-credentials  postgres-init"});
}

TEST_CASE("refs prints nothing for files without pod-bearing objects") {
  auto result = podref_cli({"refs", examples_dir + "/node.yaml",
                            examples_dir + "/objects-shop.yaml"});
  CHECK(result.status == 0);
  CHECK(result.out.empty());
  CHECK(result.err.empty());
}

TEST_CASE("refs reports a bad file in its place and goes on") {
  scratch_dir dir;
  auto bad = dir.write("broken.yaml", broken_pod);
  auto syntax = dir.write("syntax.yaml", "kind: Pod\nmetadata: {name: [x\n");
  const std::vector<std::string> files{examples_dir + "/pod.yaml", bad,
                                       examples_dir + "/job.yaml", syntax};

  SECTION("json: an error object replaces the file's lines") {
    std::vector<std::string> args{"refs", "--json"};
    args.insert(args.end(), files.begin(), files.end());
    auto result = podref_cli(args);
    CHECK(result.status == 1);
    CHECK(result.err.empty());
    auto lines = split_lines(result.out);
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == pod_line);
    check_error_line(lines[1], bad);
    CHECK(lines[2] == job_line);
    check_error_line(lines[3], syntax);
  }
  SECTION("plain: the errors go to stderr") {
    std::vector<std::string> args{"refs"};
    args.insert(args.end(), files.begin(), files.end());
    auto result = podref_cli(args);
    CHECK(result.status == 1);
    auto out = split_lines(result.out);
    REQUIRE(out.size() == 3);
    CHECK(out[1].find("web-client") != std::string::npos);
    CHECK(out[2].find("db-migrate") != std::string::npos);
    auto err = split_lines(result.err);
    REQUIRE(err.size() == 2);
    CHECK(err[0].rfind("podref: " + bad, 0) == 0);
    CHECK(err[1].rfind("podref: " + syntax, 0) == 0);
  }
  SECTION("bad standard input") {
    auto result = podref_cli(
      {"refs", "--json", "-", examples_dir + "/job.yaml"}, broken_pod);
    CHECK(result.status == 1);
    auto lines = split_lines(result.out);
    REQUIRE(lines.size() == 2);
    auto error = nlohmann::json::parse(lines[0]);
    CHECK(error["file"] == "<stdin>");
    CHECK(error.contains("error"));
    CHECK(lines[1] == job_line);
  }
}

TEST_CASE("refs prints the valid documents of a file and every error") {
  scratch_dir dir;
  auto job = read_file(fs::path{PODREF_SOURCE_DIR} / examples_dir / "job.yaml");
  auto mixed = dir.write("mixed.yaml", broken_pod + "---\n" + job + "---\n"
                                         + broken_pod);
  SECTION("json: the objects' lines, then one error line each") {
    auto result = podref_cli({"refs", "--json", mixed});
    CHECK(result.status == 1);
    CHECK(result.err.empty());
    auto lines = split_lines(result.out);
    REQUIRE(lines.size() == 3);
    auto job_in_mixed = nlohmann::json::parse(lines[0]);
    CHECK(job_in_mixed["file"] == mixed);
    CHECK(job_in_mixed["doc"] == 1);
    CHECK(job_in_mixed["name"] == "db-migrate");
    check_error_line(lines[1], mixed);
    check_error_line(lines[2], mixed);
    CHECK(nlohmann::json::parse(lines[1])["error"]
          == mixed + ": document 0: spec.containers: expected a list, got a "
                     "string");
    CHECK(nlohmann::json::parse(lines[2])["error"]
          == mixed + ": document 2: spec.containers: expected a list, got a "
                     "string");
  }
  SECTION("plain: the table, and the errors on stderr") {
    auto result = podref_cli({"refs", mixed});
    CHECK(result.status == 1);
    auto out = split_lines(result.out);
    REQUIRE(out.size() == 2);
    CHECK(out[1].find("db-migrate") != std::string::npos);
    CHECK(split_lines(result.err)
          == std::vector<std::string>{
            "podref: " + mixed
              + ": document 0: spec.containers: expected a list, got a string",
            "podref: " + mixed
              + ": document 2: spec.containers: expected a list, got a "
                "string"});
  }
}

TEST_CASE("refs reports a missing file and exits 1") {
  const auto missing = examples_dir + "/no-such-file.yaml";
  auto result = podref_cli(
    {"refs", "--json", missing, examples_dir + "/job.yaml"});
  CHECK(result.status == 1);
  auto lines = split_lines(result.out);
  REQUIRE(lines.size() == 2);
  check_error_line(lines[0], missing);
  CHECK(lines[1] == job_line);
}

TEST_CASE("podref --help describes the tool and its subcommands") {
  auto result = podref_cli({"--help"});
  CHECK(result.status == 0);
  CHECK(result.out.find("Usage:") != std::string::npos);
  CHECK(result.out.find("refs") != std::string::npos);

  auto refs = podref_cli({"refs", "--help"});
  CHECK(refs.status == 0);
  CHECK(refs.out.find("--json") != std::string::npos);
  CHECK(refs.out.find("FILE") != std::string::npos);
}

TEST_CASE("podref --version prints the version") {
  auto result = podref_cli({"--version"});
  CHECK(result.status == 0);
  CHECK(result.out == "podref " PODREF_VERSION_STRING "\n");
}

TEST_CASE("usage errors exit 2 and show the usage") {
  SECTION("no arguments") {
    auto result = podref_cli({});
    CHECK(result.status == 2);
    CHECK(result.out.empty());
    CHECK(result.err.find("Usage:") != std::string::npos);
    CHECK(result.err.find("refs") != std::string::npos);
  }
  SECTION("refs without files") {
    auto result = podref_cli({"refs"});
    CHECK(result.status == 2);
    CHECK(result.out.empty());
    CHECK(result.err.find("FILE") != std::string::npos);
    CHECK(result.err.find("Usage:") != std::string::npos);
  }
  SECTION("unknown subcommand") {
    auto result = podref_cli({"frobnicate"});
    CHECK(result.status == 2);
    CHECK(result.err.find("Usage:") != std::string::npos);
  }
}

#endif // PODREF_CLI_PATH
