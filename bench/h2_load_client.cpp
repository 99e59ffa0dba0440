// The nghttp2 client of `podref bench -w apiserver` (h2_load_client.hpp).
#include "bench/h2_load_client.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace podref::bench {

struct h2_load_client::connection {
  int fd = -1;
  nghttp2_session* session = nullptr;
  /// Bytes nghttp2 produced that the socket did not take yet.
  std::string pending;
  h2_load_client* owner = nullptr;
};

struct h2_callbacks {
  static h2_load_client::connection& conn(void* user) {
    return *static_cast<h2_load_client::connection*>(user);
  }

  static int on_header(nghttp2_session*, const nghttp2_frame* frame,
                       const uint8_t* name, size_t namelen,
                       const uint8_t* value, size_t valuelen, uint8_t,
                       void* user) {
    if (frame->hd.type != NGHTTP2_HEADERS || namelen != 7
        || std::memcmp(name, ":status", 7) != 0)
      return 0;
    int status = 0;
    for (size_t i = 0; i < valuelen; ++i)
      status = status * 10 + (value[i] - '0');
    auto& c = conn(user);
    auto& owner = *c.owner;
    if (&c == owner.conns_.front() && frame->hd.stream_id == owner.request_id_)
      owner.request_status_ = status;
    else
      owner.on_status(status);
    return 0;
  }

  static int on_data(nghttp2_session*, uint8_t, int32_t id,
                     const uint8_t* data, size_t len, void* user) {
    auto& c = conn(user);
    auto& owner = *c.owner;
    if (&c == owner.conns_.front() && id == owner.request_id_)
      return 0;
    auto n = std::count(data, data + len, '\n');
    if (n > 0) {
      owner.lines_ += static_cast<std::uint64_t>(n);
      owner.last_line_ = std::chrono::steady_clock::now();
    }
    return 0;
  }

  static int on_close(nghttp2_session*, int32_t id, uint32_t, void* user) {
    auto& c = conn(user);
    c.owner->on_close(id, c);
    return 0;
  }

  static ssize_t read_upload(nghttp2_session*, int32_t, uint8_t* buf,
                             size_t length, uint32_t* flags,
                             nghttp2_data_source*, void* user) {
    auto& up = conn(user).owner->upload_;
    auto n = std::min(length, up.size());
    std::memcpy(buf, up.data(), n);
    up.erase(0, n);
    if (up.empty())
      *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
};

namespace {

nghttp2_nv nv(const std::string& name, const std::string& value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())),
          name.size(), value.size(), NGHTTP2_NV_FLAG_NONE};
}

std::int32_t submit(nghttp2_session* s, const std::string& method,
                    const std::string& path, bool with_body,
                    const std::string& type = "application/json") {
  static const std::string m = ":method", p = ":path", sc = ":scheme",
                           a = ":authority", ct = "content-type",
                           http = "http", host = "127.0.0.1";
  nghttp2_nv hdrs[] = {nv(m, method), nv(p, path), nv(sc, http), nv(a, host),
                       nv(ct, type)};
  nghttp2_data_provider provider{};
  provider.read_callback = &h2_callbacks::read_upload;
  return nghttp2_submit_request(s, nullptr, hdrs, with_body ? 5 : 4,
                                with_body ? &provider : nullptr, nullptr);
}

} // namespace

h2_load_client::h2_load_client(std::uint16_t port, std::size_t connections) {
  nghttp2_session_callbacks* cbs = nullptr;
  nghttp2_session_callbacks_new(&cbs);
  nghttp2_session_callbacks_set_on_header_callback(cbs, &h2_callbacks::on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
    cbs, &h2_callbacks::on_data);
  nghttp2_session_callbacks_set_on_stream_close_callback(
    cbs, &h2_callbacks::on_close);
  for (std::size_t i = 0; i < std::max<std::size_t>(connections, 1); ++i) {
    auto c = new connection;
    c->owner = this;
    conns_.push_back(c);
    c->fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (c->fd < 0
        || ::connect(c->fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr)
             != 0)
      throw std::runtime_error(std::string{"cannot connect: "}
                               + std::strerror(errno));
    int one = 1;
    ::setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::fcntl(c->fd, F_SETFL, ::fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    nghttp2_session_client_new(&c->session, cbs, c);
    // Windows wide enough that flow control never paces the events.
    nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1u << 20},
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100}};
    nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, settings, 2);
    nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0,
                                          1 << 30);
  }
  nghttp2_session_callbacks_del(cbs);
}

h2_load_client::~h2_load_client() {
  for (auto* c : conns_) {
    nghttp2_session_del(c->session);
    if (c->fd >= 0)
      ::close(c->fd);
    delete c;
  }
}

void h2_load_client::on_status(int status) {
  if (status == 200)
    ++ok_streams_;
  else
    ++failed_streams_;
}

void h2_load_client::on_close(std::int32_t id, connection& c) {
  if (&c == conns_.front() && id == request_id_)
    request_done_ = true;
}

void h2_load_client::open_streams(const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    auto& c = *conns_[next_++ % conns_.size()];
    if (submit(c.session, "GET", path, false) < 0)
      throw std::runtime_error("nghttp2_submit_request failed");
  }
  for (auto* c : conns_)
    flush(*c);
}

int h2_load_client::request(const std::string& method, const std::string& path,
                            const std::string& body,
                            const std::string& content_type) {
  auto& c = *conns_.front();
  upload_ = body;
  request_status_ = 0;
  request_done_ = false;
  request_id_ = submit(c.session, method, path, !body.empty(), content_type);
  if (request_id_ < 0)
    return 0;
  flush(c);
  if (!run_until([&] { return request_done_; }, std::chrono::seconds(30)))
    return 0;
  return request_status_;
}

void h2_load_client::flush(connection& c) {
  for (;;) {
    // Gathers up to 64 KiB of frames per send.
    while (c.pending.size() < (64u << 10)) {
      const uint8_t* data = nullptr;
      auto n = nghttp2_session_mem_send(c.session, &data);
      if (n < 0) {
        failed_ = true;
        return;
      }
      if (n == 0)
        break;
      c.pending.append(reinterpret_cast<const char*>(data),
                       static_cast<std::size_t>(n));
    }
    if (c.pending.empty())
      return;
    auto n = ::send(c.fd, c.pending.data(), c.pending.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        failed_ = true;
      return;
    }
    c.pending.erase(0, static_cast<std::size_t>(n));
  }
}

void h2_load_client::poll_once(int timeout_ms) {
  std::vector<pollfd> fds;
  fds.reserve(conns_.size());
  for (auto* c : conns_)
    fds.push_back({c->fd,
                   static_cast<short>(POLLIN | (c->pending.empty() ? 0 : POLLOUT)),
                   0});
  if (::poll(fds.data(), fds.size(), timeout_ms) <= 0)
    return;
  static thread_local uint8_t buf[1 << 16];
  for (std::size_t i = 0; i < fds.size(); ++i) {
    auto& c = *conns_[i];
    if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      for (int rounds = 0; rounds < 16; ++rounds) {
        auto n = ::recv(c.fd, buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
          failed_ = true;
          break;
        }
        if (n < 0)
          break;
        if (nghttp2_session_mem_recv(c.session, buf, static_cast<size_t>(n))
            < 0) {
          failed_ = true;
          break;
        }
      }
    }
    flush(c);
  }
}

} // namespace podref::bench
