// The wire source end to end over the transports a real cluster uses:
// managers over a cluster (libcurl, one I/O thread) against `podref
// apiserver`'s front in process, over h2c with prior knowledge and over TLS
// with h2 by ALPN, authenticated by the kubeconfig the server writes (CA
// data and a token), by a client certificate of the server's CA, by a
// token file and by an exec plugin; tls-server-name; and what a wrong CA
// or a wrong token becomes.
#include "podref/runtime/cluster.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/runtime/typed_managers.hpp"
#include "podref/wire/authn.hpp"
#include "podref/wire/http_server.hpp"
#include "podref/wire/kubeconfig.hpp"
#include "podref/wire/server_kubeconfig.hpp"
#include "podref/wire/tls_material.hpp"

#include "support/eventually.hpp"
#include "support/pod_builders.hpp"

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "support/temp_dir.hpp"

#include <chrono>
#include <string>
#include <vector>

using namespace podref;
using podref::test::eventually;
using podref::test::make_secret;
using podref::test::pod_with_secrets;
using podref::test::temp_dir;

namespace {

constexpr const char* good_token = "tok-node-0123456789";

std::string read_all(const std::string& path) {
  auto x = wire::read_small_file(path);
  REQUIRE(x);
  return *x;
}

void write_file(const std::string& path, const std::string& text) {
  REQUIRE(wire::write_private_file(path, text, 0600));
}

/// Watch, with reads waiting up to 10 s for a first sync (sanitizer builds
/// under load).
manager_options watching() {
  manager_options o;
  o.strategy = strategy::watch;
  o.sync_timeout = std::chrono::seconds(10);
  return o;
}

std::string value_of(secret_manager& mgr, const std::string& name) {
  auto got = mgr.get_secret("default", name);
  if (!got)
    return "error: " + got.error().message;
  auto i = (*got)->data.find("k");
  return i == (*got)->data.end() ? "" : i->second;
}

std::vector<std::string> names(const std::string& prefix, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i)
    out.push_back(prefix + std::to_string(i));
  return out;
}

source_action_counts counts_of(api_server& api) {
  source_action_counts out;
  auto log = api.actions();
  REQUIRE(log);
  for (const auto& a : *log)
    out.add(a.verb);
  return out;
}

/// The failure a manager shows for `name`, "" while there is none.
std::string failure_of(secret_manager& mgr, const std::string& name) {
  auto st = mgr.status("default", name);
  if (!st || !st->failure)
    return {};
  return st->failure->message;
}

std::uint64_t requests_with(const cluster_stats& st, const std::string& key) {
  auto i = st.requests.find(key);
  return i == st.requests.end() ? 0 : i->second;
}

const std::vector<std::string> local_hosts{"127.0.0.1", "::1", "localhost"};

/// podref's API server behind an HTTPS front that takes `good_token` and
/// client certificates of its CA, and the kubeconfig it writes.
struct tls_front {
  temp_dir dir;
  wire::tls_files files;
  runtime rt;
  api_server api{rt};
  std::unique_ptr<wire::http_server> front;
  std::string kubeconfig;

  explicit tls_front(std::size_t max_streams = 250,
                     const std::vector<std::string>& hosts = local_hosts) {
    auto made = wire::ensure_tls_dir(dir.path + "/tls", hosts);
    REQUIRE(made);
    files = *made;
    auto tokens = wire::token_table::parse(
      std::string{good_token} + ",system:node:n1,u-1,\"system:nodes\"\n",
      "tokens.csv");
    REQUIRE(tokens);
    wire::http_server_options opts;
    opts.tls = wire::http_tls_options{files.cert, files.key, files.ca_cert};
    opts.tokens = std::make_shared<const wire::token_table>(*tokens);
    opts.max_streams = max_streams;
    auto s = wire::http_server::start(rt.system(), api.current_actor(), opts);
    REQUIRE(s);
    front = std::move(s).value();
    // What `podref apiserver --write-kubeconfig` writes.
    kubeconfig = dir.path + "/kubeconfig";
    REQUIRE(wire::write_kubeconfig(kubeconfig, server_kc(good_token)));
  }

  ~tls_front() {
    front->stop();
  }

  wire::server_kubeconfig server_kc(std::string token) const {
    wire::server_kubeconfig kc;
    kc.url = front->url();
    kc.ca_pem = read_all(files.ca_cert);
    kc.token = std::move(token);
    return kc;
  }

  /// A kubeconfig like the server's whose user is `user_yaml` (the lines
  /// under `user:`, indented by four).
  std::string kubeconfig_with_user(const std::string& name,
                                   const std::string& user_yaml) const {
    auto text = wire::kubeconfig_text(server_kc(""));
    auto at = text.find("  user: {}\n");
    REQUIRE(at != std::string::npos);
    text.replace(at, 11, "  user:\n" + user_yaml);
    auto path = dir.path + "/" + name;
    write_file(path, text);
    return path;
  }
};

wire::client_config load(const std::string& kubeconfig) {
  wire::kubeconfig_selection sel;
  sel.explicit_path = kubeconfig;
  auto cfg = wire::load_kubeconfig(sel);
  REQUIRE(cfg);
  return *cfg;
}

std::unique_ptr<cluster> connect(runtime& rt, const wire::client_config& cfg,
                                 const cluster_options& opts = {}) {
  auto c = cluster::connect(rt, cfg, opts);
  REQUIRE(c);
  return std::move(c).value();
}

/// Creates secrets `names` (value "v1"), registers one pod referencing
/// them all and waits for the sync; then updates each and waits until the
/// manager shows every update.
void sync_and_update(api_server& api, secret_manager& mgr,
                     const std::vector<std::string>& secrets) {
  for (const auto& n : secrets)
    REQUIRE(api.create(make_secret("default", n, {{"k", "v1"}})));
  REQUIRE(mgr.register_pod_and_wait(
    pod_with_secrets("default", "p1", "uid-1", secrets, {})));
  for (const auto& n : secrets)
    REQUIRE(value_of(mgr, n) == "v1");
  for (const auto& n : secrets)
    REQUIRE(api.update(make_secret("default", n, {{"k", "v2"}})));
  CHECK(eventually([&] {
    for (const auto& n : secrets)
      if (value_of(mgr, n) != "v2")
        return false;
    return true;
  }));
}

} // namespace

TEST_CASE("wire_ h2c with prior knowledge multiplexes every watch on one "
          "connection") {
  runtime rt;
  api_server api{rt};
  auto started = wire::http_server::start(rt.system(), api.current_actor(), {});
  REQUIRE(started);
  auto front = std::move(started).value();
  wire::client_config cfg;
  cfg.server = front->url();
  cfg.origin = "test";
  cluster_options opts;
  opts.http.plain_http = wire::plain_http_mode::h2_prior_knowledge;
  auto cl = connect(rt, cfg, opts);
  const auto secrets = names("s", 40);
  {
    secret_manager mgr{rt, *cl, watching()};
    sync_and_update(api, mgr, secrets);
    REQUIRE(eventually([&] { return cl->stats().open_streams == 40; }));
    auto st = cl->stats();
    // One list and one watch each, every reply over HTTP/2, one connection.
    CHECK(requests_with(st, "GET 200") == 40);
    CHECK(st.http2_responses == 80);
    CHECK(st.connects == 1);
    auto n = counts_of(api);
    CHECK(n.lists == 40);
    CHECK(n.watches == 40);
  }
  CHECK(eventually([&] { return cl->stats().open_streams == 0; }));
  cl.reset();
  front->stop();
}

TEST_CASE("wire_ TLS with h2 by ALPN through the kubeconfig the server "
          "writes") {
  tls_front f;
  auto cfg = load(f.kubeconfig);
  CHECK(cfg.server.rfind("https://127.0.0.1:", 0) == 0);
  CHECK(cfg.token == good_token);
  auto cl = connect(f.rt, cfg);
  const auto secrets = names("s", 20);
  {
    secret_manager mgr{f.rt, *cl, watching()};
    sync_and_update(f.api, mgr, secrets);
    REQUIRE(eventually([&] { return cl->stats().open_streams == 20; }));
    auto st = cl->stats();
    CHECK(requests_with(st, "GET 200") == 20);
    CHECK(st.http2_responses == 40);
    CHECK(st.connects == 1);
    auto n = counts_of(f.api);
    CHECK(n.lists == 20);
    CHECK(n.watches == 20);
    REQUIRE(f.api.remove(resource::secrets, "default", "s3"));
    CHECK(eventually([&] {
      return value_of(mgr, "s3") == "error: secret \"s3\" not found";
    }));
  }
  cl.reset();
}

TEST_CASE("wire_ a client certificate signed by the server's CA "
          "authenticates") {
  tls_front f;
  auto cert = f.dir.path + "/node.crt";
  auto key = f.dir.path + "/node.key";
  REQUIRE(wire::issue_client_certificate(f.files.ca_cert, f.files.ca_key,
                                         "system:node:n1", {"system:nodes"},
                                         cert, key));
  auto path = f.kubeconfig_with_user("cert.kubeconfig",
                                     "    client-certificate: node.crt\n"
                                     "    client-key: node.key\n");
  auto cfg = load(path);
  CHECK(cfg.token.empty());
  CHECK_FALSE(cfg.client_cert_pem.empty());
  auto cl = connect(f.rt, cfg);
  {
    secret_manager mgr{f.rt, *cl, watching()};
    sync_and_update(f.api, mgr, names("s", 3));
    auto st = cl->stats();
    CHECK(requests_with(st, "GET 200") == 3);
    CHECK(requests_with(st, "GET 401") == 0);
    CHECK(st.connects == 1);
  }
  cl.reset();
}

TEST_CASE("wire_ a wrong CA is a clear error of that object retried with "
          "backoff") {
  tls_front f;
  temp_dir other;
  auto foreign = wire::ensure_tls_dir(other.path + "/tls", local_hosts);
  REQUIRE(foreign);
  auto cfg = load(f.kubeconfig);
  cfg.ca_pem = read_all(foreign->ca_cert);
  auto cl = connect(f.rt, cfg);
  REQUIRE(f.api.create(make_secret("default", "s1", {{"k", "v1"}})));
  {
    auto opts = watching();
    opts.sync_timeout = std::chrono::milliseconds(200);
    opts.backoff_initial = std::chrono::milliseconds(300);
    secret_manager mgr{f.rt, *cl, opts};
    REQUIRE(mgr.register_pod(
      pod_with_secrets("default", "p1", "uid-1", {"s1"}, {})));
    REQUIRE(eventually([&] { return !failure_of(mgr, "s1").empty(); }));
    auto msg = failure_of(mgr, "s1");
    INFO(msg);
    CHECK(msg.rfind("list secrets default/s1: ", 0) == 0);
    CHECK(msg.find("certificate") != std::string::npos);
    CHECK(msg.find(good_token) == std::string::npos);
    // The read fails (the object never synced), naming no value.
    CHECK(value_of(mgr, "s1").rfind("error: ", 0) == 0);
    // Not a fast retry: the reflector's backoff (300 ms, doubling, jitter
    // upwards) spaces the attempts, so 1.5 s hold at most 4 of them.
    auto first = std::chrono::steady_clock::now();
    auto at_first = requests_with(cl->stats(), "GET 0");
    REQUIRE(eventually(
      [&] { return requests_with(cl->stats(), "GET 0") >= at_first + 2; }));
    auto two_more = std::chrono::steady_clock::now() - first;
    CHECK(two_more >= std::chrono::milliseconds(300 + 600 - 50));
    // Nothing reached the API: the handshake failed.
    CHECK(counts_of(f.api).lists == 0);
  }
  cl.reset();
}

TEST_CASE("wire_ a wrong token's 401 reaches the caller as an error") {
  tls_front f;
  auto path = f.dir.path + "/wrong.kubeconfig";
  REQUIRE(wire::write_kubeconfig(path, f.server_kc("tok-wrong")));
  auto cl = connect(f.rt, load(path));
  REQUIRE(f.api.create(make_secret("default", "s1", {{"k", "v1"}})));
  {
    auto opts = watching();
    opts.sync_timeout = std::chrono::milliseconds(200);
    opts.backoff_initial = std::chrono::milliseconds(300);
    secret_manager mgr{f.rt, *cl, opts};
    REQUIRE(mgr.register_pod(
      pod_with_secrets("default", "p1", "uid-1", {"s1"}, {})));
    REQUIRE(eventually([&] { return !failure_of(mgr, "s1").empty(); }));
    CHECK(failure_of(mgr, "s1") == "Unauthorized");
    CHECK(value_of(mgr, "s1").rfind("error: ", 0) == 0);
    CHECK(requests_with(cl->stats(), "GET 401") >= 1);
    CHECK(counts_of(f.api).lists == 0);
  }
  cl.reset();
}

TEST_CASE("wire_ a token file replaced after a 401 is read again") {
  tls_front f;
  auto token_path = f.dir.path + "/token";
  write_file(token_path, "tok-expired\n");
  auto path = f.kubeconfig_with_user("file.kubeconfig",
                                     "    tokenFile: token\n");
  auto cfg = load(path);
  CHECK(cfg.token.empty());
  CHECK(cfg.token_file == token_path);
  cluster_options copts;
  // Only the 401 makes the client read the file again within this test.
  copts.http.token_file_reread = std::chrono::hours(1);
  auto cl = connect(f.rt, cfg, copts);
  REQUIRE(f.api.create(make_secret("default", "s1", {{"k", "v1"}})));
  {
    auto opts = watching();
    opts.backoff_initial = std::chrono::milliseconds(100);
    secret_manager mgr{f.rt, *cl, opts};
    REQUIRE(mgr.register_pod(
      pod_with_secrets("default", "p1", "uid-1", {"s1"}, {})));
    REQUIRE(eventually(
      [&] { return requests_with(cl->stats(), "GET 401") >= 1; }));
    // Counted on the I/O thread before the reflector has the failure.
    CHECK(eventually([&] { return failure_of(mgr, "s1") == "Unauthorized"; }));
    // The token rotates; the retry after the backoff reads the new one.
    write_file(token_path, std::string{good_token} + "\n");
    CHECK(eventually([&] { return value_of(mgr, "s1") == "v1"; }));
    CHECK(failure_of(mgr, "s1").empty());
    REQUIRE(f.api.update(make_secret("default", "s1", {{"k", "v2"}})));
    CHECK(eventually([&] { return value_of(mgr, "s1") == "v2"; }));
    auto st = cl->stats();
    CHECK(requests_with(st, "GET 200") == 1);
    CHECK(st.open_streams == 1);
  }
  cl.reset();
}

/// A kubeconfig user whose exec plugin prints the file `reply`.
std::string exec_user(const std::string& reply) {
  return "    exec:\n"
         "      apiVersion: client.authentication.k8s.io/v1\n"
         "      command: /bin/cat\n"
         "      args: [\"" + reply + "\"]\n"
         "      interactiveMode: Never\n";
}

std::string exec_reply(const std::string& status_fields) {
  return R"({"apiVersion":"client.authentication.k8s.io/v1",)"
         R"("kind":"ExecCredential","status":{)" + status_fields + "}}";
}

TEST_CASE("wire_ an exec plugin's token authenticates; a 401 runs it "
          "again") {
  tls_front f;
  auto reply = f.dir.path + "/reply.json";
  write_file(reply, exec_reply(R"("token":"tok-expired")"));
  auto cfg = load(f.kubeconfig_with_user("exec.kubeconfig", exec_user(reply)));
  REQUIRE(cfg.exec);
  cluster_options copts;
  copts.http.exec.min_interval = std::chrono::milliseconds(0);
  auto cl = connect(f.rt, cfg, copts);
  CHECK(cl->stats().exec_runs == 1);
  REQUIRE(f.api.create(make_secret("default", "s1", {{"k", "v1"}})));
  {
    auto opts = watching();
    opts.backoff_initial = std::chrono::milliseconds(100);
    secret_manager mgr{f.rt, *cl, opts};
    REQUIRE(mgr.register_pod(
      pod_with_secrets("default", "p1", "uid-1", {"s1"}, {})));
    REQUIRE(eventually([&] { return failure_of(mgr, "s1") == "Unauthorized"; }));
    // Every 401 to the rejected token ran the plugin again (one run at a
    // time); a rotated token is picked up by the next retry.
    CHECK(cl->stats().exec_runs >= 2);
    write_file(reply, exec_reply(std::string{R"("token":")"} + good_token
                                 + R"(","expirationTimestamp":"2099-01-01T00:00:00Z")"));
    CHECK(eventually([&] { return value_of(mgr, "s1") == "v1"; }));
    REQUIRE(f.api.update(make_secret("default", "s1", {{"k", "v2"}})));
    CHECK(eventually([&] { return value_of(mgr, "s1") == "v2"; }));
    auto st = cl->stats();
    CHECK(requests_with(st, "GET 200") == 1);
    CHECK(st.exec_failures == 0);
    // Accepted and not expired: no run after the one that gave it.
    auto runs = st.exec_runs;
    REQUIRE(f.api.update(make_secret("default", "s1", {{"k", "v3"}})));
    CHECK(eventually([&] { return value_of(mgr, "s1") == "v3"; }));
    CHECK(cl->stats().exec_runs == runs);
  }
  cl.reset();
}

TEST_CASE("wire_ an exec plugin's client certificate authenticates") {
  tls_front f;
  auto cert = f.dir.path + "/node.crt";
  auto key = f.dir.path + "/node.key";
  REQUIRE(wire::issue_client_certificate(f.files.ca_cert, f.files.ca_key,
                                         "system:node:n1", {"system:nodes"},
                                         cert, key));
  auto reply = f.dir.path + "/reply.json";
  write_file(reply, exec_reply(
                      R"("clientCertificateData":)"
                      + nlohmann::json(read_all(cert)).dump()
                      + R"(,"clientKeyData":)"
                      + nlohmann::json(read_all(key)).dump()));
  auto cl = connect(
    f.rt, load(f.kubeconfig_with_user("exec.kubeconfig", exec_user(reply))));
  {
    secret_manager mgr{f.rt, *cl, watching()};
    sync_and_update(f.api, mgr, names("s", 2));
    auto st = cl->stats();
    CHECK(requests_with(st, "GET 200") == 2);
    CHECK(requests_with(st, "GET 401") == 0);
    CHECK(st.exec_runs == 1);
  }
  cl.reset();
}

TEST_CASE("wire_ an exec plugin that fails fails the connect, naming it") {
  tls_front f;
  auto cfg = load(f.kubeconfig_with_user(
    "exec.kubeconfig", exec_user(f.dir.path + "/absent.json")));
  auto cl = cluster::connect(f.rt, cfg);
  REQUIRE_FALSE(cl);
  CHECK(cl.error().message
        == f.dir.path + "/exec.kubeconfig: exec plugin \"/bin/cat\": exited "
                        "with status 1");
}

TEST_CASE("wire_ tls-server-name verifies the certificate by that name") {
  // The serving certificate names only apiserver.test, not 127.0.0.1.
  tls_front f{250, {"apiserver.test"}};
  auto cfg = load(f.kubeconfig);
  REQUIRE(f.api.create(make_secret("default", "s1", {{"k", "v1"}})));
  SECTION("with it, the URL's address is dialled and the name verified") {
    cfg.tls_server_name = "apiserver.test";
    auto cl = connect(f.rt, cfg);
    {
      secret_manager mgr{f.rt, *cl, watching()};
      REQUIRE(mgr.register_pod_and_wait(
        pod_with_secrets("default", "p1", "uid-1", {"s1"}, {})));
      CHECK(value_of(mgr, "s1") == "v1");
      CHECK(requests_with(cl->stats(), "GET 200") == 1);
    }
    cl.reset();
  }
  SECTION("without it, the address does not match the certificate") {
    auto cl = connect(f.rt, cfg);
    {
      auto opts = watching();
      opts.sync_timeout = std::chrono::milliseconds(200);
      secret_manager mgr{f.rt, *cl, opts};
      REQUIRE(mgr.register_pod(
        pod_with_secrets("default", "p1", "uid-1", {"s1"}, {})));
      REQUIRE(eventually([&] { return !failure_of(mgr, "s1").empty(); }));
      INFO(failure_of(mgr, "s1"));
      CHECK(failure_of(mgr, "s1").find("127.0.0.1") != std::string::npos);
      CHECK(counts_of(f.api).lists == 0);
    }
    cl.reset();
  }
}

TEST_CASE("wire_ more than 250 watches over TLS open a second connection") {
  // The real server's (and podref's) 250 streams per connection: 260
  // watches need two connections, and every one still syncs and follows.
  tls_front f;
  auto cl = connect(f.rt, load(f.kubeconfig));
  const auto secrets = names("s", 260);
  {
    secret_manager mgr{f.rt, *cl, watching()};
    sync_and_update(f.api, mgr, secrets);
    REQUIRE(eventually([&] { return cl->stats().open_streams == 260; }));
    auto st = cl->stats();
    CHECK(st.connects == 2);
    CHECK(st.http2_responses == 520);
    CHECK(requests_with(st, "GET 200") == 260);
    auto n = counts_of(f.api);
    CHECK(n.lists == 260);
    CHECK(n.watches == 260);
  }
  cl.reset();
}

/// The HTTP front on plain HTTP (h2c) with `max_streams` per connection,
/// and a cluster on it speaking HTTP/2 with prior knowledge and the same
/// limit, without the client-side rate limit (its requests come in bursts).
struct h2c_front {
  runtime rt;
  api_server api{rt};
  std::unique_ptr<wire::http_server> front;
  std::unique_ptr<cluster> cl;

  explicit h2c_front(std::size_t max_streams,
                     std::size_t connections_per_handle = 16) {
    wire::http_server_options sopts;
    sopts.max_streams = max_streams;
    sopts.max_watches = 10000;
    auto started = wire::http_server::start(rt.system(), api.current_actor(),
                                            sopts);
    REQUIRE(started);
    front = std::move(started).value();
    wire::client_config cfg;
    cfg.server = front->url();
    cfg.origin = "test";
    cluster_options opts;
    opts.http.plain_http = wire::plain_http_mode::h2_prior_knowledge;
    opts.http.max_streams_per_connection = max_streams;
    opts.http.connections_per_handle = connections_per_handle;
    opts.source.qps = 0;
    cl = connect(rt, cfg, opts);
  }

  ~h2c_front() {
    cl.reset();
    front->stop();
  }

  /// Syncs and follows `secrets` with a watch each; checks that every
  /// request went over HTTP/2 on `connections` connections at most.
  void watch_all(const std::vector<std::string>& secrets,
                 std::uint64_t connections) {
    secret_manager mgr{rt, *cl, watching()};
    sync_and_update(api, mgr, secrets);
    REQUIRE(eventually([&] {
      return cl->stats().open_streams == secrets.size();
    }));
    auto st = cl->stats();
    INFO("connects " << st.connects);
    CHECK(st.connects <= connections);
    CHECK(st.http2_responses == 2 * secrets.size());
    CHECK(requests_with(st, "GET 200") == secrets.size());
    auto n = counts_of(api);
    CHECK(n.lists == secrets.size());
    CHECK(n.watches == secrets.size());
  }
};

TEST_CASE("wire_ h2c watches beyond a connection's streams open the "
          "connections they need, not one each") {
  // Both limits cut to 16 to keep this cheap: 40 watches need three
  // connections; a burst of transfers past a full connection dials one
  // more, not one each (side by side, each on a libcurl handle of its own).
  h2c_front f{16};
  f.watch_all(names("s", 40), 4);
  auto st = f.cl->client()->stats();
  CHECK(st.connects >= 3);
  CHECK(st.multi_handles <= st.connects);
}

TEST_CASE("wire_ h2c connections past a handle's share go to another "
          "libcurl handle, and every watch follows") {
  // 4 streams per connection, 2 connections per handle; watches added one
  // at a time (no burst): the first handle opens its two connections, then
  // the next handle its two, ... 20 watches: 5 connections on 3 handles.
  h2c_front f{4, 2};
  const auto secrets = names("s", 20);
  for (const auto& n : secrets)
    REQUIRE(f.api.create(make_secret("default", n, {{"k", "v1"}})));
  secret_manager mgr{f.rt, *f.cl, watching()};
  for (std::size_t i = 0; i < secrets.size(); ++i) {
    REQUIRE(mgr.register_pod_and_wait(
      pod_with_secrets("default", "p" + std::to_string(i),
                       "uid-" + std::to_string(i), {secrets[i]}, {})));
    REQUIRE(eventually([&] { return f.cl->stats().open_streams == i + 1; }));
  }
  auto st = f.cl->client()->stats();
  CHECK(st.connects == 5);
  CHECK(st.multi_handles == 3);
  for (const auto& n : secrets)
    REQUIRE(f.api.update(make_secret("default", n, {{"k", "v2"}})));
  CHECK(eventually([&] {
    for (const auto& n : secrets)
      if (value_of(mgr, n) != "v2")
        return false;
    return true;
  }));
}

TEST_CASE("wire_ h2c: 260 watches at the default 250 streams take two "
          "connections") {
  h2c_front f{250};
  f.watch_all(names("s", 260), 2);
}
