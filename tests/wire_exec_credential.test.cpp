// Exec credential plugins without a server: what a plugin is given
// (KUBERNETES_EXEC_INFO, its env and args, no stdin), what its output must
// hold, and the bounds on a plugin that hangs or floods. The client's use
// of the credential (a 401 runs the plugin again) is in
// wire_client_secure.test.cpp.
#include "podref/wire/exec_credential.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

using namespace podref;
using namespace podref::wire;

namespace {

constexpr const char* v1 = "client.authentication.k8s.io/v1";

struct temp_dir {
  std::string path;
  temp_dir() {
    char tmpl[] = "/tmp/podref-exec-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~temp_dir() {
    std::string cmd = "rm -rf '" + path + "'";
    [[maybe_unused]] auto rc = std::system(cmd.c_str());
  }
};

std::string read_all(const std::string& path) {
  std::ifstream in{path};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// A config whose exec plugin is the shell script `body` in `dir`.
client_config with_plugin(const temp_dir& dir, const std::string& body) {
  auto path = dir.path + "/plugin.sh";
  {
    std::ofstream out{path};
    out << "#!/bin/sh\n" << body;
  }
  ::chmod(path.c_str(), 0700);
  client_config c;
  c.server = "https://10.0.0.1:6443";
  c.origin = "/home/a/.kube/config";
  c.ca_pem = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
  exec_plugin x;
  x.api_version = v1;
  x.command = path;
  c.exec = x;
  return c;
}

const std::string token_reply = R"({"apiVersion":")" + std::string{v1}
                                + R"(","kind":"ExecCredential",)"
                                  R"("status":{"token":"tok-1"}})";

} // namespace

TEST_CASE("exec_ a plugin's token, with its args, env and exec info") {
  temp_dir dir;
  auto c = with_plugin(dir, "echo \"$KUBERNETES_EXEC_INFO\" > \"$1\"\n"
                            "echo \"$GREETING\" > \"$2\"\n"
                            "cat > \"$2.stdin\"\n"
                            "cat <<'EOF'\n"
                              + token_reply + "\nEOF\n");
  c.exec->args = {dir.path + "/info", dir.path + "/env"};
  c.exec->env = {{"GREETING", "hello"}};
  auto cred = run_exec_plugin(c);
  REQUIRE(cred);
  CHECK(cred->token == "tok-1");
  CHECK(cred->client_cert_pem.empty());
  CHECK_FALSE(cred->expires);
  CHECK(read_all(dir.path + "/env") == "hello\n");
  CHECK(read_all(dir.path + "/env.stdin").empty()); // stdin is /dev/null
  auto info = read_all(dir.path + "/info");
  CHECK(info.find(R"("kind":"ExecCredential")") != std::string::npos);
  CHECK(info.find(R"("interactive":false)") != std::string::npos);
  CHECK(info.find(std::string{R"("apiVersion":")"} + v1)
        != std::string::npos);
  CHECK(info.find("cluster") == std::string::npos); // not asked for

  SECTION("provideClusterInfo hands the cluster over") {
    c.exec->provide_cluster_info = true;
    c.tls_server_name = "api.example";
    REQUIRE(run_exec_plugin(c));
    info = read_all(dir.path + "/info");
    CHECK(info.find(R"("server":"https://10.0.0.1:6443")")
          != std::string::npos);
    CHECK(info.find(R"("tls-server-name":"api.example")")
          != std::string::npos);
    CHECK(info.find(R"("certificate-authority-data":"LS0t)")
          != std::string::npos);
  }
}

TEST_CASE("exec_ a plugin's failures name the plugin and never its output") {
  temp_dir dir;
  auto fails = [](const result<exec_credential>& r, const std::string& what) {
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(r.error().message.rfind("/home/a/.kube/config: exec plugin \"", 0)
          == 0);
    CHECK(r.error().message.find(what) != std::string::npos);
    CHECK(r.error().message.find("tok-secret") == std::string::npos);
  };
  SECTION("a non-zero exit") {
    auto c = with_plugin(dir, "echo tok-secret\nexit 3\n");
    fails(run_exec_plugin(c), "exited with status 3");
  }
  SECTION("a missing command") {
    auto c = with_plugin(dir, "");
    c.exec->command = dir.path + "/absent";
    fails(run_exec_plugin(c), "executable file not found");
  }
  SECTION("output that is not JSON") {
    auto c = with_plugin(dir, "echo tok-secret\n");
    fails(run_exec_plugin(c), "its output is not a JSON object");
  }
  SECTION("a plugin that does not finish is killed") {
    auto c = with_plugin(dir, "echo tok-secret\nexec sleep 30\n");
    exec_limits lim;
    lim.timeout = std::chrono::milliseconds(200);
    auto start = std::chrono::steady_clock::now();
    fails(run_exec_plugin(c, lim), "did not finish within 200 ms");
    // Killed, not waited for (bounded well under the plugin's 30 s).
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  }
  SECTION("a plugin that floods stdout is killed") {
    auto c = with_plugin(dir, "exec yes tok-secret\n");
    exec_limits lim;
    lim.max_output = 64 << 10;
    fails(run_exec_plugin(c, lim), "wrote more than 65536 bytes");
  }
  SECTION("a cancelled run") {
    auto c = with_plugin(dir, "exec sleep 30\n");
    std::atomic<bool> cancel{true};
    fails(run_exec_plugin(c, {}, &cancel), "cancelled");
  }
}

TEST_CASE("exec_ what an ExecCredential must hold") {
  auto decode = [](const std::string& status, const char* version = v1) {
    return decode_exec_credential(
      std::string{R"({"apiVersion":")"} + version
        + R"(","kind":"ExecCredential","status":)" + status + "}",
      v1);
  };
  auto error_of = [](const result<exec_credential>& r) {
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("tok-secret") == std::string::npos);
    return r.error().message;
  };
  CHECK(error_of(decode(R"({"token":"tok-secret"})",
                        "client.authentication.k8s.io/v1beta1"))
        == "it was asked for apiVersion client.authentication.k8s.io/v1 and "
           "answered \"client.authentication.k8s.io/v1beta1\"");
  CHECK(error_of(decode("null")) == "its ExecCredential has no status");
  CHECK(error_of(decode("{}"))
        == "status has neither a token nor clientCertificateData and "
           "clientKeyData");
  CHECK(error_of(decode(R"({"clientCertificateData":"tok-secret"})"))
        == "status has only one of clientCertificateData and clientKeyData");
  CHECK(error_of(decode(
          R"({"token":"tok-secret","expirationTimestamp":"tomorrow"})"))
        == "status.expirationTimestamp is not an RFC 3339 time");
  CHECK(error_of(decode_exec_credential(R"({"kind":"Secret"})", v1))
        == "its output is not an ExecCredential (kind)");

  auto cert = decode(R"({"clientCertificateData":"CERT","clientKeyData":"KEY"})");
  REQUIRE(cert);
  CHECK(cert->client_cert_pem == "CERT");
  CHECK(cert->client_key_pem == "KEY");
  CHECK(cert->token.empty());

  using std::chrono::system_clock;
  auto at = [&](const std::string& stamp) {
    auto r = decode(R"({"token":"t","expirationTimestamp":")" + stamp + "\"}");
    REQUIRE(r);
    REQUIRE(r->expires);
    return system_clock::to_time_t(*r->expires);
  };
  CHECK(at("2026-12-05T07:00:00Z") == 1796454000);
  CHECK(at("2026-12-05T07:00:00.123456Z") == 1796454000);
  CHECK(at("2026-12-05T08:30:00+01:30") == 1796454000);
  CHECK(at("2026-12-05T05:00:00-02:00") == 1796454000);
}
