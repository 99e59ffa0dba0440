// A blocking HTTP/1.1 client (Beast) and a fixture serving a podref API
// server on 127.0.0.1:0, for the wire tests that speak HTTP. Only tests
// named wire_* link Boost: include it from those.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <catch2/catch.hpp>

#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/http_server.hpp"

namespace podref::test {

struct http_test_reply {
  int status = 0;
  std::string body;
  std::string content_type;
};

/// One connection; each call sends a request and reads its whole reply.
struct http_test_client {
  boost::asio::io_context ioc;
  boost::beast::tcp_stream stream{ioc};
  boost::beast::flat_buffer buffer;

  explicit http_test_client(std::uint16_t port) {
    stream.connect(boost::asio::ip::tcp::endpoint{
      boost::asio::ip::make_address("127.0.0.1"), port});
    stream.expires_after(std::chrono::seconds(20));
  }

  http_test_reply call(boost::beast::http::verb verb, const std::string& target,
                       const std::string& body = {},
                       const std::string& accept = {}) {
    namespace http = boost::beast::http;
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!accept.empty())
      req.set(http::field::accept, accept);
    if (!body.empty()) {
      req.set(http::field::content_type, "application/json");
      req.body() = body;
    }
    req.prepare_payload();
    http::write(stream, req);
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    return {static_cast<int>(res.result_int()), res.body(),
            std::string{res[http::field::content_type]}};
  }

  http_test_reply get(const std::string& target) {
    return call(boost::beast::http::verb::get, target);
  }
};

/// podref's API server (with `history` events of history) behind an
/// http_server on an ephemeral loopback port.
struct http_test_server {
  runtime rt;
  api_server api;
  std::unique_ptr<wire::http_server> front;

  explicit http_test_server(std::size_t history = 1000,
                            wire::http_server_options opts = {})
    : api(rt, history) {
    auto started = wire::http_server::start(rt.system(), api.current_actor(),
                                            opts);
    REQUIRE(started);
    front = std::move(started).value();
  }

  ~http_test_server() {
    front->stop();
  }

  std::uint16_t port() const {
    return front->port();
  }
};

} // namespace podref::test
