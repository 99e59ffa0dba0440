// The pod source actor (pod_source.hpp has the contract). As in the object
// source (wire_source.cpp), replies and stream lines come from the client's
// I/O thread as messages to this actor by a weak address; the request rules
// are shared (detail/request_rules.hpp).
#include "podref/wire/pod_source.hpp"

#include <future>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include "podref/wire/detail/request_rules.hpp"
#include "podref/wire/detail/watch_stream.hpp"
#include "podref/wire/http_client.hpp"

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::wire::http_response)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(podref::wire::wire_pod_watch_line)

namespace podref::wire {

namespace {

using list_done_atom = caf::atom_constant<caf::atom("ps_ldone")>;
using line_atom = caf::atom_constant<caf::atom("ps_line")>;
using stream_done_atom = caf::atom_constant<caf::atom("ps_sdone")>;
using list_atom_ = caf::atom_constant<caf::atom("ps_list")>;
using watch_atom_ = caf::atom_constant<caf::atom("ps_watch")>;

/// What the source knows of a pod: its last delivered state.
struct known_pod {
  wire_pod pod;
};

struct pod_source_state {
  static constexpr const char* name = "podref.pod_source";

  std::shared_ptr<http_client> client;
  pod_source_options options;
  pod_consumer consumer;
  std::shared_ptr<pod_source_counters> counters;
  detail::token_bucket bucket{0, 0};
  detail::retry_backoff backoff{{}, {}, 0};
  std::minstd_rand rng;
  /// By uid.
  std::unordered_map<std::string, known_pod> known;
  /// The last resourceVersion seen ("" after an expired one).
  std::string rv = "0";
  /// Incremented per list or watch; replies of an older one are dropped.
  std::uint64_t generation = 0;
  /// A list in progress: its pages so far.
  std::vector<pod_item> pages;
  std::string continue_token;
  std::uint32_t throttle_retries = 0;
  http_client::request_id http = 0;

  ~pod_source_state() {
    if (http != 0)
      client->cancel(http);
  }

  caf::timespan reserve() {
    auto ns = bucket.reserve();
    if (ns.count() > 0) {
      ++counters->requests.throttled;
      counters->requests.throttled_wait_ns
        += static_cast<std::uint64_t>(ns.count());
    }
    return std::chrono::duration_cast<caf::timespan>(ns);
  }

  std::string selector() const {
    return "fieldSelector=spec.nodeName%3D"
           + detail::escape(options.node_name);
  }

  std::string list_path() const {
    std::string q = "/api/v1/pods?";
    if (!continue_token.empty())
      q += "continue=" + detail::escape(continue_token) + "&";
    q += selector();
    if (rv.empty() || rv == "0")
      q += "&limit=500";
    if (!rv.empty())
      q += "&resourceVersion=" + detail::escape(rv);
    return q;
  }

  void deliver(pod_event ev) {
    if (consumer)
      consumer(std::move(ev));
  }

  void reject(const rejected_pod& r) {
    ++counters->rejected;
    pod_event ev;
    ev.kind = pod_event_kind::rejected;
    ev.rejected = r;
    deliver(std::move(ev));
  }

  /// An ADDED / MODIFIED pod (or a list item).
  void upsert(wire_pod&& p) {
    auto uid = p.pod->metadata.uid;
    auto i = known.find(uid);
    pod_event ev;
    ev.pod = p;
    if (i == known.end()) {
      ev.kind = pod_event_kind::added;
      known.emplace(std::move(uid), known_pod{std::move(p)});
    } else {
      if (i->second.pod.pod->metadata.resource_version
          == p.pod->metadata.resource_version)
        return; // a relist's unchanged pod
      ev.kind = pod_event_kind::updated;
      i->second.pod = std::move(p);
    }
    counters->pods = known.size();
    deliver(std::move(ev));
  }

  void remove(const std::string& uid) {
    auto i = known.find(uid);
    if (i == known.end())
      return;
    pod_event ev;
    ev.kind = pod_event_kind::deleted;
    ev.pod = std::move(i->second.pod);
    known.erase(i);
    counters->pods = known.size();
    deliver(std::move(ev));
  }

  void failed(std::string why) {
    ++counters->failures;
    counters->synced = false;
    pod_event ev;
    ev.kind = pod_event_kind::failed;
    ev.message = std::move(why);
    deliver(std::move(ev));
  }
};

using source_actor = caf::stateful_actor<pod_source_state>;


/// Runs `what` (a list or a watch) when the rate limiter allows, after
/// `extra`.
template <class Atom>
void pace(source_actor* self, Atom what, caf::timespan extra = {}) {
  auto wait = self->state.reserve() + extra;
  self->delayed_send(self, wait, what, self->state.generation);
}

void retry_later(source_actor* self, std::string why) {
  auto& st = self->state;
  st.failed(std::move(why));
  auto wait = std::chrono::duration_cast<caf::timespan>(st.backoff.next());
  ++st.generation;
  pace(self, list_atom_::value, wait);
}

void send_list(source_actor* self) {
  auto& st = self->state;
  ++st.counters->lists;
  caf::actor_addr addr = self->address();
  auto gen = st.generation;
  http_client::handlers h;
  h.on_done = [addr, gen](http_response r) {
    if (auto a = caf::actor_cast<caf::actor>(addr))
      caf::anon_send(a, list_done_atom::value, gen, std::move(r));
  };
  st.http = st.client->get(st.list_path(), std::move(h));
}

/// Reconciles a complete list with what is known (an informer's Replace).
void reconcile(source_actor* self, std::vector<pod_item>& items,
               std::string rv) {
  auto& st = self->state;
  std::unordered_set<std::string> present;
  for (auto& item : items) {
    if (!item.ok) {
      if (!item.rejected.uid.empty())
        present.insert(item.rejected.uid);
      st.reject(item.rejected);
      continue;
    }
    present.insert(item.pod.pod->metadata.uid);
    st.upsert(std::move(item.pod));
  }
  std::vector<std::string> gone;
  for (const auto& [uid, k] : st.known)
    if (present.count(uid) == 0)
      gone.push_back(uid);
  for (const auto& uid : gone)
    st.remove(uid);
  st.rv = std::move(rv);
  st.backoff.reset();
  st.counters->synced = true;
  pod_event ev;
  ev.kind = pod_event_kind::synced;
  st.deliver(std::move(ev));
}

void on_list_done(source_actor* self, http_response& r) {
  auto& st = self->state;
  st.http = 0;
  const std::string subject = "list pods on node " + st.options.node_name;
  if (r.status == 429
      && st.throttle_retries < st.options.requests.max_throttle_retries) {
    ++st.throttle_retries;
    ++st.counters->requests.retried_429;
    pace(self, list_atom_::value,
         std::chrono::duration_cast<caf::timespan>(detail::retry_after(
           r, st.options.requests.max_retry_after)));
    return;
  }
  st.throttle_retries = 0;
  if (r.status != 200 || !r.error.empty()) {
    auto err = r.status == 200
                 ? error_info{errc::unavailable, subject + ": " + r.error}
                 : detail::error_of(r, subject);
    st.pages.clear();
    st.continue_token.clear();
    if (err.code == errc::expired && !st.rv.empty()) {
      // The version is gone: a consistent read next, at once.
      ++st.counters->relists_expired;
      st.rv.clear();
      st.failed(err.message);
      ++st.generation;
      pace(self, list_atom_::value);
      return;
    }
    retry_later(self, err.message);
    return;
  }
  auto page = decode_pod_list(r.body, st.options.limits);
  if (!page) {
    st.pages.clear();
    st.continue_token.clear();
    retry_later(self, subject + ": " + page.error().message);
    return;
  }
  for (auto& item : page->items)
    st.pages.push_back(std::move(item));
  if (!page->continue_token.empty() && st.rv.empty()) {
    st.continue_token = std::move(page->continue_token);
    pace(self, list_atom_::value);
    return;
  }
  st.continue_token.clear();
  auto items = std::move(st.pages);
  st.pages.clear();
  reconcile(self, items, std::move(page->resource_version));
  ++st.generation;
  pace(self, watch_atom_::value);
}

void send_watch(source_actor* self) {
  auto& st = self->state;
  ++st.counters->watches;
  auto min_s = static_cast<std::uint64_t>(
    st.options.requests.min_watch_timeout.count());
  std::uniform_int_distribution<std::uint64_t> draw{min_s, 2 * min_s - 1};
  auto timeout_s = draw(st.rng);
  auto path = "/api/v1/pods?allowWatchBookmarks=true&" + st.selector()
              + "&resourceVersion=" + detail::escape(st.rv)
              + "&timeoutSeconds=" + std::to_string(timeout_s) + "&watch=true";
  auto stream = std::make_shared<detail::watch_stream>(
    st.options.requests.max_event_bytes);
  caf::actor_addr addr = self->address();
  auto gen = st.generation;
  auto limits = st.options.limits;
  http_client::handlers h;
  h.on_stream = [addr, gen, stream, limits](std::string_view chunk) {
    auto a = caf::actor_cast<caf::actor>(addr);
    if (!a)
      return false;
    return stream->feed(
      chunk,
      [&limits](std::string_view line) {
        return decode_pod_watch_line(line, limits);
      },
      [&](wire_pod_watch_line ev) {
        caf::anon_send(a, line_atom::value, gen, std::move(ev));
      });
  };
  h.on_done = [addr, gen, stream](http_response r) {
    stream->finish(r);
    if (auto a = caf::actor_cast<caf::actor>(addr))
      caf::anon_send(a, stream_done_atom::value, gen, std::move(r));
  };
  auto deadline = std::chrono::seconds(timeout_s)
                  + st.options.requests.watch_grace;
  st.http = st.client->get(
    std::move(path), std::move(h),
    std::chrono::duration_cast<std::chrono::milliseconds>(deadline));
}

void on_line(source_actor* self, wire_pod_watch_line& line) {
  auto& st = self->state;
  if (line.is_error) {
    if (st.http != 0)
      st.client->cancel(st.http);
    st.http = 0;
    auto why = detail::watch_error_of(line.status,
                                      "watch pods on node "
                                        + st.options.node_name);
    ++st.generation;
    if (why.code == errc::expired) {
      // 410, or 504 "Too large resource version": relist from the last
      // version seen (as the reflector does); a list that finds it expired
      // too reads from "".
      st.failed(why.message);
      pace(self, list_atom_::value);
      return;
    }
    retry_later(self, why.message);
    return;
  }
  if (line.resource_version > 0)
    st.rv = std::to_string(line.resource_version);
  switch (line.type) {
    case watch_event_type::bookmark:
      return;
    case watch_event_type::deleted:
      if (line.item.ok)
        st.remove(line.item.pod.pod->metadata.uid);
      else if (!line.item.rejected.uid.empty())
        st.remove(line.item.rejected.uid);
      return;
    default:
      if (line.item.ok)
        st.upsert(std::move(line.item.pod));
      else
        st.reject(line.item.rejected);
  }
}

void on_stream_done(source_actor* self, http_response& r) {
  auto& st = self->state;
  st.http = 0;
  ++st.generation;
  const std::string subject = "watch pods on node " + st.options.node_name;
  if (r.status == 200 && r.error.empty()) {
    pace(self, watch_atom_::value); // timeoutSeconds passed: watch again
    return;
  }
  if (r.status == 200) {
    ++st.counters->requests.bad_streams;
    retry_later(self, subject + ": " + r.error);
    return;
  }
  auto err = detail::error_of(r, subject);
  if (err.code == errc::expired) {
    st.failed(err.message);
    pace(self, list_atom_::value);
    return;
  }
  if (r.status == 429) {
    ++st.counters->requests.retried_429;
    pace(self, watch_atom_::value,
         std::chrono::duration_cast<caf::timespan>(detail::retry_after(
           r, st.options.requests.max_retry_after)));
    return;
  }
  retry_later(self, err.message);
}

caf::behavior pod_source_actor(source_actor* self,
                               std::shared_ptr<http_client> client,
                               pod_source_options options,
                               pod_consumer consumer,
                               std::shared_ptr<pod_source_counters> counters) {
  auto& st = self->state;
  st.client = std::move(client);
  st.bucket = detail::token_bucket{options.requests.qps,
                                   options.requests.burst};
  st.backoff = detail::retry_backoff{options.timing.backoff_initial,
                                     options.timing.backoff_cap, options.seed};
  st.rng.seed(static_cast<std::minstd_rand::result_type>(options.seed + 1));
  st.options = std::move(options);
  st.consumer = std::move(consumer);
  st.counters = std::move(counters);
  pace(self, list_atom_::value);
  return {
    [self](list_atom_, std::uint64_t gen) {
      if (gen == self->state.generation)
        send_list(self);
    },
    [self](watch_atom_, std::uint64_t gen) {
      if (gen == self->state.generation)
        send_watch(self);
    },
    [self](list_done_atom, std::uint64_t gen, http_response& r) {
      if (gen == self->state.generation)
        on_list_done(self, r);
    },
    [self](line_atom, std::uint64_t gen, wire_pod_watch_line& line) {
      if (gen == self->state.generation)
        on_line(self, line);
    },
    [self](stream_done_atom, std::uint64_t gen, http_response& r) {
      if (gen == self->state.generation)
        on_stream_done(self, r);
    },
  };
}

} // namespace

struct pod_source::impl {
  caf::actor actor;
  std::shared_ptr<pod_source_counters> counters;
};

pod_source::pod_source(std::unique_ptr<impl> x) : impl_(std::move(x)) {
  // nop
}

std::unique_ptr<pod_source> pod_source::start(
  caf::actor_system& sys, std::shared_ptr<http_client> client,
  const pod_source_options& options, pod_consumer consumer) {
  auto x = std::make_unique<impl>();
  x->counters = std::make_shared<pod_source_counters>();
  x->actor = sys.spawn(pod_source_actor, std::move(client), options,
                       std::move(consumer), x->counters);
  return std::unique_ptr<pod_source>{new pod_source(std::move(x))};
}

pod_source::~pod_source() {
  // As the cluster does: wait (bounded) for the actor to end, so that no
  // consumer call runs after this returns.
  auto ended = std::make_shared<std::promise<void>>();
  auto done = ended->get_future();
  impl_->actor->attach_functor([ended] { ended->set_value(); });
  caf::anon_send_exit(impl_->actor, caf::exit_reason::user_shutdown);
  impl_->actor = caf::actor{};
  done.wait_for(std::chrono::seconds(10));
}

const pod_source_counters& pod_source::counters() const noexcept {
  return *impl_->counters;
}

} // namespace podref::wire
