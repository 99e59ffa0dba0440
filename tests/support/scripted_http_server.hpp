// A scripted HTTP/1.1 server on 127.0.0.1 for wire client tests: each
// request (one per connection) is answered with what `answer(path, n)`
// returns (the path with its query; paths() records "METHOD path"), n counting the requests with that path's kind (watch or not)
// from 1. An answer starting with "HOLD:" writes the rest and keeps the
// connection open until the client leaves (an open watch); one with
// `pause` in it is written in two writes 50 ms apart (an event split
// across TCP segments and chunks arrives in two reads). Header-only;
// the tests that include it link Boost (tests/CMakeLists.txt: wire_*).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

namespace podref::test {

class scripted_http_server {
public:
  using tcp = boost::asio::ip::tcp;
  using answer_fn = std::function<std::string(const std::string& path, int n)>;

  explicit scripted_http_server(answer_fn answer) : answer_(std::move(answer)) {
    acceptor_.open(tcp::v4());
    acceptor_.bind({boost::asio::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    accept_thread_ = std::thread{[this] { accept_loop(); }};
  }

  ~scripted_http_server() {
    stopping_ = true;
    boost::asio::io_context ioc;
    tcp::socket poke{ioc};
    boost::system::error_code ec;
    poke.connect(acceptor_.local_endpoint(), ec);
    accept_thread_.join();
    for (auto& t : conns_)
      t.join();
  }

  std::string url() const {
    return "http://127.0.0.1:"
           + std::to_string(acceptor_.local_endpoint().port());
  }

  std::vector<std::string> paths() {
    std::lock_guard<std::mutex> guard{mtx_};
    return paths_;
  }

  /// The request bodies, in the order of paths().
  std::vector<std::string> bodies() {
    std::lock_guard<std::mutex> guard{mtx_};
    return bodies_;
  }

  /// Where an answer is split into two writes.
  static constexpr const char* pause = "\x01PAUSE\x01";

  static std::string chunk(const std::string& x) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", x.size());
    return size + x + "\r\n";
  }

  static std::string reply(int status, const std::string& body) {
    return "HTTP/1.1 " + std::to_string(status)
           + " X\r\nContent-Type: application/json\r\nContent-Length: "
           + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n"
           + body;
  }

  /// A chunked watch reply of `lines` (each gets its '\n'); with `hold`
  /// the stream stays open after them, else it ends normally.
  static std::string watch(const std::vector<std::string>& lines, bool hold) {
    std::string out = hold ? "HOLD:" : "";
    out += "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
           "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    for (const auto& l : lines)
      out += chunk(l + "\n");
    if (!hold)
      out += "0\r\n\r\n";
    return out;
  }

private:
  void accept_loop() {
    for (;;) {
      tcp::socket s{ioc_};
      boost::system::error_code ec;
      acceptor_.accept(s, ec);
      if (stopping_ || ec)
        return;
      conns_.emplace_back(
        [this, s = std::move(s)]() mutable { serve(std::move(s)); });
    }
  }

  void serve(tcp::socket s) {
    boost::system::error_code ec;
    boost::asio::streambuf buf;
    boost::asio::read_until(s, buf, "\r\n\r\n", ec);
    if (ec)
      return;
    std::string head{boost::asio::buffers_begin(buf.data()),
                     boost::asio::buffers_end(buf.data())};
    // The body (Content-Length only), after the head's end.
    auto end = head.find("\r\n\r\n") + 4;
    std::string body = head.substr(end);
    head.resize(end);
    auto cl = head.find("Content-Length: ");
    if (cl == std::string::npos)
      cl = head.find("content-length: ");
    if (cl != std::string::npos) {
      auto want = std::stoul(head.substr(cl + 16));
      if (want > body.size()) {
        std::string rest(want - body.size(), '\0');
        boost::asio::read(s, boost::asio::buffer(rest), ec);
        body += rest;
      }
    }
    auto start = head.find(' ') + 1;
    auto path = head.substr(start, head.find(' ', start) - start);
    bool is_watch = path.find("watch=true") != std::string::npos;
    int n = 0;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      n = is_watch ? ++watches_ : ++others_;
      paths_.push_back(head.substr(0, start) + path);
      bodies_.push_back(body);
    }
    auto out = answer_(path, n);
    bool hold = out.rfind("HOLD:", 0) == 0;
    if (hold)
      out.erase(0, 5);
    auto cut = out.find(pause);
    if (cut != std::string::npos) {
      boost::asio::write(s, boost::asio::buffer(out.substr(0, cut)), ec);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      out.erase(0, cut + std::string{pause}.size());
    }
    boost::asio::write(s, boost::asio::buffer(out), ec);
    if (hold) {
      char c;
      while (!stopping_ && !ec)
        s.read_some(boost::asio::buffer(&c, 1), ec);
      return;
    }
    s.shutdown(tcp::socket::shutdown_both, ec);
  }

  answer_fn answer_;
  boost::asio::io_context ioc_;
  tcp::acceptor acceptor_{ioc_};
  std::thread accept_thread_;
  std::vector<std::thread> conns_;
  std::atomic<bool> stopping_{false};
  std::mutex mtx_;
  int watches_ = 0;
  int others_ = 0;
  std::vector<std::string> paths_;
  std::vector<std::string> bodies_;
};

} // namespace podref::test
