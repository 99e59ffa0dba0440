// The wire source's state and the steps its two files share (wire_source.cpp:
// requests, replies and watches; watch_list.cpp: the streaming list).
// Private to wire/.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/stateful_actor.hpp>

#include "podref/messages/actor_types.hpp"
#include "podref/wire/detail/request_rules.hpp"
#include "podref/wire/http_client.hpp"
#include "podref/wire/wire_decode.hpp"
#include "podref/wire/wire_source.hpp"

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::wire::http_response)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::wire::wire_watch_line)

namespace podref::wire::detail {

using req_done_atom = caf::atom_constant<caf::atom("ws_done")>;
using line_atom = caf::atom_constant<caf::atom("ws_line")>;
using stream_done_atom = caf::atom_constant<caf::atom("ws_sdone")>;
using run_atom = caf::atom_constant<caf::atom("ws_run")>;
using wl_line_atom = caf::atom_constant<caf::atom("ws_wlline")>;
using wl_done_atom = caf::atom_constant<caf::atom("ws_wldone")>;
using wl_timeout_atom = caf::atom_constant<caf::atom("ws_wlto")>;

/// What a paced request is: a get, a list, a watch, or a list streamed as
/// a watch-list.
enum class call_kind : std::uint8_t { get, list, watch, watch_list };

/// A get or list waiting for its reply.
struct pending_call {
  call_kind kind = call_kind::get;
  caf::response_promise promise;
  resource res = resource::secrets;
  std::string ns;
  std::string name;
  std::string rv;
  std::string continue_token;
  std::vector<api_object> items; // pages so far
  std::uint32_t throttle_retries = 0;
};

struct open_watch {
  watcher_actor watcher;
  /// The streaming list whose stream this watch took over (0: none).
  std::uint64_t stream = 0;
  resource res = resource::secrets;
  std::string ns;
  std::string name;
  std::string rv;
  /// 0 while the request waits for the rate limiter.
  http_client::request_id http = 0;
  std::uint32_t throttle_retries = 0;
};

/// A streaming list (watch_list.cpp): one watch-list request that answers
/// a list call with its initial events, then waits for the reflector's
/// watch from the end bookmark's version to take the stream over.
struct list_stream {
  enum class phase : std::uint8_t { collecting, parked, adopted };
  phase at = phase::collecting;
  /// The list call it answers (collecting), then the watch it serves.
  std::uint64_t call = 0;
  watch_id watch = 0;
  http_client::request_id http = 0;
  resource res = resource::secrets;
  std::string ns;
  std::string name;
  /// The initial events' objects, by name (a watch-list may carry more
  /// than one event of an object before its end bookmark).
  std::vector<api_object> items;
  /// The end bookmark's version, once parked.
  std::string rv;
  /// Events after the end bookmark, kept until the watch takes over.
  std::vector<wire_watch_line> pending;
};

struct source_state {
  static constexpr const char* name = "podref.wire_source";

  std::shared_ptr<http_client> client;
  wire_source_options options;
  std::shared_ptr<wire_source_counters> counters;
  detail::token_bucket bucket{0, 0};
  std::unordered_map<std::uint64_t, pending_call> calls;
  std::unordered_map<watch_id, open_watch> watches;
  /// Streaming lists by their call key (watch_list.cpp).
  std::unordered_map<std::uint64_t, list_stream> streams;
  /// The server refused a watch-list with 422: list and watch from now on.
  bool watch_list_refused = false;
  std::uint64_t next_call = 1;
  watch_id next_watch = 1;
  std::minstd_rand rng{std::random_device{}()};

  ~source_state() {
    for (auto& [id, w] : watches)
      if (w.http != 0)
        client->cancel(w.http);
    for (auto& [key, s] : streams)
      if (s.at != list_stream::phase::adopted && s.http != 0)
        client->cancel(s.http);
  }

  /// Takes a token; the time to wait for it (zero: go now), counted.
  caf::timespan reserve() {
    auto ns = bucket.reserve();
    if (ns.count() > 0) {
      ++counters->throttled;
      counters->throttled_wait_ns += static_cast<std::uint64_t>(ns.count());
    }
    return std::chrono::duration_cast<caf::timespan>(ns);
  }
};

using source_actor = caf::stateful_actor<source_state>;

// -- wire_source.cpp ----------------------------------------------------------

std::string collection_path(resource res, const std::string& ns);

/// "secrets ns/name", for messages.
std::string what(resource res, const std::string& ns, const std::string& name);

/// timeoutSeconds of a new watch, drawn from [min, 2 x min).
std::uint64_t draw_watch_timeout(source_state& st);

/// Opens a watch stream of `path` whose lines and end come to this actor
/// as (line_atom | wl_line_atom, key, line) and (stream_done_atom |
/// wl_done_atom, key, response), the latter when `list_stream`; the client
/// ends it `watch_grace` past `timeout_s`.
http_client::request_id open_stream(source_actor* self, std::string path,
                                    resource res, std::uint64_t key,
                                    bool list_stream, std::uint64_t timeout_s);

/// Runs `key` of `kind` now or when the rate limiter allows.
void pace(source_actor* self, call_kind kind, std::uint64_t key,
          caf::timespan extra = caf::timespan{0});

/// A line of watch `id`: its event to the watcher, or its end (ERROR).
void on_watch_line(source_actor* self, watch_id id, wire_watch_line& line);

/// The end of watch `id`'s transfer.
void on_watch_done(source_actor* self, watch_id id, http_response& r);

// -- watch_list.cpp -----------------------------------------------------------

/// Whether list call `key` goes as a streaming list (on, not refused by
/// the server, a first list or a relist).
bool streams_list(source_actor* self, const pending_call& c);

/// Sends list call `key` as a watch-list request (paced as call_kind::
/// watch_list).
void send_watch_list(source_actor* self, std::uint64_t key);

/// Hands watch `id` the parked stream of its object at its version; false
/// when there is none (the caller opens a watch).
bool adopt_watch_list(source_actor* self, watch_id id);

/// Drops the stream watch `id` took over (the watch ended or was
/// cancelled; its transfer is cancelled by the caller).
void forget_watch_list(source_actor* self, const open_watch& w);

/// The streaming list's message handlers.
void on_list_stream_line(source_actor* self, std::uint64_t key,
                         wire_watch_line& line);
void on_list_stream_done(source_actor* self, std::uint64_t key,
                         http_response& r);
/// The timer armed when the stream entered phase `armed_in`.
void on_list_stream_timeout(source_actor* self, std::uint64_t key,
                            std::uint8_t armed_in);

} // namespace podref::wire::detail
