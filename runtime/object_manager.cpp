#include "podref/runtime/object_manager.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "podref/actors/manager.hpp"
#include "podref/read_side/change_hub.hpp"
#include "podref/messages/pod_registration.hpp"
#include "podref/messages/validation.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/detail/drive.hpp"
#include "podref/runtime/detail/give_way.hpp"
#include "podref/runtime/runtime.hpp"

namespace podref {

namespace {

/// How long, in virtual time, a blocking call that needs no time (sync, a
/// live read of the in-memory server, the manager's exit) may let pass on
/// the deterministic scheduler before it gives up: only a lost actor needs
/// more (a threaded runtime would then wait for ever).
constexpr std::chrono::seconds no_wait_budget{60};

error_info nothing_left_error() {
  return {errc::unavailable,
          "no answer: nothing is left to run on the deterministic runtime"};
}

} // namespace

struct object_manager::impl {
  caf::actor_system& sys;
  /// CAF's deterministic scheduler (detail/drive.hpp): no back-pressure,
  /// no coalescing, and blocking calls drive the engine.
  const bool deterministic;
  resource res;
  manager_options opts;
  detail::read_side_ptr rs = std::make_shared<detail::read_side>();
  /// The scheduler's pending jobs, which snapshot reads give way to (or
  /// null).
  const detail::pending_jobs* pending_jobs;
  std::shared_ptr<detail::command_inbox> inbox;
  object_source_actor source;
  manager_actor mgr;
  std::shared_future<void> mgr_down;
  std::atomic<bool> closing{false};
  std::atomic<int> in_flight{0};
  std::once_flag shutdown_once;
  /// The current source after a replacement (api_server::current_actor());
  /// empty for a bare source actor, which is never replaced.
  std::function<caf::actor()> resolve;
  /// Delivers change notifications; its thread starts with the first
  /// subscription.
  std::shared_ptr<detail::change_hub> changes;

  /// `resolve` may be empty (see manager_config::resolve_source).
  impl(caf::actor_system& sys, const caf::actor& src, resource res,
       const manager_options& opts, std::function<caf::actor()> resolve = {})
    : sys(sys),
      deterministic(detail::is_deterministic(sys)),
      res(res),
      opts(opts),
      pending_jobs(detail::pending_jobs_of(sys)),
      // Back-pressure makes a caller wait for the manager's progress; on the
      // deterministic scheduler the caller is the only one who could make
      // it, so its calls never wait (nor yield).
      inbox(std::make_shared<detail::command_inbox>(
        deterministic ? 0 : opts.max_unapplied, 0,
        deterministic ? 0 : opts.yield_above,
        deterministic ? 0 : opts.max_unapplied_releases)),
      source(caf::actor_cast<object_source_actor>(src)),
      resolve(std::move(resolve)),
      changes(std::make_shared<detail::change_hub>(opts.notify_executor,
                                                   opts.notify_errors)) {
    manager_config cfg;
    cfg.res = res;
    cfg.strategy = opts.strategy;
    cfg.source = source;
    if (this->resolve)
      cfg.resolve_source = [get = this->resolve] {
        return caf::actor_cast<object_source_actor>(get());
      };
    cfg.read_side = rs;
    cfg.inbox = inbox;
    cfg.changes = changes;
    // Coalescing trades a few microseconds for bigger batches under real
    // load; on the deterministic scheduler it would only hide a timer
    // between a registration and run_until_idle().
    cfg.coalesce = deterministic ? std::chrono::nanoseconds{0} : opts.coalesce;
    static_cast<engine_settings&>(cfg) = opts;
    // Upstream clamps maxIdleTime to at least one minute; the actor takes
    // what it is given (tests over real time use less).
    cfg.max_idle = std::max<std::chrono::nanoseconds>(
      engine_settings::idle_sync_periods * opts.sync_frequency,
      std::chrono::minutes(1));
    mgr = sys.spawn(manager, std::move(cfg));
    auto down = std::make_shared<std::promise<void>>();
    mgr_down = down->get_future().share();
    // Callers waiting for room must not wait for a manager that is gone.
    mgr->attach_functor([down, box = inbox](const caf::error&) {
      box->close();
      down->set_value();
    });
  }

  std::int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
             sys.clock().now().time_since_epoch())
      .count();
  }

  /// Waits for the reply to what `self` just asked: on the deterministic
  /// scheduler by running the engine for at most `budget` of virtual time
  /// (false: no reply can come), else by the receive that follows.
  bool reply_coming(caf::scoped_actor& self, caf::timespan budget) {
    return detail::drive_until(
      sys, [&] { return !self->mailbox().empty(); }, budget);
  }

  /// One blocking request to the manager, counted as in flight (shutdown
  /// waits for those); nullopt when none can be answered (shut down, or
  /// nothing left to run on the deterministic scheduler).
  template <class T, class... Ts>
  std::optional<result<T>> ask_manager(Ts&&... xs) {
    in_flight.fetch_add(1, std::memory_order_acq_rel);
    std::optional<result<T>> res;
    if (!closing.load(std::memory_order_acquire)) {
      caf::scoped_actor self{sys};
      auto reply = self->request(mgr, caf::infinite, std::forward<Ts>(xs)...);
      if (reply_coming(self, no_wait_budget))
        reply.receive([&](T& x) { res.emplace(std::move(x)); },
                      [&](caf::error& err) {
                        res.emplace(from_caf_error(err, shut_down_error()));
                      });
    }
    in_flight.fetch_sub(1, std::memory_order_acq_rel);
    return res;
  }

  /// Get keeps no bookkeeping (upstream's simple managers): its callers
  /// build no registration at all.
  bool keeps_registrations() const noexcept {
    return opts.strategy != strategy::get;
  }

  /// Hands a registration to the manager through the command inbox; only
  /// the push the parked manager waits for sends it a message.
  void enqueue(detail::command::kind what, pod_registration_ptr reg) {
    if (closing.load(std::memory_order_acquire))
      return;
    if (inbox->push(what, std::move(reg)))
      caf::anon_send(mgr, drain_atom::value);
  }

  /// Serves a synced object from its published snapshot; nullopt when the
  /// read must go through the actors.
  std::optional<result<api_object>> snapshot_read(const std::string& ns,
                                                  const std::string& name) {
    detail::give_way(pending_jobs);
    auto& side = *rs;
    auto guard = side.domain.pin();
    auto* slot = side.find(ns, name);
    if (slot == nullptr)
      return std::nullopt;
    auto* snap = slot->load();
    if (!snap->synced)
      return std::nullopt;
    // Stopped as immutable, and referenced by a new pod since: the
    // reflector rechecks it first (actors/reflector.hpp, recheck).
    if (!snap->running && snap->generation != slot->invalidations())
      return std::nullopt;
    side.record_read(*slot);
    guard.count_snapshot_read();
    if (!snap->object)
      return result<api_object>{watch_not_found_error(res, name)};
    // Upstream stops watching an immutable object on the first read that
    // sees it; the reflector learns of our read by message, once.
    if (snap->object.is_immutable() && slot->claim_immutable_report())
      caf::anon_send(mgr, immut_atom::value, ns, name);
    return result<api_object>{snap->stripes.copy(snap->object)};
  }

  /// Serves a fresh cached object (Cache) from its published snapshot;
  /// nullopt when the read must go through the object's cache entry. The
  /// snapshot counts only while no reference was added since its fetch.
  std::optional<result<api_object>> cache_read(const std::string& ns,
                                               const std::string& name) {
    detail::give_way(pending_jobs);
    auto guard = rs->domain.pin();
    auto* slot = rs->find(ns, name);
    if (slot == nullptr)
      return std::nullopt;
    auto* snap = slot->load();
    if (!snap->cached_ok || snap->generation != slot->invalidations())
      return std::nullopt;
    auto ttl = node_ttl_source::effective(opts.node_ttl.get(),
                                          opts.default_ttl);
    if (!is_fresh(snap->fetched_ns, now_ns(), ttl))
      return std::nullopt;
    guard.count_snapshot_read();
    return result<api_object>{snap->stripes.copy(snap->object)};
  }

  /// Runs one blocking request through a scoped actor of its own, counted
  /// as a waited read and as in flight (shutdown waits for those); `ask`
  /// sends the request and stores the answer.
  template <class Ask>
  result<api_object> blocking_read(Ask&& ask) {
    {
      auto guard = rs->domain.pin();
      guard.count_waited_read();
    }
    in_flight.fetch_add(1, std::memory_order_acq_rel);
    if (closing.load(std::memory_order_acquire)) {
      in_flight.fetch_sub(1, std::memory_order_acq_rel);
      return shut_down_error();
    }
    std::optional<result<api_object>> answer;
    {
      caf::scoped_actor self{sys};
      ask(self, answer);
    }
    in_flight.fetch_sub(1, std::memory_order_acq_rel);
    return std::move(*answer);
  }

  /// Get: one live GET, with the source's errors as they are.
  result<api_object> live_read(const std::string& ns,
                               const std::string& name) {
    rs->counters.gets.fetch_add(1, std::memory_order_relaxed);
    return blocking_read([&](caf::scoped_actor& self, auto& answer) {
      auto current = resolve ? caf::actor_cast<object_source_actor>(resolve())
                             : source;
      auto reply = self->request(current, caf::infinite, caf::get_atom::value,
                                 res, ns, name, std::string{});
      if (!reply_coming(self, no_wait_budget)) {
        answer.emplace(nothing_left_error());
        return;
      }
      reply.receive([&](api_object& x) { answer.emplace(std::move(x)); },
                    [&](caf::error& err) {
                      answer.emplace(from_caf_error(
                        err, error_info{errc::unavailable,
                                        "API server unavailable: "
                                          + caf::to_string(err)}));
                    });
    });
  }

  /// Watch and Cache: the manager delegates to the object's actor.
  result<api_object> actor_read(const std::string& ns,
                                const std::string& name) {
    // The object actor answers within the sync timeout; the margin only
    // guards against a lost actor.
    auto limit = caf::timespan{2 * opts.sync_timeout + std::chrono::seconds(5)};
    return blocking_read([&](caf::scoped_actor& self, auto& answer) {
      auto reply = self->request(mgr, limit, get_obj_atom::value, ns, name);
      if (!reply_coming(self, limit)) {
        answer.emplace(nothing_left_error());
        return;
      }
      reply.receive([&](api_object& x) { answer.emplace(std::move(x)); },
                    [&](caf::error& err) {
                      answer.emplace(translate(err, ns, name));
                    });
    });
  }

  error_info translate(const caf::error& err, const std::string& ns,
                       const std::string& name) const {
    if (closing.load(std::memory_order_acquire))
      return shut_down_error();
    if (err == caf::sec::request_timeout)
      return sync_timeout_error(res);
    // The reflector went away while the read waited: its last reference
    // was dropped.
    return from_caf_error(err, not_registered_error(ns, name));
  }

  void shutdown() {
    std::call_once(shutdown_once, [this] {
      closing.store(true, std::memory_order_release);
      inbox->close();
      caf::anon_send_exit(mgr, caf::exit_reason::user_shutdown);
      auto down = [this] {
        return mgr_down.wait_for(std::chrono::seconds(0))
               == std::future_status::ready;
      };
      if (detail::drive_until(sys, down, no_wait_budget))
        mgr_down.wait();
      // Reads in flight end quickly: their reflectors die with the manager.
      while (in_flight.load(std::memory_order_acquire) > 0)
        std::this_thread::yield();
      // No callback starts after this (one running elsewhere is waited for).
      changes->stop();
    });
  }
};

object_manager::object_manager(runtime& rt, const caf::actor& source,
                               resource res, const manager_options& opts)
  : impl_(std::make_unique<impl>(rt.system(), source, res, opts)) {
  // nop
}

object_manager::object_manager(runtime& rt, api_server& source, resource res,
                               const manager_options& opts)
  : impl_(std::make_unique<impl>(rt.system(), source.actor(), res, opts,
                                 source.current_actor())) {
  // nop
}

namespace {

manager_options with_strategy(manager_options opts, strategy s) {
  opts.strategy = s;
  return opts;
}

} // namespace

object_manager::object_manager(runtime& rt, const caf::actor& source,
                               resource res, strategy s,
                               const manager_options& opts)
  : object_manager(rt, source, res, with_strategy(opts, s)) {
  // nop
}

object_manager::object_manager(runtime& rt, api_server& source, resource res,
                               strategy s, const manager_options& opts)
  : object_manager(rt, source, res, with_strategy(opts, s)) {
  // nop
}

object_manager::~object_manager() {
  impl_->shutdown();
}

resource object_manager::managed_resource() const noexcept {
  return impl_->res;
}

strategy object_manager::managed_strategy() const noexcept {
  return impl_->opts.strategy;
}

result<void> object_manager::register_pod(const pod& p) {
  if (impl_->closing.load(std::memory_order_acquire))
    return shut_down_error();
  // Checked here, on the caller's thread: a rejected pod never reaches the
  // manager, so the registered state cannot change.
  // Get keeps no registrations: it only validates.
  auto checked = impl_->keeps_registrations()
                   ? make_checked_registration(p, impl_->res)
                   : checked_registration{nullptr, find_pod_problem(p)};
  if (const auto& bad = checked.problem)
    return invalid_pod_error(p.metadata.ns, p.metadata.name, bad->path,
                             bad->problem);
  if (checked.registration)
    impl_->enqueue(detail::command::kind::reg,
                   std::move(checked.registration));
  return {};
}

result<void> object_manager::unregister_pod(const pod& p) {
  if (impl_->closing.load(std::memory_order_acquire))
    return shut_down_error();
  if (!impl_->keeps_registrations())
    return {};
  // Only the key is read: the manager drops the stored pod's references.
  impl_->enqueue(detail::command::kind::unreg,
                 make_registration(p.metadata.ns, p.metadata.name,
                                   p.metadata.uid));
  return {};
}

namespace {

/// `done`, then sync(): the awaited forms of register / unregister.
result<void> and_wait(object_manager& mgr, result<void> done) {
  if (!done)
    return done;
  if (!mgr.sync())
    return shut_down_error();
  return {};
}

} // namespace

result<void> object_manager::register_pod_and_wait(const pod& p) {
  return and_wait(*this, register_pod(p));
}

result<void> object_manager::unregister_pod_and_wait(const pod& p) {
  return and_wait(*this, unregister_pod(p));
}

bool object_manager::sync() {
  auto ok = impl_->ask_manager<caf::ok_atom>(sync_atom::value);
  return ok && *ok;
}

result<api_object> object_manager::get(const std::string& ns,
                                       const std::string& name) {
  auto& d = *impl_;
  if (d.closing.load(std::memory_order_acquire))
    return shut_down_error();
  switch (d.opts.strategy) {
    case strategy::get:
      return d.live_read(ns, name);
    case strategy::cache:
      if (auto x = d.cache_read(ns, name))
        return std::move(*x);
      break;
    case strategy::watch:
      if (auto x = d.snapshot_read(ns, name))
        return std::move(*x);
      break;
  }
  return d.actor_read(ns, name);
}

result<object_status> object_manager::status(const std::string& ns,
                                             const std::string& name) const {
  auto res = impl_->ask_manager<object_status>(inspect_atom::value, ns, name);
  if (!res)
    return shut_down_error();
  return std::move(*res);
}

manager_stats object_manager::stats() const {
  auto& c = impl_->rs->counters;
  auto load = [](const auto& x) { return x.load(std::memory_order_relaxed); };
  manager_stats st;
  st.registered_pods = load(c.registered_pods);
  st.referenced_objects = load(c.referenced_objects);
  st.live_reflectors = load(c.live_reflectors);
  st.open_watches = load(c.open_watches);
  st.reflectors_started = load(c.reflectors_started);
  st.reflectors_stopped = load(c.reflectors_stopped);
  st.gets = load(c.gets);
  st.lists = load(c.lists);
  st.watches = load(c.watches);
  auto reads = impl_->rs->domain.sum_counters();
  st.snapshot_reads = reads.snapshot_reads;
  st.waited_reads = reads.waited_reads;
  st.unapplied_commands = impl_->inbox->unapplied();
  st.backlog_waits = impl_->inbox->waits();
  st.caller_yields = impl_->inbox->yields();
  auto ch = impl_->changes->stats();
  st.subscriptions = ch.subscriptions;
  st.notifications = ch.delivered;
  st.notifications_skipped = ch.skipped;
  st.callback_errors = ch.callback_errors;
  return st;
}

result<subscription_id> object_manager::subscribe(const std::string& ns,
                                                  const std::string& name,
                                                  change_callback cb) {
  if (impl_->closing.load(std::memory_order_acquire))
    return shut_down_error();
  auto res = impl_->ask_manager<subscription_id>(subscribe_atom::value, ns,
                                                 name, std::move(cb));
  if (!res)
    return shut_down_error();
  return std::move(*res);
}

void object_manager::unsubscribe(subscription_id id) {
  auto sub = impl_->changes->find(id);
  if (!sub)
    return;
  // Closed here, on the caller's thread, so that no call starts after we
  // return; the manager detaches it from the object's feed and forgets it.
  sub->close();
  if (!impl_->closing.load(std::memory_order_acquire))
    caf::anon_send(impl_->mgr, unsub_atom::value, id);
}

bool object_manager::wait_quiescent(std::chrono::milliseconds timeout) {
  auto& c = impl_->rs->counters;
  auto load = [](const auto& x) { return x.load(std::memory_order_acquire); };
  // A reflector runs its init (counting itself and starting its list) some
  // time after the manager spawned it, and dies some time after the manager
  // stopped it: busy alone misses both.
  auto settled = [&] {
    if (impl_->inbox->unapplied() != 0)
      return false;
    // Cache entries are not reflectors: only fetches in flight count.
    if (impl_->opts.strategy != strategy::watch)
      return load(c.busy) == 0;
    auto started = load(c.reflectors_started);
    if (load(c.reflectors_spawned) != started)
      return false;
    auto alive = static_cast<std::int64_t>(started
                                           - load(c.reflectors_stopped));
    return alive == load(c.referenced_objects) && load(c.busy) == 0;
  };
  if (impl_->deterministic)
    return detail::drive_until(
      impl_->sys,
      [&] {
        return !impl_->closing.load(std::memory_order_acquire) && settled();
      },
      timeout);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    if (impl_->closing.load(std::memory_order_acquire))
      return false;
    if (settled())
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    // Waiting on a condition of other threads' progress, not on a race.
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, decltype(pause){std::chrono::milliseconds(5)});
  }
}

void object_manager::shutdown() {
  impl_->shutdown();
}

caf::actor object_manager::actor() const {
  return caf::actor_cast<caf::actor>(impl_->mgr);
}

} // namespace podref
