// The node agent (node_agent.hpp has the contract).
#include "podref/node/node_agent.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "podref/messages/node_ttl.hpp"
#include "podref/node/detail/agent_requests.hpp"
#include "podref/node/detail/subscription_book.hpp"
#include "podref/node/work_pool.hpp"
#include "podref/runtime/runtime.hpp"

namespace podref {

struct node_agent::impl : std::enable_shared_from_this<impl> {
  runtime& rt;
  cluster& source;
  node_agent_options options;
  node_agent_listener listener;
  std::unique_ptr<work_pool> own_pool;
  work_pool* pool = nullptr;
  std::shared_ptr<node_ttl_source> ttl = std::make_shared<node_ttl_source>();
  std::unique_ptr<secret_manager> secrets;
  std::unique_ptr<configmap_manager> config_maps;
  std::unique_ptr<wire::pod_source> pods;
  std::unique_ptr<detail::agent_requests> requests;

  // Guarded by mtx: what other threads hand over, the stats, the strand's
  // state (scheduled: a drain is posted or running), and the registered
  // pods (written by the strand under mtx, read by it without).
  mutable std::mutex mtx;
  std::condition_variable idle;
  std::deque<wire::pod_event> queue;
  std::deque<std::function<void()>> tasks;
  bool scheduled = false;
  bool running = false;
  bool stopping = false;
  node_agent_stats stats;

  /// Registered pods by uid, with their last check's problems.
  struct entry {
    wire::wire_pod pod;
    std::vector<std::string> problems;
  };
  std::unordered_map<std::string, entry> registered;

  // The strand's own (one drain at a time).
  std::optional<std::chrono::seconds> last_ttl;
  bool ttl_known = false;
  /// The uids a grace-0 DELETE was sent for (once per pod).
  std::unordered_set<std::string> confirmed;
  /// Observer mode: the subscriptions, and the pods whose first check
  /// waits for their objects.
  std::unique_ptr<detail::subscription_book> book;
  std::unordered_set<std::string> waiting_checks;

  impl(runtime& r, cluster& c, const node_agent_options& o,
       node_agent_listener l)
    : rt(r), source(c), options(o), listener(std::move(l)) {
    // nop
  }

  // -- the strand -------------------------------------------------------------

  /// Posts a drain unless one is posted or running.
  void schedule_locked() {
    if (scheduled || stopping)
      return;
    scheduled = true;
    pool->post([self = shared_from_this()] { self->drain(); });
  }

  /// Queues `f` for the strand.
  void push_task(std::function<void()> f) {
    std::lock_guard<std::mutex> guard{mtx};
    if (stopping)
      return;
    tasks.push_back(std::move(f));
    schedule_locked();
  }

  void drain() {
    std::deque<wire::pod_event> batch;
    std::deque<std::function<void()>> taken_tasks;
    {
      std::lock_guard<std::mutex> guard{mtx};
      if (stopping) {
        scheduled = false;
        idle.notify_all();
        return;
      }
      running = true;
      batch.swap(queue);
      taken_tasks.swap(tasks);
    }
    for (auto& f : taken_tasks)
      f();
    apply_batch(batch);
    std::lock_guard<std::mutex> guard{mtx};
    running = false;
    scheduled = false;
    if (!queue.empty() || !tasks.empty())
      schedule_locked();
    idle.notify_all();
  }

  void emit(node_agent_event::kind what, const std::string& ns,
            const std::string& name, std::vector<std::string> problems = {}) {
    if (!listener)
      return;
    node_agent_event ev;
    ev.what = what;
    ev.ns = ns;
    ev.name = name;
    ev.problems = std::move(problems);
    listener(ev);
  }

  void count_problems() {
    std::uint64_t n = 0;
    for (const auto& [uid, e] : registered)
      n += e.problems.empty() ? 0 : 1;
    std::lock_guard<std::mutex> guard{mtx};
    stats.pods_with_problems = n;
    stats.registered_pods = registered.size();
    stats.waiting_checks = waiting_checks.size();
    stats.last_change = std::chrono::system_clock::now();
  }

  void check(entry& e) {
    std::uint64_t reads = 0;
    std::uint64_t failed = 0;
    e.problems = check_pod_objects(*e.pod.pod, *secrets, *config_maps, reads,
                                   failed);
    {
      std::lock_guard<std::mutex> guard{mtx};
      stats.reads += reads;
      stats.reads_failed += failed;
    }
    const auto& m = e.pod.pod->metadata;
    emit(node_agent_event::kind::checked, m.ns, m.name, e.problems);
  }

  // -- observer mode ------------------------------------------------------------

  bool observing() const {
    return static_cast<bool>(options.observer);
  }

  /// Subscribes what the book lacks; deliveries go to the observer at
  /// once and to the strand as tasks.
  void subscribe_new() {
    book->subscribe_new(delivery());
  }

  detail::subscription_book::delivery delivery() {
    std::weak_ptr<impl> weak = shared_from_this();
    return [weak](resource res, const std::string& key,
                  const object_change& c, subscription_id sub) {
      auto self = weak.lock();
      if (!self)
        return;
      if (c.kind != change_kind::ended)
        self->options.observer(res, c);
      self->push_task([self, key, kind = c.kind, sub] {
        if (self->book->on_delivery(key, kind, sub, self->delivery()))
          self->run_waiting_checks();
      });
    };
  }

  bool objects_seen(const pod& p) const {
    return book->all_seen(p);
  }

  void run_waiting_checks() {
    bool changed = false;
    for (auto i = waiting_checks.begin(); i != waiting_checks.end();) {
      auto e = registered.find(*i);
      if (e == registered.end()) {
        i = waiting_checks.erase(i);
        continue;
      }
      if (!objects_seen(*e->second.pod.pod)) {
        ++i;
        continue;
      }
      check(e->second);
      changed = true;
      i = waiting_checks.erase(i);
    }
    if (changed)
      count_problems();
  }

  // -- pod events -----------------------------------------------------------------

  void unregister(const std::string& uid) {
    auto i = registered.find(uid);
    if (i == registered.end())
      return;
    auto p = i->second.pod.pod;
    secrets->unregister_pod(*p);
    config_maps->unregister_pod(*p);
    if (observing())
      book->drop_refs(*p);
    {
      std::lock_guard<std::mutex> guard{mtx};
      registered.erase(i);
    }
    waiting_checks.erase(uid);
    count_problems();
    emit(node_agent_event::kind::unregistered, p->metadata.ns,
         p->metadata.name);
  }

  /// One event; returns the uid of a pod (re)registered, to be checked.
  std::optional<std::string> apply(wire::pod_event& ev) {
    using k = wire::pod_event_kind;
    switch (ev.kind) {
      case k::synced: {
        std::lock_guard<std::mutex> guard{mtx};
        stats.synced = true;
      }
        emit(node_agent_event::kind::synced, "", "");
        return std::nullopt;
      case k::failed: {
        std::lock_guard<std::mutex> guard{mtx};
        stats.synced = false;
        ++stats.source_failures;
      }
        emit(node_agent_event::kind::source_failed, "", "", {ev.message});
        return std::nullopt;
      case k::rejected: {
        std::lock_guard<std::mutex> guard{mtx};
        ++stats.rejected_pods;
      }
        emit(node_agent_event::kind::rejected, ev.rejected.ns, ev.rejected.name,
             {ev.rejected.path + ": " + ev.rejected.problem});
        return std::nullopt;
      case k::deleted:
        unregister(ev.pod.pod->metadata.uid);
        return std::nullopt;
      case k::added:
      case k::updated:
        break;
    }
    auto p = ev.pod.pod;
    if (ev.pod.is_terminal() || ev.pod.is_deleting()) {
      unregister(p->metadata.uid);
      if (ev.pod.is_deleting() && options.confirm_deletes)
        confirm_delete(*p);
      return std::nullopt;
    }
    auto s = secrets->register_pod(*p);
    auto c = s ? config_maps->register_pod(*p) : result<void>{};
    if (!s || !c) {
      // The decoder checks what register_pod checks; a refusal here leaves
      // nothing registered half way.
      if (s)
        secrets->unregister_pod(*p);
      {
        std::lock_guard<std::mutex> guard{mtx};
        ++stats.rejected_pods;
      }
      emit(node_agent_event::kind::rejected, p->metadata.ns, p->metadata.name,
           {(!s ? s.error() : c.error()).message});
      return std::nullopt;
    }
    auto old = registered.find(p->metadata.uid);
    if (observing()) {
      book->add_refs(*p);
      if (old != registered.end())
        book->drop_refs(*old->second.pod.pod);
    }
    {
      std::lock_guard<std::mutex> guard{mtx};
      registered[p->metadata.uid].pod = std::move(ev.pod);
    }
    count_problems();
    emit(node_agent_event::kind::registered, p->metadata.ns, p->metadata.name);
    return p->metadata.uid;
  }

  /// Whether `ev` ends a pod (deleted, terminal, being deleted): its uid.
  static std::optional<std::string> ended_uid(const wire::pod_event& ev) {
    using k = wire::pod_event_kind;
    if (!ev.pod.pod)
      return std::nullopt;
    if (ev.kind == k::deleted
        || ((ev.kind == k::added || ev.kind == k::updated)
            && (ev.pod.is_terminal() || ev.pod.is_deleting())))
      return ev.pod.pod->metadata.uid;
    return std::nullopt;
  }

  /// A batch of pod events: the registrations, then one sync of each
  /// manager, then the checks (the kubelet reads the objects when it starts
  /// the containers; the reads then see the registrations). A pod that
  /// ends later in the batch is checked before it goes, as it would have
  /// been started.
  void apply_batch(std::deque<wire::pod_event>& batch) {
    std::vector<std::string> to_check;
    for (auto& ev : batch) {
      if (auto gone = ended_uid(ev);
          gone
          && std::find(to_check.begin(), to_check.end(), *gone)
               != to_check.end()) {
        check_registered(to_check);
        to_check.clear();
      }
      if (auto uid = apply(ev))
        to_check.push_back(std::move(*uid));
    }
    check_registered(to_check);
  }

  /// One sync of each manager, then the checks of `uids` (observer mode:
  /// once their objects were delivered).
  void check_registered(std::vector<std::string>& uids) {
    if (uids.empty())
      return;
    secrets->sync();
    config_maps->sync();
    if (observing()) {
      subscribe_new();
      for (auto& uid : uids)
        waiting_checks.insert(std::move(uid));
      run_waiting_checks();
      count_problems(); // waiting_checks too
      return;
    }
    for (const auto& uid : uids)
      if (auto e = registered.find(uid); e != registered.end())
        check(e->second);
    count_problems();
  }

  void recheck() {
    if (options.managers.strategy == strategy::cache)
      read_node_ttl();
    for (auto& [uid, e] : registered)
      if (!observing() || objects_seen(*e.pod.pod))
        check(e);
    count_problems();
    schedule_recheck();
  }

  void schedule_recheck() {
    std::weak_ptr<impl> weak = shared_from_this();
    pool->post_at(std::chrono::steady_clock::now() + options.recheck, [weak] {
      if (auto self = weak.lock())
        self->push_task([self] { self->recheck(); });
    });
  }

  // -- the agent's own requests (asynchronous) ----------------------------------

  /// Sends the grace-0 DELETE of `p` (once).
  void confirm_delete(const pod& p) {
    if (!confirmed.insert(p.metadata.uid).second)
      return;
    {
      std::lock_guard<std::mutex> guard{mtx};
      ++stats.deletes_sent;
    }
    requests->confirm_delete(
      p, [this, ns = p.metadata.ns,
          name = p.metadata.name](std::vector<std::string> problems) {
        if (!problems.empty()) {
          std::lock_guard<std::mutex> guard{mtx};
          ++stats.deletes_failed;
        }
        emit(node_agent_event::kind::deletion_confirmed, ns, name,
             std::move(problems));
      });
  }

  void register_node() {
    requests->register_node(options.node_name,
                            [this](std::vector<std::string> problems) {
                              emit(node_agent_event::kind::node_registered, "",
                                   options.node_name, std::move(problems));
                            });
  }

  /// Reads the Node and follows its TTL annotation (Cache).
  void read_node_ttl() {
    requests->read_node(options.node_name, [this](node_ptr n) {
      std::optional<std::chrono::seconds> now;
      if (n)
        now = ttl_from_node(n.get());
      // No node, or no annotation: the default TTL.
      ttl->set_node(now ? n : nullptr);
      if (!ttl_known || now != last_ttl) {
        ttl_known = true;
        last_ttl = now;
        emit(node_agent_event::kind::node_ttl, "", options.node_name,
             {now ? std::to_string(now->count()) + "s" : std::string{"none"}});
      }
    });
  }
};

node_agent::node_agent(runtime& rt, cluster& c,
                       const node_agent_options& options,
                       node_agent_listener listener)
  : impl_(std::make_shared<impl>(rt, c, options, std::move(listener))) {
  auto& x = *impl_;
  if (options.pool == nullptr)
    x.own_pool = std::make_unique<work_pool>(1, "podref-node");
  x.pool = options.pool != nullptr ? options.pool : x.own_pool.get();
  auto mopts = options.managers;
  mopts.node_ttl = x.ttl;
  if (x.observing()) {
    auto* pool = x.pool;
    mopts.notify_executor = [pool](std::function<void()> task) {
      pool->post(std::move(task));
    };
  }
  std::weak_ptr<impl> weak = impl_;
  x.requests = std::make_unique<detail::agent_requests>(
    c.client(), [weak](std::function<void()> reply) {
      if (auto self = weak.lock())
        self->push_task(std::move(reply));
    });
  x.secrets = std::make_unique<secret_manager>(rt, c, mopts);
  x.config_maps = std::make_unique<configmap_manager>(rt, c, mopts);
  if (x.observing())
    x.book = std::make_unique<detail::subscription_book>(*x.secrets,
                                                         *x.config_maps);
  if (options.register_node)
    x.push_task([self = impl_.get()] { self->register_node(); });
  if (mopts.strategy == strategy::cache)
    x.push_task([self = impl_.get()] { self->read_node_ttl(); });
  x.schedule_recheck();
  auto sopts = options.source;
  sopts.node_name = options.node_name;
  x.pods = wire::pod_source::start(
    rt.system(), c.client(), sopts, [weak](wire::pod_event ev) {
      auto self = weak.lock();
      if (!self)
        return;
      std::lock_guard<std::mutex> guard{self->mtx};
      if (self->stopping)
        return;
      self->queue.push_back(std::move(ev));
      self->schedule_locked();
    });
}

node_agent::~node_agent() {
  impl_->pods.reset(); // no more events after this
  {
    std::unique_lock<std::mutex> guard{impl_->mtx};
    impl_->stopping = true;
    impl_->idle.wait(guard, [this] { return !impl_->running; });
  }
  impl_->book.reset();
  impl_->config_maps.reset();
  impl_->secrets.reset();
  impl_->own_pool.reset();
}

node_agent_stats node_agent::stats() const {
  node_agent_stats out;
  {
    std::lock_guard<std::mutex> guard{impl_->mtx};
    out = impl_->stats;
    out.busy = impl_->scheduled;
  }
  if (impl_->pods) {
    out.pod_lists = impl_->pods->counters().lists;
    out.pod_watches = impl_->pods->counters().watches;
  }
  for (const manager_stats& m :
       {impl_->secrets->manager().stats(), impl_->config_maps->manager().stats()}) {
    out.referenced_objects += m.referenced_objects;
    out.open_watches += m.open_watches;
  }
  return out;
}

std::vector<pod_ptr> node_agent::registered_pods() const {
  std::vector<pod_ptr> out;
  std::lock_guard<std::mutex> guard{impl_->mtx};
  out.reserve(impl_->registered.size());
  for (const auto& [uid, e] : impl_->registered)
    out.push_back(e.pod.pod);
  return out;
}

secret_manager& node_agent::secrets() noexcept {
  return *impl_->secrets;
}

configmap_manager& node_agent::config_maps() noexcept {
  return *impl_->config_maps;
}

} // namespace podref
