// The HTTP front in process: podref's API server behind http_server on
// 127.0.0.1:0, spoken to with Beast's HTTP client (get, list, create,
// conflicts, delete, watches, and the bounds).
#include "podref/wire/http_server.hpp"

#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <initializer_list>
#include <string>

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <caf/actor.hpp>

using namespace podref;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;
using json = nlohmann::json;

namespace {

struct reply {
  int status = 0;
  std::string body;
  std::string content_type;
};

/// One blocking HTTP/1.1 connection to the server.
struct client {
  boost::asio::io_context ioc;
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buffer;

  explicit client(std::uint16_t port) {
    stream.connect(tcp::endpoint{boost::asio::ip::make_address("127.0.0.1"),
                                 port});
    // A guard against a hang, not a timing check: a test's whole exchange
    // must fit, also under ASan on a loaded 2-core machine (the queue-bound
    // test posts 40 MiB).
    stream.expires_after(std::chrono::seconds(120));
  }

  void send(http::verb verb, const std::string& target,
            const std::string& body = {},
            const std::string& content_type = "application/json") {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!body.empty()) {
      req.set(http::field::content_type, content_type);
      req.body() = body;
    }
    req.prepare_payload();
    http::write(stream, req);
  }

  reply receive() {
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    return {static_cast<int>(res.result_int()), res.body(),
            std::string{res[http::field::content_type]}};
  }

  reply call(http::verb verb, const std::string& target,
             const std::string& body = {}) {
    send(verb, target, body);
    return receive();
  }
};

struct server_fixture {
  runtime rt;
  api_server api{rt};
  std::unique_ptr<wire::http_server> front;

  explicit server_fixture(wire::http_server_options opts = {}) {
    auto started = wire::http_server::start(rt.system(), api.current_actor(),
                                            opts);
    REQUIRE(started);
    front = std::move(started).value();
  }

  ~server_fixture() {
    front->stop();
  }

  std::uint16_t port() const {
    return front->port();
  }
};

/// Creates Secrets `names` in ns1 (versions 1, 2, ...).
void create_secrets(client& c, std::initializer_list<const char*> names);

std::string secret_body(const std::string& name, const std::string& rv = {}) {
  json x{{"apiVersion", "v1"},
         {"kind", "Secret"},
         {"metadata", {{"name", name}}},
         {"stringData", {{"k", "v"}}}};
  if (!rv.empty())
    x["metadata"]["resourceVersion"] = rv;
  return x.dump();
}

void create_secrets(client& c, std::initializer_list<const char*> names) {
  for (auto name : names)
    REQUIRE(c.call(http::verb::post, "/api/v1/namespaces/ns1/secrets",
                   secret_body(name))
              .status
            == 201);
}

} // namespace

TEST_CASE("the HTTP front creates, gets, lists, updates and deletes") {
  server_fixture s;
  client c{s.port()};
  const std::string base = "/api/v1/namespaces/ns1/secrets";
  auto created = c.call(http::verb::post, base, secret_body("s1"));
  REQUIRE(created.status == 201);
  auto obj = json::parse(created.body);
  CHECK(obj["kind"] == "Secret");
  CHECK(obj["metadata"]["namespace"] == "ns1");
  CHECK(obj["data"]["k"] == "dg==");
  CHECK(obj["metadata"]["uid"].get<std::string>().size() == 36);
  auto rv = obj["metadata"]["resourceVersion"].get<std::string>();
  auto again = c.call(http::verb::post, base, secret_body("s1"));
  CHECK(again.status == 409);
  CHECK(json::parse(again.body)["reason"] == "AlreadyExists");
  auto got = c.call(http::verb::get, base + "/s1");
  REQUIRE(got.status == 200);
  CHECK(json::parse(got.body) == obj);
  auto listed = c.call(http::verb::get, base + "?limit=500");
  REQUIRE(listed.status == 200);
  auto list = json::parse(listed.body);
  CHECK(list["kind"] == "SecretList");
  CHECK(list["items"].size() == 1);
  CHECK(list["metadata"]["resourceVersion"] == rv);
  auto stale = c.call(http::verb::put, base + "/s1", secret_body("s1", "999"));
  CHECK(stale.status == 409);
  CHECK(json::parse(stale.body)["reason"] == "Conflict");
  auto fresh = c.call(http::verb::put, base + "/s1", secret_body("s1", rv));
  REQUIRE(fresh.status == 200);
  CHECK(json::parse(fresh.body)["metadata"]["uid"] == obj["metadata"]["uid"]);
  auto deleted = c.call(http::verb::delete_, base + "/s1");
  REQUIRE(deleted.status == 200);
  auto status = json::parse(deleted.body);
  CHECK(status["status"] == "Success");
  CHECK(status["details"]["uid"] == obj["metadata"]["uid"]);
  auto missing = c.call(http::verb::get, base + "/s1");
  CHECK(missing.status == 404);
  CHECK(json::parse(missing.body)["message"] == "secrets \"s1\" not found");
  CHECK(c.call(http::verb::post, base + "/s1", secret_body("s1")).status
        == 405);
  CHECK(c.call(http::verb::get, "/api/v1/namespaces/ns1/services").status
        == 404);
  CHECK(c.call(http::verb::get, "/healthz").body == "ok");
}

TEST_CASE("the HTTP front refuses a body over the limit with 413 and "
          "stores nothing") {
  wire::http_server_options opts;
  opts.max_body_bytes = 1024;
  server_fixture s{opts};
  client c{s.port()};
  auto big = secret_body("big") + std::string(2048, ' ');
  auto refused = c.call(http::verb::post, "/api/v1/namespaces/ns1/secrets",
                        big);
  CHECK(refused.status == 413);
  CHECK(json::parse(refused.body)["reason"] == "RequestEntityTooLarge");
  client d{s.port()};
  CHECK(d.call(http::verb::get, "/api/v1/namespaces/ns1/secrets/big").status
        == 404);
}

TEST_CASE("a watch from 0 replays as ADDED and ends at timeoutSeconds") {
  server_fixture s;
  client c{s.port()};
  REQUIRE(c.call(http::verb::post, "/api/v1/namespaces/ns1/configmaps",
                 R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"data":{"a":"b"}})")
            .status
          == 201);
  auto start = std::chrono::steady_clock::now();
  auto w = c.call(http::verb::get, "/api/v1/namespaces/ns1/configmaps?"
                                   "resourceVersion=0&timeoutSeconds=1&"
                                   "watch=true");
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= std::chrono::milliseconds(900));
  CHECK(w.status == 200);
  CHECK(w.content_type == "application/json");
  auto nl = w.body.find('\n');
  REQUIRE(nl != std::string::npos);
  auto ev = json::parse(w.body.substr(0, nl));
  CHECK(ev["type"] == "ADDED");
  CHECK(ev["object"]["metadata"]["name"] == "c1");
  CHECK(w.body.size() == nl + 1);
}

TEST_CASE("a live watch gets each write as it happens") {
  server_fixture s;
  client watcher{s.port()};
  watcher.send(http::verb::get,
               "/api/v1/secrets?resourceVersion=0&watch=true");
  http::response_parser<http::string_body> parser;
  http::read_header(watcher.stream, watcher.buffer, parser);
  CHECK(parser.get().result_int() == 200);
  CHECK(parser.get().chunked());
  client writer{s.port()};
  REQUIRE(writer.call(http::verb::post, "/api/v1/namespaces/ns2/secrets",
                      secret_body("live"))
            .status
          == 201);
  while (parser.get().body().find('\n') == std::string::npos)
    http::read_some(watcher.stream, watcher.buffer, parser);
  auto ev = json::parse(parser.get().body());
  CHECK(ev["type"] == "ADDED");
  CHECK(ev["object"]["metadata"]["namespace"] == "ns2");
}

TEST_CASE("a watch from an expired version gets 200 and one ERROR 410") {
  server_fixture s;
  client c{s.port()};
  create_secrets(c, {"a", "b"});
  s.api.expire_history();
  auto w = c.call(http::verb::get,
                  "/api/v1/namespaces/ns1/secrets?fieldSelector=metadata.name"
                  "%3Da&resourceVersion=1&timeoutSeconds=10&watch=true");
  CHECK(w.status == 200);
  auto ev = json::parse(w.body.substr(0, w.body.find('\n')));
  CHECK(ev["type"] == "ERROR");
  CHECK(ev["object"]["reason"] == "Expired");
  CHECK(ev["object"]["code"] == 410);
  CHECK(ev["object"]["message"] == "too old resource version: 1 (2)");
}

TEST_CASE("watches past the bound get 429; non-loopback is refused") {
  wire::http_server_options opts;
  opts.max_watches = 1;
  server_fixture s{opts};
  client first{s.port()};
  first.send(http::verb::get, "/api/v1/secrets?watch=true");
  http::response_parser<http::string_body> parser;
  http::read_header(first.stream, first.buffer, parser);
  REQUIRE(parser.get().result_int() == 200);
  client second{s.port()};
  CHECK(second.call(http::verb::get, "/api/v1/secrets?watch=true").status
        == 429);
  wire::http_server_options open;
  open.address = "0.0.0.0";
  auto refused = wire::http_server::start(s.rt.system(), s.api.current_actor(),
                                          open);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find(
          "TLS and credentials are required beyond loopback")
        != std::string::npos);
}

TEST_CASE("oversized headers get 431 and a slow request is cut off") {
  wire::http_server_options opts;
  opts.max_header_bytes = 1024;
  opts.request_read_timeout = std::chrono::milliseconds(300);
  server_fixture s{opts};
  client big{s.port()};
  http::request<http::string_body> req{http::verb::get, "/healthz", 11};
  req.set("X-Padding", std::string(4096, 'x'));
  http::write(big.stream, req);
  CHECK(big.receive().status == 431);
  // A client that never finishes its headers (slowloris) is closed.
  client slow{s.port()};
  boost::asio::write(slow.stream, boost::asio::buffer(
                                    std::string{"GET /healthz HTTP/1.1\r\n"}));
  char byte = 0;
  beast::error_code ec;
  auto start = std::chrono::steady_clock::now();
  slow.stream.read_some(boost::asio::buffer(&byte, 1), ec);
  CHECK(ec == boost::asio::error::eof);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("a watch whose client does not read ends at the queue bound") {
  wire::http_server_options opts;
  opts.max_queued_events = 2;
  server_fixture s{opts};
  client watcher{s.port()};
  watcher.send(http::verb::get, "/api/v1/configmaps?watch=true");
  http::response_parser<http::string_body> parser;
  parser.body_limit(1u << 30);
  http::read_header(watcher.stream, watcher.buffer, parser);
  REQUIRE(parser.get().result_int() == 200);
  // Far more than the socket buffers hold, while the watcher reads nothing.
  client writer{s.port()};
  const int writes = 40;
  json cm{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", json::object()},
          {"data", {{"k", std::string(1u << 20, 'x')}}}};
  for (int i = 0; i < writes; ++i) {
    cm["metadata"]["name"] = "c" + std::to_string(i);
    REQUIRE(writer.call(http::verb::post, "/api/v1/namespaces/ns1/configmaps",
                        cm.dump())
              .status
            == 201);
  }
  // The stream ends cleanly (final chunk) before carrying every event.
  http::read(watcher.stream, watcher.buffer, parser);
  CHECK(parser.is_done());
  std::size_t lines = 0;
  for (auto c : parser.get().body())
    lines += c == '\n' ? 1 : 0;
  CHECK(lines < static_cast<std::size_t>(writes));
}

TEST_CASE("a label-selected watch sees objects enter and leave the selection") {
  server_fixture s;
  client c{s.port()};
  const std::string base = "/api/v1/namespaces/ns1/configmaps";
  auto cm = [](const std::string& app, const std::string& data) {
    json x{{"apiVersion", "v1"},
           {"kind", "ConfigMap"},
           {"metadata", {{"name", "c1"}, {"labels", {{"app", app}}}}}};
    if (!data.empty())
      x["data"] = json{{"k", data}};
    return x.dump();
  };
  REQUIRE(c.call(http::verb::post, base, cm("other", "")).status == 201);
  REQUIRE(c.call(http::verb::put, base + "/c1", cm("a", "")).status == 200);
  // (A PUT that changes nothing would store nothing, as the real server.)
  REQUIRE(c.call(http::verb::put, base + "/c1", cm("a", "v")).status == 200);
  REQUIRE(c.call(http::verb::put, base + "/c1", cm("other", "")).status == 200);
  // From version 1: the three updates replayed through the selector.
  auto w = c.call(http::verb::get, base + "?labelSelector=app%3Da&"
                                          "resourceVersion=1&"
                                          "timeoutSeconds=1&watch=true");
  REQUIRE(w.status == 200);
  std::vector<std::string> types;
  std::size_t start = 0;
  for (auto nl = w.body.find('\n'); nl != std::string::npos;
       start = nl + 1, nl = w.body.find('\n', start))
    types.push_back(json::parse(w.body.substr(start, nl - start))["type"]);
  CHECK(types == std::vector<std::string>{"ADDED", "MODIFIED", "DELETED"});
}

TEST_CASE("a restarted API server ends open watches; later requests reach "
          "the new one") {
  server_fixture s;
  client c{s.port()};
  create_secrets(c, {"a", "b"});
  client watcher{s.port()};
  watcher.send(http::verb::get, "/api/v1/secrets?resourceVersion=1&watch=true");
  http::response_parser<http::string_body> parser;
  http::read_header(watcher.stream, watcher.buffer, parser);
  REQUIRE(parser.get().result_int() == 200);
  REQUIRE(s.api.restart());
  http::read(watcher.stream, watcher.buffer, parser);
  CHECK(parser.is_done());
  auto got = c.call(http::verb::get, "/api/v1/namespaces/ns1/secrets/a");
  CHECK(got.status == 200);
  // The new server has no history: the old version is expired.
  client again{s.port()};
  auto w = again.call(http::verb::get,
                      "/api/v1/secrets?resourceVersion=1&timeoutSeconds=5&"
                      "watch=true");
  CHECK(json::parse(w.body.substr(0, w.body.find('\n')))["object"]["code"]
        == 410);
}

TEST_CASE("PATCH merges, refuses a stale resourceVersion with 409 and an "
          "unknown patch type with 415") {
  server_fixture s;
  client c{s.port()};
  const std::string base = "/api/v1/namespaces/ns1/secrets";
  create_secrets(c, {"s1"});
  auto patch = [&](const std::string& target, const std::string& body,
                   const std::string& type) {
    c.send(http::verb::patch, target, body, type);
    return c.receive();
  };
  auto merged = patch(base + "/s1", R"({"data":{"k":null,"n":"bg=="}})",
                      "application/merge-patch+json");
  REQUIRE(merged.status == 200);
  auto obj = json::parse(merged.body);
  CHECK(obj["data"] == json{{"n", "bg=="}});
  auto rv = obj["metadata"]["resourceVersion"].get<std::string>();
  CHECK(rv != "1");
  // secrets/patch-rv-precondition.json
  auto stale = patch(base + "/s1",
                     R"({"metadata":{"resourceVersion":"1"},"data":{"p":"cA=="}})",
                     "application/merge-patch+json");
  CHECK(stale.status == 409);
  CHECK(json::parse(stale.body)
        == json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},
             "status":"Failure","message":"Operation cannot be fulfilled on secrets \"s1\": the object has been modified; please apply your changes to the latest version and try again",
             "reason":"Conflict","details":{"name":"s1","kind":"secrets"},"code":409})"));
  auto fresh = patch(base + "/s1",
                     R"({"metadata":{"resourceVersion":")" + rv
                       + R"("},"data":{"p":"cA=="}})",
                     "application/strategic-merge-patch+json");
  REQUIRE(fresh.status == 200);
  CHECK(json::parse(fresh.body)["data"]["p"] == "cA==");
  auto tested = patch(base + "/s1",
                      R"([{"op":"test","path":"/data/p","value":"no"}])",
                      "application/json-patch+json");
  CHECK(tested.status == 422);
  // secrets/patch-missing.json
  auto missing = patch(base + "/nope", "{}", "application/merge-patch+json");
  CHECK(missing.status == 404);
  CHECK(json::parse(missing.body)["message"] == "secrets \"nope\" not found");
  for (const char* type : {"text/plain", "application/json"}) {
    auto refused = patch(base + "/s1", "{}", type);
    CHECK(refused.status == 415);
    CHECK(json::parse(refused.body)["reason"] == "UnsupportedMediaType");
  }
  CHECK(patch(base, "{}", "application/merge-patch+json").status == 405);
  auto got = c.call(http::verb::get, base + "/s1");
  CHECK(json::parse(got.body)["data"] == json{{"n", "bg=="}, {"p", "cA=="}});
}

TEST_CASE("a name or namespace that is not UTF-8 gets a Status, not a crash") {
  // Found by the request fuzz target: the Status quoted the name, and
  // writing it as JSON threw.
  server_fixture s;
  client c{s.port()};
  auto missing = c.call(http::verb::get,
                        "/api/v1/namespaces/ns1/secrets/a%FFb");
  CHECK(missing.status == 404);
  CHECK(json::parse(missing.body)["message"]
        == "secrets \"a\xEF\xBF\xBD" "b\" not found");
  auto created = c.call(http::verb::post, "/api/v1/namespaces/n%FF/secrets",
                        secret_body("s1"));
  // Validated as the real server does: the byte is quoted, escaped.
  CHECK(created.status == 422);
  auto cause = json::parse(created.body)["details"]["causes"][0];
  CHECK(cause["field"] == "metadata.namespace");
  CHECK(cause["message"].get<std::string>().rfind(
          "Invalid value: \"n\\xff\": a lowercase RFC 1123 label", 0)
        == 0);
}

TEST_CASE("the server's side of an accepted connection sends without Nagle's "
          "delay") {
  // A TLS handshake and a watch's first reply are several small writes:
  // with Nagle each waited for the client's delayed ACK (40 ms per new
  // connection). Checked on the socket the server accepted, found among
  // this process's descriptors as the one whose peer is the client.
  server_fixture s;
  client c{s.port()};
  REQUIRE(c.call(http::verb::get, "/healthz").status == 200);
  auto mine = c.stream.socket().local_endpoint();
  int accepted = -1;
  for (const auto& entry : std::filesystem::directory_iterator{"/proc/self/fd"}) {
    int fd = std::stoi(entry.path().filename().string());
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0
        || peer.ss_family != AF_INET)
      continue;
    auto* in = reinterpret_cast<sockaddr_in*>(&peer);
    if (ntohs(in->sin_port) == mine.port())
      accepted = fd;
  }
  REQUIRE(accepted >= 0);
  int nodelay = 0;
  socklen_t len = sizeof nodelay;
  REQUIRE(::getsockopt(accepted, IPPROTO_TCP, TCP_NODELAY, &nodelay, &len)
          == 0);
  CHECK(nodelay == 1);
}
