// The HTTP front over TLS, in process: generated material in a temporary
// directory, podref's API server behind http_server with tokens and client
// certificates, and libcurl (OpenSSL) as the client.
#include "podref/wire/access.hpp"
#include "podref/wire/authn.hpp"
#include "podref/wire/http_server.hpp"
#include "podref/wire/kubeconfig.hpp"
#include "podref/wire/server_kubeconfig.hpp"
#include "podref/wire/tls_material.hpp"

#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"

#include "support/pod_builders.hpp"

#include <catch2/catch.hpp>

#include "support/temp_dir.hpp"

#include <chrono>
#include <cstdlib>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <caf/actor.hpp>

using namespace podref;
using json = nlohmann::json;

using podref::test::temp_dir;

namespace {

const json unauthorized_body = json::parse(
  R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
  R"("message":"Unauthorized","reason":"Unauthorized","code":401})");

constexpr const char* good_token = "tok-alice-0123456789";

std::string read_all(const std::string& path) {
  auto x = wire::read_small_file(path);
  REQUIRE(x);
  return *x;
}

unsigned mode_of(const std::string& path) {
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

/// What one curl request got: the HTTP status (0 when it failed below
/// HTTP), the body, and curl's code.
struct fetched {
  long status = 0;
  std::string body;
  CURLcode code = CURLE_OK;
  long http_version = 0; // CURL_HTTP_VERSION_1_1, _2_0, ...
};

struct request_options {
  std::string ca_file;
  std::string ca_pem; // instead of ca_file
  std::string token;
  std::string cert_file;
  std::string key_file;
  /// What curl offers by ALPN: CURL_HTTP_VERSION_2TLS offers h2.
  long http_version = CURL_HTTP_VERSION_1_1;
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

fetched fetch(const std::string& url, const request_options& opts) {
  fetched out;
  auto* h = curl_easy_init();
  REQUIRE(h != nullptr);
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, opts.http_version);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &out.body);
  if (!opts.ca_file.empty())
    curl_easy_setopt(h, CURLOPT_CAINFO, opts.ca_file.c_str());
  curl_blob blob{const_cast<char*>(opts.ca_pem.data()), opts.ca_pem.size(),
                 CURL_BLOB_COPY};
  if (!opts.ca_pem.empty())
    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
  curl_slist* headers = nullptr;
  std::string auth = "Authorization: Bearer " + opts.token;
  if (!opts.token.empty()) {
    headers = curl_slist_append(headers, auth.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  }
  if (!opts.cert_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLCERT, opts.cert_file.c_str());
    curl_easy_setopt(h, CURLOPT_SSLKEY, opts.key_file.c_str());
  }
  out.code = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out.status);
  curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &out.http_version);
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  return out;
}

const std::vector<std::string> local_hosts{"127.0.0.1", "::1", "localhost"};

/// podref's API server behind an HTTPS front with the material of `dir`.
struct tls_fixture {
  temp_dir dir;
  wire::tls_files files;
  runtime rt;
  api_server api{rt};
  std::unique_ptr<wire::http_server> server;
  std::string base;

  explicit tls_fixture(bool anonymous = false) {
    auto made = wire::ensure_tls_dir(dir.path + "/tls", local_hosts);
    REQUIRE(made);
    files = *made;
    start(anonymous);
  }

  void start(bool anonymous,
             std::chrono::milliseconds read_timeout = std::chrono::seconds(10)) {
    auto tokens = wire::token_table::parse(
      std::string{good_token} + ",alice,u-1,\"dev,ops\"\n", "tokens.csv");
    REQUIRE(tokens);
    wire::http_server_options opts;
    opts.tls = wire::http_tls_options{files.cert, files.key, files.ca_cert};
    opts.tokens = std::make_shared<const wire::token_table>(*tokens);
    opts.anonymous = anonymous;
    opts.request_read_timeout = read_timeout;
    auto s = wire::http_server::start(
      rt.system(), api.current_actor(), opts);
    REQUIRE(s);
    server = std::move(s).value();
    base = server->url();
  }

  request_options with_token(std::string token) const {
    request_options o;
    o.ca_file = files.ca_cert;
    o.token = std::move(token);
    return o;
  }
};

const std::string secrets_path = "/api/v1/namespaces/default/secrets";

} // namespace

TEST_CASE("the generated material is reused, keys are 0600") {
  temp_dir dir;
  auto first = wire::ensure_tls_dir(dir.path + "/tls", local_hosts);
  REQUIRE(first);
  CHECK(first->made_ca);
  CHECK(mode_of(first->ca_key) == 0600);
  CHECK(mode_of(first->key) == 0600);
  CHECK(mode_of(dir.path + "/tls") == 0700);
  auto ca = read_all(first->ca_cert);
  auto cert = read_all(first->cert);
  auto again = wire::ensure_tls_dir(dir.path + "/tls", local_hosts);
  REQUIRE(again);
  CHECK_FALSE(again->made_ca);
  CHECK(read_all(again->ca_cert) == ca);
  CHECK(read_all(again->cert) == cert);
  SECTION("a new listen address reissues the serving certificate only") {
    auto hosts = local_hosts;
    hosts.push_back("10.1.2.3");
    auto wider = wire::ensure_tls_dir(dir.path + "/tls", hosts);
    REQUIRE(wider);
    CHECK_FALSE(wider->made_ca);
    CHECK(read_all(wider->ca_cert) == ca);
    CHECK(read_all(wider->cert) != cert);
  }
  SECTION("a key readable by others is refused") {
    ::chmod(first->ca_key.c_str(), 0644);
    auto refused = wire::ensure_tls_dir(dir.path + "/tls", local_hosts);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("ca.key") != std::string::npos);
    CHECK(refused.error().message.find("chmod 600") != std::string::npos);
  }
  SECTION("a CA certificate without its key is an error") {
    ::unlink(first->ca_key.c_str());
    auto refused = wire::ensure_tls_dir(dir.path + "/tls", local_hosts);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("ca.crt without ca.key")
          != std::string::npos);
  }
}

TEST_CASE("a bearer token authenticates; a wrong one or none gets 401") {
  tls_fixture f;
  CHECK(f.base.rfind("https://127.0.0.1:", 0) == 0);
  auto good = fetch(f.base + secrets_path, f.with_token(good_token));
  CHECK(good.code == CURLE_OK);
  CHECK(good.status == 200);
  CHECK(json::parse(good.body).at("kind") == "SecretList");
  auto wrong = fetch(f.base + secrets_path, f.with_token("tok-wrong"));
  CHECK(wrong.status == 401);
  CHECK(json::parse(wrong.body) == unauthorized_body);
  auto none = fetch(f.base + secrets_path, f.with_token(""));
  CHECK(none.status == 401);
  CHECK(json::parse(none.body) == unauthorized_body);
  // Authentication comes first, as the real server's: even /healthz.
  CHECK(fetch(f.base + "/healthz", f.with_token("tok-wrong")).status == 401);
  CHECK(fetch(f.base + "/healthz", f.with_token("")).status == 401);
  CHECK(fetch(f.base + "/nowhere", f.with_token("")).status == 401);
  CHECK(fetch(f.base + "/healthz", f.with_token(good_token)).status == 200);
  // /metrics too: the counts need a credential, as on the real server.
  CHECK(fetch(f.base + "/metrics", f.with_token("")).status == 401);
  auto metrics = fetch(f.base + "/metrics", f.with_token(good_token));
  CHECK(metrics.status == 200);
  CHECK(metrics.body.find("apiserver_request_total{code=\"401\"")
        != std::string::npos);
}

TEST_CASE("a client certificate of the server's CA authenticates") {
  tls_fixture f;
  auto cert = f.dir.path + "/alice.crt";
  auto key = f.dir.path + "/alice.key";
  REQUIRE(wire::issue_client_certificate(f.files.ca_cert, f.files.ca_key,
                                         "alice", {"dev"}, cert, key));
  CHECK(mode_of(key) == 0600);
  auto opts = f.with_token("");
  opts.cert_file = cert;
  opts.key_file = key;
  auto got = fetch(f.base + secrets_path, opts);
  CHECK(got.code == CURLE_OK);
  CHECK(got.status == 200);
  SECTION("one of another CA is refused in the handshake") {
    temp_dir other;
    auto made = wire::ensure_tls_dir(other.path + "/tls", local_hosts);
    REQUIRE(made);
    auto foreign_cert = other.path + "/mallory.crt";
    auto foreign_key = other.path + "/mallory.key";
    REQUIRE(wire::issue_client_certificate(made->ca_cert, made->ca_key,
                                           "alice", {"system:masters"},
                                           foreign_cert, foreign_key));
    opts.cert_file = foreign_cert;
    opts.key_file = foreign_key;
    auto refused = fetch(f.base + secrets_path, opts);
    CHECK(refused.code != CURLE_OK);
    CHECK(refused.status == 0);
  }
  SECTION("the serving certificate is no client certificate") {
    opts.cert_file = f.files.cert;
    opts.key_file = f.files.key;
    auto refused = fetch(f.base + secrets_path, opts);
    CHECK(refused.status != 200);
  }
  // The server took no harm.
  CHECK(fetch(f.base + secrets_path, f.with_token(good_token)).status == 200);
}

TEST_CASE("h2 by ALPN: every stream's credentials are checked") {
  tls_fixture f;
  auto h2 = [&](request_options o) {
    o.http_version = CURL_HTTP_VERSION_2TLS;
    return o;
  };
  auto good = fetch(f.base + secrets_path, h2(f.with_token(good_token)));
  CHECK(good.code == CURLE_OK);
  CHECK(good.http_version == CURL_HTTP_VERSION_2_0);
  CHECK(good.status == 200);
  CHECK(json::parse(good.body).at("kind") == "SecretList");
  auto wrong = fetch(f.base + secrets_path, h2(f.with_token("tok-wrong")));
  CHECK(wrong.http_version == CURL_HTTP_VERSION_2_0);
  CHECK(wrong.status == 401);
  CHECK(json::parse(wrong.body) == unauthorized_body);
  CHECK(fetch(f.base + "/healthz", h2(f.with_token(""))).status == 401);
  auto cert = f.dir.path + "/bob.crt";
  auto key = f.dir.path + "/bob.key";
  REQUIRE(wire::issue_client_certificate(f.files.ca_cert, f.files.ca_key,
                                         "bob", {}, cert, key));
  auto opts = h2(f.with_token(""));
  opts.cert_file = cert;
  opts.key_file = key;
  auto by_cert = fetch(f.base + secrets_path, opts);
  CHECK(by_cert.http_version == CURL_HTTP_VERSION_2_0);
  CHECK(by_cert.status == 200);
  // A watch is a stream too: the initial ADDED events, then its end.
  REQUIRE(f.api.create(test::make_secret("default", "s1", {{"k", "v"}})));
  auto watched = fetch(f.base + secrets_path
                         + "?watch=true&resourceVersion=0&timeoutSeconds=1",
                       h2(f.with_token(good_token)));
  CHECK(watched.http_version == CURL_HTTP_VERSION_2_0);
  CHECK(watched.status == 200);
  CHECK(watched.code == CURLE_OK);
  CHECK(watched.body.find(R"("type":"ADDED")") != std::string::npos);
  CHECK(watched.body.find(R"("name":"s1")") != std::string::npos);
}

TEST_CASE("plain HTTP or a silent client on the TLS port is closed") {
  tls_fixture f;
  auto port = std::to_string(f.server->port());
  auto plain = fetch("http://127.0.0.1:" + port + secrets_path,
                     request_options{});
  CHECK(plain.code != CURLE_OK);
  CHECK(plain.status == 0);
  SECTION("the handshake counts in the time to send a request") {
    f.server.reset();
    f.start(false, std::chrono::milliseconds(300));
    boost::asio::io_context ioc;
    boost::asio::ip::tcp::socket sock{ioc};
    sock.connect({boost::asio::ip::make_address("127.0.0.1"),
                  f.server->port()});
    auto began = std::chrono::steady_clock::now();
    char byte;
    boost::system::error_code ec;
    boost::asio::read(sock, boost::asio::buffer(&byte, 1), ec);
    auto waited = std::chrono::steady_clock::now() - began;
    CHECK(ec); // closed by the server, no byte sent
    CHECK(waited < std::chrono::seconds(8));
  }
  CHECK(fetch(f.base + secrets_path, f.with_token(good_token)).status == 200);
}

TEST_CASE("a restarted server serves the same material") {
  tls_fixture f;
  auto ca = read_all(f.files.ca_cert);
  f.server->stop();
  auto again = wire::ensure_tls_dir(f.dir.path + "/tls", local_hosts);
  REQUIRE(again);
  CHECK_FALSE(again->made_ca);
  f.files = *again;
  f.start(false);
  auto opts = f.with_token(good_token);
  opts.ca_file.clear();
  opts.ca_pem = ca; // what a kubeconfig written before the restart holds
  CHECK(fetch(f.base + secrets_path, opts).status == 200);
}

TEST_CASE("anonymous requests reach only the public paths, when allowed") {
  tls_fixture f{true};
  CHECK(fetch(f.base + "/healthz", f.with_token("")).status == 200);
  CHECK(fetch(f.base + "/version", f.with_token("")).status == 200);
  CHECK(fetch(f.base + "/metrics", f.with_token("")).status == 403);
  auto api = fetch(f.base + "/api", f.with_token(""));
  CHECK(api.status == 403);
  CHECK(json::parse(api.body).at("message")
        == "forbidden: User \"system:anonymous\" cannot get path \"/api\"");
  auto get = fetch(f.base + secrets_path + "/s1", f.with_token(""));
  CHECK(get.status == 403);
  CHECK(json::parse(get.body)
        == json::parse(
          R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
          R"("status":"Failure","message":"secrets \"s1\" is forbidden: )"
          R"(User \"system:anonymous\" cannot get resource \"secrets\" in )"
          R"(API group \"\" in the namespace \"default\"","reason":)"
          R"("Forbidden","details":{"name":"s1","kind":"secrets"},)"
          R"("code":403})"));
  // A wrong token is still 401, not anonymous.
  CHECK(fetch(f.base + "/healthz", f.with_token("tok-wrong")).status == 401);
}

TEST_CASE("the written kubeconfig resolves and connects") {
  tls_fixture f;
  auto path = f.dir.path + "/kubeconfig";
  wire::server_kubeconfig kc;
  kc.url = f.base;
  kc.ca_pem = read_all(f.files.ca_cert);
  kc.token = good_token;
  REQUIRE(wire::write_kubeconfig(path, kc));
  CHECK(mode_of(path) == 0600);
  wire::kubeconfig_selection sel;
  sel.explicit_path = path;
  auto cfg = wire::load_kubeconfig(sel);
  REQUIRE(cfg);
  CHECK(cfg->server == f.base);
  CHECK(cfg->ca_pem == kc.ca_pem);
  CHECK(cfg->token == good_token);
  CHECK(cfg->namespace_name == "default");
  request_options opts;
  opts.ca_pem = cfg->ca_pem;
  opts.token = cfg->token;
  CHECK(fetch(cfg->server + secrets_path, opts).status == 200);
}

TEST_CASE("a bad token file names the file and line, never the token") {
  auto bad = [](const std::string& text) {
    auto x = wire::token_table::parse(text, "tokens.csv");
    REQUIRE_FALSE(x);
    CHECK(x.error().message.find("s3cr3t") == std::string::npos);
    return x.error().message;
  };
  CHECK(bad("s3cr3t,alice\n")
        == "tokens.csv:1: expected token,user,uid[,\"groups\"], found 2 "
           "columns");
  CHECK(bad("\ns3cr3t,alice,1\ns3cr3t,bob,2\n")
        == "tokens.csv:3: the token of line 2 again");
  CHECK(bad("t,a,1\ns3cr3t,alice,1,\"dev") 
        == "tokens.csv:2: a quoted field does not end");
  CHECK(bad(",alice,1\n") == "tokens.csv:1: empty token");
  CHECK(bad("s3cr3t,,1\n") == "tokens.csv:1: empty user name");
  CHECK(bad("s3cr\"3t,a,1\n") == "tokens.csv:1: a quote inside an unquoted field");
  auto good = wire::token_table::parse(
    "t1,alice,u1,\"dev, ops,\"\r\n\nt2,bob,u2\nt3,\"c,d\",u3,x,extra\n",
    "tokens.csv");
  REQUIRE(good);
  CHECK(good->size() == 3);
  CHECK(good->first_token() == "t1");
  REQUIRE(good->find("t1") != nullptr);
  CHECK(good->find("t1")->groups == std::vector<std::string>{"dev", "ops"});
  CHECK(good->find("t3")->name == "c,d");
  CHECK(good->find("t4") == nullptr);
  CHECK(wire::bearer_token("Bearer abc") == std::string_view{"abc"});
  CHECK(wire::bearer_token("bearer  abc ") == std::string_view{"abc"});
  CHECK_FALSE(wire::bearer_token("Basic abc"));
  CHECK_FALSE(wire::bearer_token("Bearer "));
  CHECK_FALSE(wire::bearer_token(""));
}
