#include "podref/wire/kubeconfig.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "podref/messages/base64.hpp"

using namespace podref;
using namespace podref::wire;
namespace fs = std::filesystem;

namespace {

const std::string ca_pem
  = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const std::string key_pem
  = "-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----\n";

/// A fresh directory, removed at the end of the test.
struct scratch {
  fs::path dir;

  scratch() {
    char tmpl[] = "/tmp/podref-kubeconfig-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }

  ~scratch() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }

  std::string write(const std::string& name, const std::string& text) const {
    auto path = dir / name;
    fs::create_directories(path.parent_path());
    std::ofstream{path} << text;
    return path.string();
  }
};

result<client_config> load(const std::string& path,
                           const std::string& context = "") {
  kubeconfig_selection s;
  s.explicit_path = path;
  s.context = context;
  return load_kubeconfig(s);
}

std::string message_of(const result<client_config>& x) {
  REQUIRE_FALSE(x);
  return x.error().message;
}

} // namespace

TEST_CASE("base64 round-trips every length") {
  std::string bytes;
  for (int i = 0; i < 8; ++i) {
    auto text = encode_base64(bytes);
    CHECK(text.size() == (bytes.size() + 2) / 3 * 4);
    CHECK(decode_base64(text) == bytes);
    bytes += static_cast<char>(0xF0 + i);
  }
  CHECK(encode_base64("ab") == "YWI=");
}

TEST_CASE("base64 errors fall where Go's decoder names them") {
  // secrets/invalid-base64.json: `illegal base64 data at input byte 3`.
  struct case_t {
    const char* text;
    std::size_t offset;
  };
  const case_t cases[] = {{"not base64!", 3}, {"YQ", 0},    {"YQ=", 3},
                          {"Y===", 1},        {"YQ=x", 2},  {"YQ==YQ==", 4},
                          {"YWJj\nZA=", 8},   {"!!!!", 0}};
  for (const auto& c : cases) {
    INFO(c.text);
    auto d = decode_base64_checked(c.text);
    CHECK_FALSE(d.bytes);
    CHECK(d.error_offset == c.offset);
  }
  // Line breaks are skipped, anywhere.
  CHECK(decode_base64_checked("YW\r\nJj\nZA==\n").bytes == "abcd");
  CHECK(decode_base64_checked("").bytes == "");
}

TEST_CASE("a kubeconfig resolves as kubectl resolves it") {
  scratch s;
  s.write("certs/client.crt", ca_pem);
  s.write("certs/client.key", key_pem);
  s.write("token", "t0k3n\n");
  auto path = s.write("config", R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443/prefix/
    certificate-authority-data: )"
                                  + encode_base64(ca_pem) + R"(
    tls-server-name: api.internal
- name: c2
  cluster:
    server: https://other:443
contexts:
- name: dev
  context: {cluster: c1, user: alice, namespace: shop}
- name: ops
  context: {cluster: c2, user: bob}
users:
- name: alice
  user:
    client-certificate: certs/client.crt
    client-key: certs/client.key
- name: bob
  user:
    tokenFile: token
)");
  auto dev = load(path);
  REQUIRE(dev);
  CHECK(dev->server == "https://10.0.0.1:6443/prefix");
  CHECK(dev->ca_pem == ca_pem);
  CHECK(dev->tls_server_name == "api.internal");
  CHECK(dev->client_cert_pem == ca_pem);
  CHECK(dev->client_key_pem == key_pem);
  CHECK(dev->namespace_name == "shop");
  CHECK(dev->context == "dev");
  CHECK_FALSE(dev->plain_http());
  auto ops = load(path, "ops");
  REQUIRE(ops);
  CHECK(ops->server == "https://other:443");
  CHECK(ops->token.empty());
  CHECK(ops->token_file == (s.dir / "token").string());
  CHECK(ops->namespace_name == "default");
}

TEST_CASE("KUBECONFIG merges its files, the first definition winning") {
  scratch s;
  auto a = s.write("a", R"(current-context: one
clusters:
- name: c
  cluster: {server: "http://127.0.0.1:1"}
contexts:
- name: one
  context: {cluster: c}
)");
  auto b = s.write("b", R"(current-context: two
clusters:
- name: c
  cluster: {server: "http://127.0.0.1:2"}
- name: d
  cluster: {server: "http://127.0.0.1:3"}
contexts:
- name: two
  context: {cluster: d}
)");
  kubeconfig_selection sel;
  sel.env_list = a + ":" + (s.dir / "missing").string() + ":" + b;
  auto one = load_kubeconfig(sel);
  REQUIRE(one);
  CHECK(one->server == "http://127.0.0.1:1");
  CHECK(one->origin == a + ":" + b);
  sel.context = "two";
  auto two = load_kubeconfig(sel);
  REQUIRE(two);
  CHECK(two->server == "http://127.0.0.1:3");
  sel.env_list = (s.dir / "missing").string();
  CHECK(message_of(load_kubeconfig(sel)).find("none of the files")
        != std::string::npos);
}

TEST_CASE("no credential is kept for a plain-HTTP server") {
  scratch s;
  auto path = s.write("config", R"(current-context: x
clusters: [{name: c, cluster: {server: "http://127.0.0.1:8080"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: s3cr3t}}]
)");
  auto x = load(path);
  REQUIRE(x);
  CHECK(x->plain_http());
  CHECK(x->token.empty());
}

TEST_CASE("a bad kubeconfig names the file and the field") {
  scratch s;
  auto config = [&](const std::string& cluster, const std::string& user) {
    return s.write("config", "current-context: x\nclusters:\n- name: c\n"
                             "  cluster:\n"
                               + cluster
                               + "contexts:\n- name: x\n  context: {cluster: "
                                 "c, user: u}\nusers:\n- name: u\n  user:\n"
                               + user);
  };
  auto file = (s.dir / "config").string();
  const std::string server = "    server: https://h:1\n";
  const std::string token = "    token: s3cr3t\n";
  struct bad_case {
    std::string cluster, user, context, expected;
  };
  bad_case cases[] = {
    {server, token, "nope",
     file + ": context was not found for specified context: nope"},
    {"    insecure-skip-tls-verify: false\n", token, "",
     file + ": clusters[0] \"c\": server: cluster has no server defined"},
    {server + "    certificate-authority-data: '!!'\n", token, "",
     file + ": clusters[0] \"c\": certificate-authority-data: not valid "
            "base64"},
    {server + "    certificate-authority-data: " + encode_base64("junk")
       + "\n",
     token, "",
     file + ": clusters[0] \"c\": certificate-authority-data: no PEM block "
            "found"},
    {server + "    certificate-authority: ca.crt\n"
       + "    certificate-authority-data: " + encode_base64(ca_pem) + "\n",
     token, "",
     file + ": clusters[0] \"c\": certificate-authority-data: "
            "certificate-authority-data and certificate-authority are both "
            "specified"},
    {server + "    insecure-skip-tls-verify: true\n"
       + "    certificate-authority-data: " + encode_base64(ca_pem) + "\n",
     token, "",
     file + ": clusters[0] \"c\": insecure-skip-tls-verify: specifying a "
            "root certificates file with the insecure flag is not allowed"},
    {server, token + "    client-key: missing.key\n", "",
     file + ": users[0] \"u\": client-key: cannot read "
       + (s.dir / "missing.key").string() + ": No such file or directory"},
    {server, "    auth-provider: {name: gcp}\n", "",
     file + ": users[0] \"u\": auth-provider: not supported"},
    {server, "    exec: {apiVersion: client.authentication.k8s.io/v1alpha1, "
             "command: x}\n",
     "",
     file + ": users[0] \"u\": exec: apiVersion: unsupported"},
    {server, "    exec: {apiVersion: client.authentication.k8s.io/v1, "
             "command: x, interactiveMode: Always}\n",
     "",
     file + ": users[0] \"u\": exec: interactiveMode: Always is not "
            "supported"},
  };
  for (const auto& c : cases) {
    INFO(c.expected);
    auto msg = message_of(load(config(c.cluster, c.user), c.context));
    CHECK(msg.rfind(c.expected, 0) == 0);
    CHECK(msg.find("s3cr3t") == std::string::npos);
  }
  auto no_user = s.write("config2", R"(current-context: x
clusters: [{name: c, cluster: {server: "https://h:1"}}]
contexts: [{name: x, context: {cluster: c, user: ghost}}]
)");
  CHECK(message_of(load(no_user)).find("user \"ghost\" was not found for "
                                       "context \"x\"")
        != std::string::npos);
  CHECK(message_of(load((s.dir / "absent").string()))
        == "kubeconfig: cannot read " + (s.dir / "absent").string()
             + ": No such file or directory");
  auto not_yaml = s.write("config3", "clusters: [unclosed\n");
  CHECK(message_of(load(not_yaml)).rfind(not_yaml + ": not a kubeconfig", 0)
        == 0);
}

TEST_CASE("a kubeconfig's YAML reads as kubectl reads it") {
  scratch s;
  auto file = (s.dir / "config").string();
  auto config = [&](const std::string& cluster) {
    return s.write("config", "current-context: x\nclusters:\n- name: c\n"
                             "  cluster:\n    server: https://h:1\n"
                               + cluster
                               + "contexts: [{name: x, context: {cluster: c}}]"
                                 "\n");
  };
  // YAML 1.1's words are booleans where a boolean belongs.
  auto yes = load(config("    insecure-skip-tls-verify: yes\n"));
  REQUIRE(yes);
  CHECK(yes->insecure_skip_tls_verify);
  CHECK(message_of(load(config("    insecure-skip-tls-verify: 1\n")))
        == file + ": clusters[0] \"c\": insecure-skip-tls-verify: must be "
                  "true or false");
  // A number is not a string (kubectl refuses it too); quoted, it is.
  CHECK(message_of(load(config("    tls-server-name: 10\n")))
        == file + ": clusters[0] \"c\": tls-server-name: must be a string");
  auto quoted = load(config("    tls-server-name: \"10\"\n"));
  REQUIRE(quoted);
  CHECK(quoted->tls_server_name == "10");
  // Anchors and aliases work; only the first document is read.
  auto two = s.write("two", R"(current-context: x
clusters: [{name: c, cluster: &c {server: "https://h:2"}}]
contexts: [{name: x, context: {cluster: c}}]
users: [{name: u, user: {token: t}}, {name: v, user: *c}]
---
this: [is not read
)");
  auto x = load(two);
  REQUIRE(x);
  CHECK(x->server == "https://h:2");
  // A syntax error names its line.
  auto bad = s.write("bad", "current-context: x\nclusters: [unclosed\n");
  CHECK(message_of(load(bad))
        == bad + ": not a kubeconfig: line 3: did not find expected ',' or "
                 "']', found the end of the input");
  // JSON is read too.
  auto json = s.write("json", R"({"current-context": "x",
 "clusters": [{"name": "c", "cluster": {"server": "https://h:3"}}],
 "contexts": [{"name": "x", "context": {"cluster": "c"}}]})");
  auto j = load(json);
  REQUIRE(j);
  CHECK(j->server == "https://h:3");
}

TEST_CASE("an exec plugin is read with its arguments and environment") {
  scratch s;
  auto path = s.write("config", R"(current-context: x
clusters: [{name: c, cluster: {server: "https://h:1"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./bin/cred
      args: [get, --json]
      env: [{name: A, value: b}]
      provideClusterInfo: true
)");
  auto x = load(path);
  REQUIRE(x);
  REQUIRE(x->exec);
  CHECK(x->exec->command == (s.dir / "./bin/cred").string());
  CHECK(x->exec->args == std::vector<std::string>{"get", "--json"});
  REQUIRE(x->exec->env.size() == 1);
  CHECK(x->exec->env[0].second == "b");
  CHECK(x->exec->provide_cluster_info);
}

TEST_CASE("the in-cluster configuration reads the service account") {
  scratch s;
  in_cluster_environment env;
  env.account_dir = s.dir.string();
  CHECK(message_of(load_in_cluster(env)).find("KUBERNETES_SERVICE_HOST")
        != std::string::npos);
  env.service_host = "fd00::1";
  env.service_port = "443";
  CHECK(message_of(load_in_cluster(env))
        == "in-cluster: cannot read " + (s.dir / "token").string()
             + ": No such file or directory");
  s.write("token", "t");
  s.write("ca.crt", ca_pem);
  s.write("namespace", "kube-system\n");
  auto x = load_in_cluster(env);
  REQUIRE(x);
  CHECK(x->server == "https://[fd00::1]:443");
  CHECK(x->token_file == (s.dir / "token").string());
  CHECK(x->ca_pem == ca_pem);
  CHECK(x->namespace_name == "kube-system");
}

TEST_CASE("without a kubeconfig, a pod uses its service account") {
  scratch s;
  s.write("account/token", "t");
  s.write("account/ca.crt", ca_pem);
  in_cluster_environment env;
  env.account_dir = (s.dir / "account").string();
  env.service_host = "10.96.0.1";
  env.service_port = "443";
  REQUIRE(in_cluster_possible(env));
  kubeconfig_selection sel;
  sel.home = (s.dir / "home").string(); // no ~/.kube/config
  auto x = resolve_client_config(sel, env);
  REQUIRE(x);
  CHECK(x->origin == "in-cluster");
  CHECK(x->server == "https://10.96.0.1:443");
  // $KUBECONFIG naming no file that exists: in-cluster too.
  sel.env_list = (s.dir / "missing").string();
  auto y = resolve_client_config(sel, env);
  REQUIRE(y);
  CHECK(y->origin == "in-cluster");
  // A kubeconfig that exists wins, as with kubectl.
  auto path = s.write("home/.kube/config", R"(current-context: x
clusters: [{name: c, cluster: {server: "http://127.0.0.1:8080"}}]
contexts: [{name: x, context: {cluster: c}}]
)");
  sel.env_list.clear();
  auto z = resolve_client_config(sel, env);
  REQUIRE(z);
  CHECK(z->origin == path);
  // --kubeconfig is always used, and a missing one is an error.
  sel.explicit_path = (s.dir / "nope").string();
  CHECK(message_of(resolve_client_config(sel, env)).find("nope")
        != std::string::npos);
}

TEST_CASE("outside a pod, no kubeconfig is load_kubeconfig's error") {
  scratch s;
  in_cluster_environment env;
  env.account_dir = (s.dir / "account").string();
  env.service_host = "10.96.0.1";
  env.service_port = "443";
  CHECK_FALSE(in_cluster_possible(env)); // no token file
  kubeconfig_selection sel;
  sel.home = s.dir.string();
  auto message = message_of(resolve_client_config(sel, env));
  CHECK(message == message_of(load_kubeconfig(sel)));
  s.write("account/token", "t");
  env.service_port.clear();
  CHECK_FALSE(in_cluster_possible(env));
}
