// The front's watches, carried by a few hub actors (watch_hubs.hpp has the
// contract): each hub is the API server's watcher for many of them.
#include "podref/wire/detail/watch_hubs.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_clock.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include "podref/messages/actor_types.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/detail/watch_filter.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire::detail {

namespace {

/// A hub's wake-up for its watches' deadlines and bookmarks.
using hub_tick_atom = caf::atom_constant<caf::atom("hub_tick")>;
using hub_open_atom = caf::atom_constant<caf::atom("hub_open")>;
using hub_cancel_atom = caf::atom_constant<caf::atom("hub_cancel")>;

/// The actors' clock (a test's deterministic runtime moves it).
using steady = caf::actor_clock;

/// What a watch keeps in its hub: what filters and encodes its events,
/// where it is at the server, and its next deadline or bookmark.
struct hub_watch {
  watch_output out;
  watch_filter f;
  bookmark_timing bookmarks;
  memory_api_server_actor server;
  /// The server's id of this watch, once it answered.
  std::optional<watch_id> id;
  /// sendInitialEvents=true: the initial events, then a bookmark that
  /// ends them (awaited once the server answered).
  bool initial = false;
  bool awaiting_initial_end = false;
  bool first_table = true;
  label_tracker selected;
  /// timeoutSeconds from the request; the pre-deadline bookmark (before
  /// it, by bookmarks.lead); the next periodic bookmark.
  std::optional<steady::time_point> deadline;
  std::optional<steady::time_point> last_bookmark;
  std::optional<steady::time_point> next_bookmark;
  /// Its entry in the hub's `due` (the earliest of the three).
  std::optional<steady::time_point> due;
};

/// A watch as the front hands it to a hub.
struct hub_open {
  std::uint64_t local = 0;
  caf::actor server;
  api_call call;
  watch_output out;
};

} // namespace
} // namespace podref::wire::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<podref::wire::detail::hub_open>)

namespace podref::wire::detail {
namespace {

/// A server's watch: the server that gave the id (ids are per server
/// incarnation) and the id.
struct server_watch {
  caf::actor_id server;
  watch_id id;
  bool operator==(const server_watch& o) const {
    return server == o.server && id == o.id;
  }
};

struct server_watch_hash {
  std::size_t operator()(const server_watch& w) const noexcept {
    return std::hash<std::uint64_t>{}(w.server * 0x9E3779B97F4A7C15ull ^ w.id);
  }
};

/// One hub: the server's watcher for many of the front's watches (an actor
/// per watch cost ~1.4 KB and three CAF timers ~0.6 KB per open watch; a
/// hub keeps one map entry per watch and one timer for all).
struct hub_state {
  std::unordered_map<std::uint64_t, hub_watch> watches;
  std::unordered_map<server_watch, std::uint64_t, server_watch_hash> by_id;
  /// Watches cancelled before their server's answer: cancelled at the
  /// server when it comes.
  std::set<std::uint64_t> cancelled_early;
  std::set<std::pair<steady::time_point, std::uint64_t>> due;
  /// The tick already asked for (delayed_send), if any.
  std::optional<steady::time_point> tick_at;
  /// The servers this hub watches on (monitored: a server that exits says
  /// so with anonymous w_ends, which name no server).
  std::set<caf::actor_id> servers;
};

using hub_pointer = caf::stateful_actor<hub_state>*;

/// Reschedules watch `local`'s due time (its earliest timer).
void schedule(hub_pointer self, std::uint64_t local, hub_watch& w) {
  auto& st = self->state;
  if (w.due)
    st.due.erase({*w.due, local});
  w.due.reset();
  for (const auto& t : {w.deadline, w.last_bookmark, w.next_bookmark})
    if (t && (!w.due || *t < *w.due))
      w.due = t;
  if (!w.due)
    return;
  st.due.emplace(*w.due, local);
  if (!st.tick_at || *w.due < *st.tick_at) {
    st.tick_at = *w.due;
    auto wait = std::max<steady::duration_type>(*w.due - self->clock().now(),
                                                steady::duration_type::zero());
    self->delayed_send(self, wait, hub_tick_atom::value);
  }
}

/// Forgets watch `local` (its callbacks are not called again).
void forget(hub_pointer self, std::uint64_t local) {
  auto& st = self->state;
  auto i = st.watches.find(local);
  if (i == st.watches.end())
    return;
  auto& w = i->second;
  if (w.due)
    st.due.erase({*w.due, local});
  if (w.id)
    st.by_id.erase({w.server.id(), *w.id});
  st.cancelled_early.erase(local);
  st.watches.erase(i);
}

/// Ends watch `local`: its end once, and the server's watch cancelled
/// unless `at_server_end` (the server ended it).
void end(hub_pointer self, std::uint64_t local, bool at_server_end = false) {
  auto& st = self->state;
  auto i = st.watches.find(local);
  if (i == st.watches.end())
    return;
  auto out = std::move(i->second.out);
  if (!at_server_end && i->second.id)
    self->send(i->second.server, cancel_atom::value, *i->second.id);
  forget(self, local);
  out(std::nullopt);
}

void fail(hub_pointer self, std::uint64_t local, const caf::error& err) {
  auto i = self->state.watches.find(local);
  if (i == self->state.watches.end())
    return;
  auto& w = i->second;
  auto info = from_caf_error(err, error_info{errc::unavailable,
                                             caf::to_string(err)});
  auto status = status_of(info, w.f.res, w.f.name);
  w.out(encode_watch_line("ERROR", info.code == errc::expired
                                             ? expired_watch_status(
                                               info.message)
                                             : status.body));
  end(self, local);
}

/// The server answered watch `local`'s open with `id`.
void opened(hub_pointer self, std::uint64_t local,
            const memory_api_server_actor& server, watch_id id) {
  auto& st = self->state;
  auto i = st.watches.find(local);
  if (i == st.watches.end()) {
    // Ended before the answer (its deadline passed): not left open there.
    self->send(server, cancel_atom::value, id);
    return;
  }
  auto& w = i->second;
  if (st.cancelled_early.erase(local) > 0) {
    self->send(w.server, cancel_atom::value, id);
    forget(self, local);
    return;
  }
  w.id = id;
  st.by_id.emplace(server_watch{w.server.id(), id}, local);
  if (w.initial) {
    // The initial ADDED events follow this reply; the bookmark the
    // server sends on this message follows them.
    w.awaiting_initial_end = true;
    self->send(w.server, w_mark_atom::value, id, true);
  }
}

/// Opens watch `local` at its server: object `name` (or every object) of
/// namespace `ns` (or all), from version `from`.
void open_at(hub_pointer self, std::uint64_t local, const std::string& ns,
             const std::string& name, const std::string& from) {
  auto& w = self->state.watches.at(local);
  auto me = caf::actor_cast<watcher_actor>(self);
  auto on_open = [self, local, server = w.server](watch_id id) {
    opened(self, local, server, id);
  };
  auto on_error = [self, local](caf::error& err) { fail(self, local, err); };
  if (!name.empty())
    self
      ->request(w.server, caf::infinite, watch_atom::value, w.f.res, ns, name,
                from, me)
      .then(on_open, on_error);
  else
    self
      ->request(w.server, caf::infinite, watch_ns_atom::value, w.f.res, ns,
                from, me)
      .then(on_open, on_error);
}

void start(hub_pointer self, hub_open& req) {
  auto local = req.local;
  auto& w = self->state.watches[local];
  auto& r = req.call.r;
  w.out = std::move(req.out);
  w.f.res = r.res;
  w.f.name = r.name;
  w.f.fields = std::move(r.fields);
  w.f.labels = std::move(r.labels);
  w.f.allow_bookmarks = r.allow_bookmarks;
  w.f.table = req.call.table;
  w.initial = r.send_initial_events.value_or(false);
  w.bookmarks = req.call.bookmarks;
  w.server = caf::actor_cast<memory_api_server_actor>(req.server);
  if (self->state.servers.insert(w.server.id()).second)
    self->monitor(w.server);
  // timeoutSeconds counts from the request; 0 means none, as for the real
  // server (which then picks its own, 30 to 60 minutes).
  auto now = self->clock().now();
  if (r.timeout_seconds && *r.timeout_seconds > 0)
    w.deadline = now + std::chrono::seconds(*r.timeout_seconds);
  if (r.allow_bookmarks) {
    if (w.bookmarks.interval.count() > 0)
      w.next_bookmark = now + w.bookmarks.interval;
    if (w.deadline && *w.deadline - now > w.bookmarks.lead)
      w.last_bookmark = *w.deadline - w.bookmarks.lead;
  }
  schedule(self, local, w);
  auto ns = scope_namespace(r);
  auto name = r.field_name && !ns.empty() ? *r.field_name : std::string{};
  auto begin = start_of(r);
  if (!begin.needs_version) {
    open_at(self, local, ns, name, begin.from);
    return;
  }
  auto asked = number_of(r.resource_version).value_or(0);
  self
    ->request(w.server, caf::infinite, list_at_atom::value, w.f.res, ns, name,
              std::string{}, false)
    .then(
      [self, local, ns, name, asked](list_result& now) {
        auto i = self->state.watches.find(local);
        if (i == self->state.watches.end())
          return;
        auto& w = i->second;
        if (self->state.cancelled_early.erase(local) > 0) {
          forget(self, local);
          return;
        }
        auto version = number_of(now.resource_version).value_or(0);
        if (w.initial && asked > version) {
          w.out(encode_watch_line(
            "ERROR", too_large_version_status(asked, version).body));
          end(self, local);
          return;
        }
        open_at(self, local, ns, name,
                w.initial || version == 0 ? std::string{}
                                          : std::to_string(version));
      },
      [self, local](caf::error& err) { fail(self, local, err); });
}

/// The local watch the current message's sender knows as `id` (its
/// server's watch), if any.
std::optional<std::uint64_t> local_of(hub_pointer self, watch_id id) {
  auto sender = self->current_sender();
  if (!sender)
    return std::nullopt; // a server's last words: see on_server_down
  auto k = self->state.by_id.find({sender->id(), id});
  if (k == self->state.by_id.end())
    return std::nullopt;
  return k->second;
}

void on_event(hub_pointer self, watch_id id, const watch_event& ev) {
  auto local = local_of(self, id);
  if (!local)
    return;
  auto& w = self->state.watches.at(*local);
  if (w.awaiting_initial_end && ev.type == watch_event_type::bookmark) {
    w.awaiting_initial_end = false;
    // Without allowWatchBookmarks the request is valid, but the end of the
    // initial events is never marked (as upstream).
    if (w.f.allow_bookmarks)
      w.out(encode_watch_line(
        "BOOKMARK", encode_bookmark(w.f.res, ev.resource_version, true)));
    return;
  }
  if (ev.type == watch_event_type::bookmark && !w.f.allow_bookmarks)
    return;
  if (auto out = w.selected.filter(w.f, ev))
    w.out(event_line(w.f.res, w.f.table, *out, w.first_table));
}

void on_end(hub_pointer self, watch_id id, const caf::error& err) {
  auto found = local_of(self, id);
  if (!found)
    return;
  auto local = *found;
  if (err) {
    auto info = from_caf_error(err, error_info{errc::unavailable,
                                               caf::to_string(err)});
    if (info.code == errc::expired)
      self->state.watches.at(local).out(
        encode_watch_line("ERROR", expired_watch_status(info.message)));
  }
  end(self, local, true);
}

/// Runs what is due: deadlines end their watches, bookmarks are asked of
/// the server (which sends them as events).
void on_tick(hub_pointer self) {
  auto& st = self->state;
  auto now = self->clock().now();
  if (st.tick_at && *st.tick_at <= now)
    st.tick_at.reset();
  while (!st.due.empty() && st.due.begin()->first <= now) {
    auto local = st.due.begin()->second;
    auto& w = st.watches.at(local);
    if (w.deadline && *w.deadline <= now) {
      end(self, local);
      continue;
    }
    bool mark = false;
    if (w.last_bookmark && *w.last_bookmark <= now) {
      w.last_bookmark.reset();
      mark = true;
    }
    if (w.next_bookmark && *w.next_bookmark <= now) {
      w.next_bookmark = now + w.bookmarks.interval;
      mark = true;
    }
    if (mark && w.id)
      self->send(w.server, w_mark_atom::value, *w.id, false);
    schedule(self, local, w);
  }
  if (!st.tick_at && !st.due.empty()) {
    st.tick_at = st.due.begin()->first;
    self->delayed_send(self,
                       std::max<steady::duration_type>(
                         *st.tick_at - now, steady::duration_type::zero()),
                       hub_tick_atom::value);
  }
}

/// Server `gone` exited: its watches end as if it ended each.
void on_server_down(hub_pointer self, const caf::actor_addr& gone) {
  auto& st = self->state;
  st.servers.erase(gone.id());
  std::vector<std::uint64_t> ended;
  for (const auto& [local, w] : st.watches)
    if (w.server.address() == gone)
      ended.push_back(local);
  for (auto local : ended)
    end(self, local, true);
}

caf::behavior watch_hub(hub_pointer self) {
  self->set_down_handler(
    [self](caf::down_msg& dm) { on_server_down(self, dm.source); });
  return {
    [self](hub_open_atom, std::shared_ptr<hub_open>& req) {
      start(self, *req);
    },
    [self](hub_cancel_atom, std::uint64_t local) {
      auto i = self->state.watches.find(local);
      if (i == self->state.watches.end())
        return;
      if (i->second.id) {
        self->send(i->second.server, cancel_atom::value, *i->second.id);
        forget(self, local);
      } else {
        // Its open (or version) request is out: the answer cancels it.
        i->second.out = [](std::optional<std::string>) {};
        if (i->second.due)
          self->state.due.erase({*i->second.due, local});
        i->second.due.reset();
        i->second.deadline.reset();
        i->second.last_bookmark.reset();
        i->second.next_bookmark.reset();
        self->state.cancelled_early.insert(local);
      }
    },
    [self](w_event_atom, watch_id id, const watch_event& ev) {
      on_event(self, id, ev);
    },
    [self](w_end_atom, watch_id id, const caf::error& err) {
      on_end(self, id, err);
    },
    [self](hub_tick_atom) { on_tick(self); },
  };
}

/// A watch carried by a hub.
class hub_session final : public watch_session {
public:
  hub_session(caf::actor hub, std::uint64_t local)
    : hub_(std::move(hub)), local_(local) {
    // nop
  }

  void cancel() override {
    if (!cancelled_.exchange(true))
      caf::anon_send(hub_, hub_cancel_atom::value, local_);
  }

private:
  caf::actor hub_;
  std::uint64_t local_;
  std::atomic<bool> cancelled_{false};
};

} // namespace

struct watch_hubs::state {
  std::mutex mtx;
  std::vector<caf::actor> hubs; // guarded by mtx
  std::uint64_t next = 0;       // guarded by mtx
};

watch_hubs::watch_hubs(caf::actor_system& sys, std::size_t count)
  : x_(std::make_unique<state>()) {
  for (std::size_t i = 0; i < std::max<std::size_t>(count, 1); ++i)
    x_->hubs.push_back(sys.spawn(watch_hub));
}

watch_hubs::~watch_hubs() {
  // A hub that exits ends its watches at the server (which monitors it).
  for (auto& hub : x_->hubs)
    caf::anon_send_exit(hub, caf::exit_reason::user_shutdown);
}

std::shared_ptr<watch_session> watch_hubs::start(const caf::actor& server,
                                                 api_call call,
                                                 watch_output out) {
  if (!server) {
    out(encode_watch_line(
      "ERROR", failure_status(503, "ServiceUnavailable",
                              "the API server is not running")
                 .body));
    out(std::nullopt);
    return nullptr;
  }
  caf::actor hub;
  auto req = std::make_shared<hub_open>();
  {
    std::lock_guard<std::mutex> guard{x_->mtx};
    req->local = x_->next++;
    hub = x_->hubs[req->local % x_->hubs.size()];
  }
  auto local = req->local;
  req->server = server;
  req->call = std::move(call);
  req->out = std::move(out);
  caf::anon_send(hub, hub_open_atom::value, std::move(req));
  return std::make_shared<hub_session>(std::move(hub), local);
}

} // namespace podref::wire::detail
