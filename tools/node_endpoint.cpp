// `podref node`'s metrics and health endpoint (node_endpoint.hpp).
#include "node_endpoint.hpp"

#include <atomic>
#include <thread>

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

namespace podref::cli {

using tcp = boost::asio::ip::tcp;

struct node_endpoint::impl {
  handlers h;
  boost::asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::thread thread;
  std::atomic<bool> stopping{false};

  void serve(tcp::socket& s) {
    boost::system::error_code ec;
    boost::asio::streambuf buf{16 * 1024}; // a request head, bounded
    boost::asio::read_until(s, buf, "\r\n\r\n", ec);
    if (ec)
      return;
    std::string head{boost::asio::buffers_begin(buf.data()),
                     boost::asio::buffers_end(buf.data())};
    auto sp = head.find(' ');
    auto sp2 = sp == std::string::npos ? sp : head.find(' ', sp + 1);
    std::string method = head.substr(0, sp);
    std::string path = sp2 == std::string::npos
                         ? std::string{}
                         : head.substr(sp + 1, sp2 - sp - 1);
    path = path.substr(0, path.find('?'));
    int status = 200;
    std::string type = "text/plain; charset=utf-8";
    std::string body;
    if (method != "GET") {
      status = 405;
      body = "method not allowed\n";
    } else if (path == "/metrics") {
      type = "text/plain; version=0.0.4; charset=utf-8";
      body = h.metrics();
    } else if (path == "/healthz") {
      body = "ok";
    } else if (path == "/readyz") {
      if (h.ready()) {
        body = "ok";
      } else {
        status = 503;
        body = "the node's pods are not synced";
      }
    } else {
      status = 404;
      body = "404 page not found\n";
    }
    const char* reason = status == 200   ? "OK"
                         : status == 404 ? "Not Found"
                         : status == 405 ? "Method Not Allowed"
                                         : "Service Unavailable";
    std::string reply = "HTTP/1.1 " + std::to_string(status) + " " + reason
                        + "\r\nContent-Type: " + type + "\r\nContent-Length: "
                        + std::to_string(body.size())
                        + "\r\nConnection: close\r\n\r\n" + body;
    boost::asio::write(s, boost::asio::buffer(reply), ec);
    s.shutdown(tcp::socket::shutdown_both, ec);
  }

  void run() {
    for (;;) {
      tcp::socket s{ioc};
      boost::system::error_code ec;
      acceptor.accept(s, ec);
      if (stopping)
        return;
      if (!ec)
        serve(s);
    }
  }
};

node_endpoint::node_endpoint(std::unique_ptr<impl> x) : impl_(std::move(x)) {
  // nop
}

result<std::unique_ptr<node_endpoint>>
node_endpoint::start(const std::string& listen, handlers h) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos)
    return error_info{errc::invalid_argument,
                      "--metrics: expected ADDRESS:PORT"};
  auto host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  boost::system::error_code ec;
  auto address = boost::asio::ip::make_address(host, ec);
  unsigned long port = 0;
  try {
    port = std::stoul(listen.substr(colon + 1));
  } catch (...) {
    port = 65536;
  }
  if (ec || port > 65535)
    return error_info{errc::invalid_argument,
                      "--metrics: expected ADDRESS:PORT"};
  if (!address.is_loopback())
    return error_info{errc::invalid_argument,
                      "--metrics: a loopback address only (the endpoint has "
                      "no TLS and no authentication)"};
  auto x = std::make_unique<impl>();
  x->h = std::move(h);
  tcp::endpoint ep{address, static_cast<unsigned short>(port)};
  x->acceptor.open(ep.protocol(), ec);
  if (!ec)
    x->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec)
    x->acceptor.bind(ep, ec);
  if (!ec)
    x->acceptor.listen(64, ec);
  if (ec)
    return error_info{errc::unavailable,
                      "--metrics: cannot listen on " + listen + ": "
                        + ec.message()};
  auto* self = x.get();
  x->thread = std::thread{[self] { self->run(); }};
  return std::unique_ptr<node_endpoint>{new node_endpoint(std::move(x))};
}

node_endpoint::~node_endpoint() {
  impl_->stopping = true;
  // Wakes the blocking accept.
  boost::asio::io_context ioc;
  tcp::socket poke{ioc};
  boost::system::error_code ec;
  poke.connect(impl_->acceptor.local_endpoint(), ec);
  impl_->thread.join();
}

std::string node_endpoint::url() const {
  auto ep = impl_->acceptor.local_endpoint();
  auto host = ep.address().to_string();
  if (ep.address().is_v6())
    host = "[" + host + "]";
  return "http://" + host + ":" + std::to_string(ep.port());
}

} // namespace podref::cli
