// What io_loop needs of a client (wire/io_loop.hpp): its multi handle, and
// the work the loop thread runs for it. Every member runs on the loop
// thread.
#pragma once

#include <curl/curl.h>

namespace podref::wire::detail {

class loop_client {
public:
  virtual ~loop_client() = default;

  /// The client's multi handle (the loop sets its socket and timer hooks).
  virtual CURLM* multi_handle() = 0;

  /// Takes what callers queued (adds and cancels).
  virtual void on_queued() = 0;

  /// After libcurl acted on the client's sockets or timer: finished
  /// transfers, admissions.
  virtual void on_progress() = 0;

  /// Removes every transfer and cleans the multi handle up (its sockets
  /// close); nothing of the client runs after this.
  virtual void on_detach() = 0;
};

} // namespace podref::wire::detail
