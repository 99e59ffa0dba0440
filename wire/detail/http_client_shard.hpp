// One libcurl multi handle of an http_client and the HTTP/2 connections it
// holds (driven by wire/http_client.cpp, private to it). libcurl
// 7.88 looks through every connection of a handle for each transfer it
// starts, and connections opened side by side on one handle cost every
// transfer more: 100k watches on one handle took 18 s of the I/O thread
// (400 connections). So a handle opens one connection at a time, up to
// options.connections_per_handle; a burst that needs more connections at
// once goes to more handles (each opening one), all driven by the same I/O
// loop: 100k watches then take 9 s.
#pragma once

#include <cstddef>
#include <memory>
#include <unordered_map>
#include <vector>

#include <curl/curl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "podref/wire/detail/http_client_impl.hpp"
#include "podref/wire/detail/io_loop_client.hpp"

namespace podref::wire {

struct http_client::impl::shard final : detail::loop_client {
  explicit shard(impl& owner_of) : owner(owner_of) {
    // nop
  }

  ~shard() override {
    if (multi) // never attached
      curl_multi_cleanup(multi);
  }

  impl& owner;
  CURLM* multi = nullptr;
  std::unordered_map<request_id, std::unique_ptr<transfer>> transfers;

  // Connections for HTTP/2 (https, h2c). libcurl opens a connection for
  // every transfer that finds the others full, even when one just opened
  // will have room: a burst of N transfers past a connection's streams
  // dials N times. So the I/O thread admits transfers itself: one past the
  // capacity of the connections that are up becomes an *opener* (a fresh
  // connection), and the rest wait in `deferred` until that connection is
  // up or a stream ends (or go to another handle, see place()). Up means the opener's response began, not merely
  // the connection established: until the server's SETTINGS arrive curl
  // assumes 100 streams, and the transfers admitted past those opened
  // connections of their own (with h2c below, HTTP/1.1 ones: 10k watches
  // opened at once made ~2000 connections the server's bound refused).
  // Capacity counts max_streams_per_connection per connection; a server
  // whose limit is lower makes curl open more connections beyond these.
  /// Connections opened (or being opened) by openers, and how many of
  /// those are not up yet.
  std::size_t mux_connections = 0;
  std::size_t openers_pending = 0;
  /// Multiplexed transfers started and not finished.
  std::size_t mux_transfers = 0;
  /// The sockets openers opened (closing one ends a connection).
  std::unordered_map<int, bool> opener_fds;
  std::vector<request_id> deferred;
  bool admit_more = false;

  // -- detail::loop_client (the loop thread) ----------------------------------

  CURLM* multi_handle() override {
    return multi;
  }

  void on_queued() override {
    owner.drain_queue();
  }

  void on_progress() override {
    int left = 0;
    while (auto* msg = curl_multi_info_read(multi, &left))
      if (msg->msg == CURLMSG_DONE)
        finish(msg->easy_handle, msg->data.result);
    if (admit_more && !deferred.empty())
      admit_deferred();
  }

  void on_detach() override {
    for (auto& [id, t] : transfers)
      if (!t->deferred)
        curl_multi_remove_handle(multi, t->easy);
    transfers.clear();
    if (multi)
      curl_multi_cleanup(multi);
    multi = nullptr;
  }

  // -- admission ---------------------------------------------------------------

  /// Whether a connection that is up has room for one more stream.
  bool room() const {
    auto up = mux_connections > openers_pending
                ? mux_connections - openers_pending
                : 0;
    return mux_transfers < up * owner.options.max_streams_per_connection;
  }

  /// Whether a transfer that finds no room may open a connection here:
  /// one at a time per handle (libcurl 7.88 handles connections opened
  /// side by side on one handle badly: 10k watches cost twice the CPU).
  bool may_open() const {
    return openers_pending == 0
           && mux_connections < owner.options.connections_per_handle;
  }

  /// Whether a transfer may wait here for a connection being opened: the
  /// openers' connections will take it.
  bool may_wait() const {
    auto streams = owner.options.max_streams_per_connection;
    return openers_pending > 0
           && deferred.size() + 1 < openers_pending * streams;
  }

  /// Starts `t` now if a connection that is up has room, as an opener
  /// when it may open one, else defers it. Takes the transfer.
  void admit(std::unique_ptr<transfer> owned) {
    auto& t = *owned;
    t.home = this;
    transfers.emplace(t.id, std::move(owned));
    if (!t.mux) {
      start(t, false);
      return;
    }
    if (room()) {
      start(t, false);
    } else if (may_open()) {
      start(t, true);
    } else {
      t.deferred = true;
      deferred.push_back(t.id);
    }
  }

  /// Admits deferred transfers, in order, while there is room.
  void admit_deferred() {
    admit_more = false;
    std::size_t i = 0;
    for (; i < deferred.size(); ++i) {
      auto it = transfers.find(deferred[i]);
      if (it == transfers.end())
        continue; // cancelled
      auto& t = *it->second;
      bool has_room = room();
      if (!has_room && openers_pending > 0)
        break;
      t.deferred = false;
      start(t, !has_room);
    }
    deferred.erase(deferred.begin(),
                   deferred.begin() + static_cast<std::ptrdiff_t>(i));
  }

  /// An opener's connection is up (or failed): the next may open.
  void opener_settled(transfer& t) {
    if (t.opener && openers_pending > 0) {
      --openers_pending;
      t.opener = false;
      admit_more = true;
    }
  }

  /// Starts `t` on the multi handle, as an opener or not.
  void start(transfer& t, bool opener) {
    auto* e = t.easy;
    if (t.mux) {
      ++mux_transfers;
      t.opener = opener;
      if (opener) {
        ++mux_connections;
        ++openers_pending;
        curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
      }
      if (owner.config.plain_http())
        curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                         owner.h2c_workaround && !opener
                           ? CURL_HTTP_VERSION_2_0
                           : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    }
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, this);
    curl_multi_add_handle(multi, e);
  }

  static curl_socket_t on_open_socket(void* user, curlsocktype,
                                      curl_sockaddr* addr) {
    auto* t = static_cast<transfer*>(user);
    auto fd = ::socket(addr->family, addr->socktype, addr->protocol);
    if (fd < 0)
      return CURL_SOCKET_BAD;
    ++t->owner->connects;
    if (t->opener && t->opened_fd < 0) {
      t->opened_fd = fd;
      t->home->opener_fds[fd] = true;
    }
    return fd;
  }

  /// Curl closes a socket (a connection may outlive the transfer that
  /// opened it): an opener's connection is gone.
  static int on_close_socket(void* user, curl_socket_t fd) {
    auto* self = static_cast<shard*>(user);
    if (self->opener_fds.erase(fd) > 0 && self->mux_connections > 0) {
      --self->mux_connections;
      self->admit_more = true;
    }
    return ::close(fd);
  }

  void release(transfer& t) {
    --owner.in_flight;
    if (t.deferred)
      return; // never started
    curl_multi_remove_handle(multi, t.easy);
    if (t.counted_stream)
      --owner.open_streams;
    if (t.mux) {
      --mux_transfers;
      admit_more = true;
      // An opener that failed before it had a socket made no connection.
      if (t.opener && t.opened_fd < 0 && mux_connections > 0)
        --mux_connections;
      opener_settled(t);
    }
  }

  /// Removes transfer `id` if it is here.
  bool cancel_now(request_id id) {
    auto i = transfers.find(id);
    if (i == transfers.end())
      return false;
    release(*i->second);
    transfers.erase(i);
    return true;
  }

  void finish(CURL* easy, CURLcode code) {
    transfer* raw = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &raw);
    auto i = transfers.find(raw->id);
    if (i == transfers.end())
      return;
    auto t = std::move(i->second);
    transfers.erase(i);
    release(*t);
    owner.report(std::move(t), code);
  }
};

} // namespace podref::wire
