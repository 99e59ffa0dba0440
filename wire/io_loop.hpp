// io_loop: ONE I/O thread (epoll) that drives the libcurl multi handles of
// any number of http_clients, so that many clients (each its own
// connections, as many kubelets would open them) cost no thread each.
//
// A client attaches its multi handle; the loop learns its sockets and timer
// through libcurl's socket interface (CURLMOPT_SOCKETFUNCTION,
// CURLMOPT_TIMERFUNCTION) and calls curl_multi_socket_action for the one
// socket that is ready, so an idle client costs nothing per event of
// another. Requests queued from any thread wake the loop through an eventfd.
//
// http_client::start makes a loop of its own unless
// http_client_options::loop gives a shared one. The loop stops (its thread
// joins) when its last owner lets go; that owner must not be the loop's
// own thread (handlers must not destroy a client).
#pragma once

#include <cstddef>
#include <memory>

#include "podref/messages/errors.hpp"

namespace podref::wire {

namespace detail {
class loop_client;
} // namespace detail

class io_loop {
public:
  /// Starts the thread. Fails when epoll or an eventfd cannot be made.
  static result<std::shared_ptr<io_loop>> start();

  /// Stops the thread and joins it; clients must be detached by then (each
  /// client holds its loop, so this runs after the last one went).
  ~io_loop();

  io_loop(const io_loop&) = delete;
  io_loop& operator=(const io_loop&) = delete;

  /// Clients attached now.
  std::size_t clients() const;

  // -- for http_client (wire/detail/io_loop_client.hpp) ---------------------

  /// Hooks `c`'s multi handle to this loop; call before `c` queues work.
  void attach(detail::loop_client& c);

  /// `c` has queued work: runs c.on_queued() on the loop thread soon. Any
  /// thread.
  void wake(detail::loop_client& c);

  /// Runs c.on_detach() on the loop thread and forgets `c`; blocks until
  /// done. Not from the loop thread.
  void detach(detail::loop_client& c);

  struct state;

private:
  explicit io_loop(std::shared_ptr<state> x);
  std::shared_ptr<state> state_;
};

} // namespace podref::wire
