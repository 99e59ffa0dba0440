// The HTTP front over HTTP/2 (h2c with prior knowledge), spoken to with
// nghttp2's client session over a blocking socket: requests, watches as
// streams, the stream limit, resets, flow control and malformed input.
#include "podref/wire/http_server.hpp"

#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>
#include <nlohmann/json.hpp>

using namespace podref;
using json = nlohmann::json;

namespace {

int connect_to(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

/// Reads until EOF or `limit`; true when the peer closed.
bool closed_by_peer(int fd, std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  char buf[4096];
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0)
      continue;
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0)
      return true;
  }
  return false;
}

/// One HTTP/2 connection, driven by pump() on the test's thread.
struct h2_client {
  struct stream {
    int status = 0;
    std::string body;
    bool closed = false;
    std::uint32_t error = 0;
  };

  int fd = -1;
  nghttp2_session* session = nullptr;
  std::map<std::int32_t, stream> streams;
  std::map<std::int32_t, std::string> uploads;
  /// Streams whose body is held back (never sent).
  std::set<std::int32_t> held;
  std::uint32_t remote_max_streams = 0;
  bool eof = false;

  /// `peer_max_streams`: what the client assumes before the server's
  /// SETTINGS arrive.
  explicit h2_client(std::uint16_t port, std::uint32_t peer_max_streams = 100,
                     std::uint32_t window = 65535)
    : fd(connect_to(port)) {
    nghttp2_session_callbacks* cbs = nullptr;
    nghttp2_session_callbacks_new(&cbs);
    nghttp2_session_callbacks_set_on_header_callback(
      cbs, [](nghttp2_session*, const nghttp2_frame* frame,
              const uint8_t* name, size_t namelen, const uint8_t* value,
              size_t valuelen, uint8_t, void* user) {
        auto& c = *static_cast<h2_client*>(user);
        if (std::string(reinterpret_cast<const char*>(name), namelen)
            == ":status")
          c.streams[frame->hd.stream_id].status = std::stoi(
            std::string(reinterpret_cast<const char*>(value), valuelen));
        return 0;
      });
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
      cbs, [](nghttp2_session*, uint8_t, int32_t id, const uint8_t* data,
              size_t len, void* user) {
        static_cast<h2_client*>(user)->streams[id].body.append(
          reinterpret_cast<const char*>(data), len);
        return 0;
      });
    nghttp2_session_callbacks_set_on_stream_close_callback(
      cbs, [](nghttp2_session*, int32_t id, uint32_t error, void* user) {
        auto& s = static_cast<h2_client*>(user)->streams[id];
        s.closed = true;
        s.error = error;
        return 0;
      });
    nghttp2_session_callbacks_set_on_frame_recv_callback(
      cbs, [](nghttp2_session* session, const nghttp2_frame* frame,
              void* user) {
        if (frame->hd.type == NGHTTP2_SETTINGS)
          static_cast<h2_client*>(user)->remote_max_streams
            = nghttp2_session_get_remote_settings(
              session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
        return 0;
      });
    nghttp2_option* opt = nullptr;
    nghttp2_option_new(&opt);
    nghttp2_option_set_peer_max_concurrent_streams(opt, peer_max_streams);
    if (window != 65535)
      nghttp2_option_set_no_auto_window_update(opt, 1);
    nghttp2_session_client_new2(&session, cbs, this, opt);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cbs);
    nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, window}};
    nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings, 1);
  }

  ~h2_client() {
    nghttp2_session_del(session);
    ::close(fd);
  }

  std::int32_t submit(const std::string& method, const std::string& path,
                      const std::string& body = {}) {
    auto nv = [](const std::string& n, const std::string& v) {
      return nghttp2_nv{
        reinterpret_cast<uint8_t*>(const_cast<char*>(n.data())),
        reinterpret_cast<uint8_t*>(const_cast<char*>(v.data())), n.size(),
        v.size(), NGHTTP2_NV_FLAG_NONE};
    };
    std::string m = ":method", p = ":path", s = ":scheme", a = ":authority",
                ct = "content-type", http = "http", host = "127.0.0.1",
                type = "application/json";
    nghttp2_nv hdrs[] = {nv(m, method), nv(p, path), nv(s, http),
                         nv(a, host), nv(ct, type)};
    nghttp2_data_provider provider{};
    provider.read_callback = [](nghttp2_session*, int32_t id, uint8_t* buf,
                                size_t length, uint32_t* flags,
                                nghttp2_data_source*, void* user) {
      auto& c = *static_cast<h2_client*>(user);
      if (c.held.count(id) != 0)
        return static_cast<ssize_t>(NGHTTP2_ERR_DEFERRED);
      auto& up = c.uploads[id];
      auto n = std::min(length, up.size());
      std::memcpy(buf, up.data(), n);
      up.erase(0, n);
      if (up.empty())
        *flags |= NGHTTP2_DATA_FLAG_EOF;
      return static_cast<ssize_t>(n);
    };
    auto id = nghttp2_submit_request(session, nullptr, hdrs, 5,
                                     body.empty() ? nullptr : &provider,
                                     nullptr);
    REQUIRE(id > 0);
    streams[id];
    uploads[id] = body;
    return id;
  }

  /// Sends what is pending without reading anything.
  void send_pending() {
    const uint8_t* data = nullptr;
    for (ssize_t n; (n = nghttp2_session_mem_send(session, &data)) > 0;) {
      for (ssize_t sent = 0; sent < n;) {
        auto k = ::send(fd, data + sent, static_cast<size_t>(n - sent),
                        MSG_NOSIGNAL);
        if (k <= 0) {
          eof = true;
          return;
        }
        sent += k;
      }
    }
  }

  /// Sends and receives until `done` or the server closes (20 s bound).
  bool pump(const std::function<bool()>& done) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < until) {
      send_pending();
      if (done())
        return true;
      if (eof)
        return false;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0)
        continue;
      uint8_t buf[16384];
      auto n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        eof = true;
        continue;
      }
      REQUIRE(nghttp2_session_mem_recv(session, buf, static_cast<size_t>(n))
              == n);
    }
    return done();
  }

  stream call(const std::string& method, const std::string& path,
              const std::string& body = {}) {
    auto id = submit(method, path, body);
    REQUIRE(pump([&] { return streams[id].closed; }));
    return streams[id];
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

  /// Waits (bounded) until the API server has `n` open watches.
  bool watches_become(std::size_t n) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < until) {
      auto open = api.open_watches();
      if (open && *open == n)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
};

std::string config_map_body(const std::string& name, const std::string& value = "v") {
  return json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"name", name}}},
              {"data", {{"k", value}}}}
    .dump();
}

const std::string cms = "/api/v1/namespaces/ns1/configmaps";

} // namespace

TEST_CASE("h2c: create, get, list and the bounds of a request") {
  wire::http_server_options opts;
  opts.max_body_bytes = 1024;
  server_fixture s{opts};
  h2_client c{s.port()};
  auto created = c.call("POST", cms, config_map_body("c1"));
  REQUIRE(created.status == 201);
  CHECK(created.error == 0);
  auto obj = json::parse(created.body);
  CHECK(obj["metadata"]["namespace"] == "ns1");
  auto got = c.call("GET", cms + "/c1");
  CHECK(got.status == 200);
  CHECK(json::parse(got.body) == obj);
  auto listed = c.call("GET", cms);
  REQUIRE(listed.status == 200);
  CHECK(json::parse(listed.body)["items"].size() == 1);
  CHECK(c.remote_max_streams == 250);
  auto missing = c.call("GET", cms + "/nope");
  CHECK(missing.status == 404);
  CHECK(json::parse(missing.body)["reason"] == "NotFound");
  // Over the body limit: 413 and nothing stored; the connection goes on.
  auto big = c.call("POST", cms, config_map_body("big", std::string(4096, 'x')));
  CHECK(big.status == 413);
  CHECK(json::parse(big.body)["reason"] == "RequestEntityTooLarge");
  CHECK(c.call("GET", cms + "/big").status == 404);
  CHECK(c.call("GET", "/healthz").body == "ok");
}

TEST_CASE("h2c: a watch stream gets an event per DATA line and ends at "
          "timeoutSeconds") {
  server_fixture s;
  h2_client c{s.port()};
  auto w = c.submit("GET", cms + "?watch=true&timeoutSeconds=2");
  REQUIRE(c.pump([&] { return c.streams[w].status == 200; }));
  REQUIRE(s.watches_become(1));
  REQUIRE(c.call("POST", cms, config_map_body("live")).status == 201);
  REQUIRE(c.pump(
    [&] { return c.streams[w].body.find('\n') != std::string::npos; }));
  auto ev = json::parse(c.streams[w].body.substr(
    0, c.streams[w].body.find('\n')));
  CHECK(ev["type"] == "ADDED");
  CHECK(ev["object"]["metadata"]["name"] == "live");
  REQUIRE(c.pump([&] { return c.streams[w].closed; }));
  CHECK(c.streams[w].error == 0);
  CHECK(s.watches_become(0));
}

TEST_CASE("h2c: 300 watches on one connection: 250 open, the rest refused; "
          "resets free them") {
  server_fixture s;
  // A client that sends all 300 before it reads the server's SETTINGS.
  h2_client c{s.port(), 1000};
  std::vector<std::int32_t> ids;
  for (int i = 0; i < 300; ++i)
    ids.push_back(c.submit("GET", cms + "?watch=true"));
  auto answered = [&] {
    int n = 0;
    for (auto id : ids)
      n += c.streams[id].status == 200 || c.streams[id].closed ? 1 : 0;
    return n == 300;
  };
  REQUIRE(c.pump(answered));
  int open = 0, refused = 0;
  for (auto id : ids) {
    if (c.streams[id].status == 200 && !c.streams[id].closed)
      ++open;
    else if (c.streams[id].error == NGHTTP2_REFUSED_STREAM)
      ++refused;
  }
  CHECK(open == 250);
  CHECK(refused == 50);
  CHECK(c.remote_max_streams == 250);
  REQUIRE(s.watches_become(250));
  auto metrics = s.front->metrics_text();
  CHECK(metrics.find("\npodref_apiserver_http2_open_streams 250\n")
        != std::string::npos);
  CHECK(metrics.find("{limit=\"streams\"} 50\n") != std::string::npos);
  // Resets from the client end the watches at the API server.
  for (auto id : ids)
    if (!c.streams[id].closed)
      nghttp2_submit_rst_stream(c.session, NGHTTP2_FLAG_NONE, id,
                                NGHTTP2_CANCEL);
  c.send_pending();
  CHECK(s.watches_become(0));
  // The connection still serves.
  CHECK(c.call("GET", "/healthz").status == 200);
}

TEST_CASE("h2c: a client that cancels its watches by the thousand keeps "
          "its connection") {
  // nghttp2's own guard would send GOAWAY (INTERNAL_ERROR) past 1000
  // resets refilled at 33 a second; a kubelet-like client cancels that
  // many in an update storm or a drain, and lost its connections.
  server_fixture s;
  h2_client c{s.port()};
  for (int round = 0; round < 8; ++round) {
    std::vector<std::int32_t> ids;
    for (int i = 0; i < 200; ++i)
      ids.push_back(c.submit("GET", cms + "?watch=true"));
    REQUIRE(c.pump([&] {
      for (auto id : ids)
        if (c.streams[id].status != 200)
          return false;
      return true;
    }));
    for (auto id : ids)
      nghttp2_submit_rst_stream(c.session, NGHTTP2_FLAG_NONE, id,
                                NGHTTP2_CANCEL);
    c.send_pending();
    REQUIRE(s.watches_become(0));
  }
  // 1600 resets in a few seconds: the connection still serves.
  CHECK(c.call("GET", "/healthz").status == 200);
  CHECK_FALSE(c.eof);
}

TEST_CASE("h2c: a watch whose client does not open its window ends at the "
          "queue bound") {
  wire::http_server_options opts;
  opts.max_queued_events = 2;
  server_fixture s{opts};
  // A 4 KiB stream window and no automatic WINDOW_UPDATE.
  h2_client watcher{s.port(), 100, 4096};
  auto w = watcher.submit("GET", cms + "?watch=true");
  REQUIRE(watcher.pump([&] { return watcher.streams[w].status == 200; }));
  REQUIRE(s.watches_become(1));
  h2_client writer{s.port()};
  const int writes = 20;
  for (int i = 0; i < writes; ++i)
    REQUIRE(writer.call("POST", cms,
                        config_map_body("c" + std::to_string(i),
                                   std::string(1000, 'x')))
              .status
            == 201);
  // The watch ended at the server; its end waits for the window.
  CHECK(s.watches_become(0));
  // Take what the window let through: all of it (the events far exceed it).
  CHECK(watcher.pump([&] { return watcher.streams[w].body.size() >= 4096; }));
  CHECK_FALSE(watcher.streams[w].closed);
  nghttp2_session_consume(watcher.session, w, 1u << 20);
  REQUIRE(watcher.pump([&] { return watcher.streams[w].closed; }));
  CHECK(watcher.streams[w].error == 0);
  std::size_t lines = 0;
  for (auto ch : watcher.streams[w].body)
    lines += ch == '\n' ? 1 : 0;
  CHECK(lines < static_cast<std::size_t>(writes));
  CHECK(watcher.streams[w].body.back() == '\n');
}

TEST_CASE("h2c: a bad preface or bad frames close that connection only") {
  server_fixture s;
  h2_client good{s.port()};
  REQUIRE(good.call("GET", "/healthz").status == 200);
  // The preface's first line, then garbage: neither HTTP/2 nor HTTP/1.1.
  int bad = connect_to(s.port());
  std::string junk = "PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n";
  REQUIRE(::send(bad, junk.data(), junk.size(), MSG_NOSIGNAL) > 0);
  CHECK(closed_by_peer(bad, std::chrono::seconds(5)));
  ::close(bad);
  // A good preface, then a DATA frame on stream 0 (a connection error).
  int frames = connect_to(s.port());
  std::string bytes{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24};
  bytes += std::string("\x00\x00\x00\x04\x00\x00\x00\x00\x00", 9); // SETTINGS
  bytes += std::string("\x00\x00\x04\x00\x00\x00\x00\x00\x00oops", 13);
  REQUIRE(::send(frames, bytes.data(), bytes.size(), MSG_NOSIGNAL) > 0);
  CHECK(closed_by_peer(frames, std::chrono::seconds(5)));
  ::close(frames);
  CHECK(good.call("GET", cms).status == 200);
  h2_client fresh{s.port()};
  CHECK(fresh.call("GET", "/healthz").body == "ok");
}

TEST_CASE("h2c: a request not finished in time is reset; an idle "
          "connection closes") {
  wire::http_server_options opts;
  opts.request_read_timeout = std::chrono::milliseconds(300);
  server_fixture s{opts};
  h2_client c{s.port()};
  // HEADERS without END_STREAM, and the body never comes.
  auto id = c.submit("POST", cms, config_map_body("slow"));
  c.held.insert(id);
  auto start = std::chrono::steady_clock::now();
  REQUIRE(c.pump([&] { return c.streams[id].closed; }));
  CHECK(c.streams[id].error == NGHTTP2_CANCEL);
  CHECK(std::chrono::steady_clock::now() - start
        >= std::chrono::milliseconds(250));
  // With no stream left, the connection ends (GOAWAY, then close).
  CHECK(c.pump([&] { return c.eof; }));
}
