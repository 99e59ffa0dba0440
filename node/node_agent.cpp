// The node agent (node_agent.hpp has the contract).
#include "podref/node/node_agent.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "podref/messages/node_ttl.hpp"
#include "podref/messages/pod_references.hpp"
#include "podref/node/work_pool.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/detail/request_rules.hpp"
#include "podref/wire/http_client.hpp"
#include "podref/wire/pod_decode.hpp"

namespace podref {

namespace {

/// `s` as a JSON string (quotes, backslashes and control characters
/// escaped): names and uids come from the server.
std::string json_quoted(const std::string& s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

/// A referenced object as the agent's observer keys it.
struct object_key {
  resource res;
  std::string ns;
  std::string name;

  std::string text() const {
    return std::string{res == resource::secrets ? "s/" : "c/"} + ns + "/"
           + name;
  }
};

std::vector<object_key> objects_of(const pod& p) {
  std::vector<object_key> out;
  for (auto& n : secret_names(p))
    out.push_back({resource::secrets, p.metadata.ns, std::move(n)});
  for (auto& n : config_map_names(p))
    out.push_back({resource::config_maps, p.metadata.ns, std::move(n)});
  return out;
}

} // namespace

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
  /// Observer mode: per referenced object, the pods' count, the
  /// subscription (0: to be made after the next sync) and whether a first
  /// version arrived; pods whose check waits for their objects.
  struct watched {
    object_key key;
    std::size_t refs = 0;
    subscription_id sub = 0;
    bool seen = false;
  };
  std::unordered_map<std::string, watched> objects;
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
    std::deque<std::function<void()>> todo;
    {
      std::lock_guard<std::mutex> guard{mtx};
      if (stopping) {
        scheduled = false;
        idle.notify_all();
        return;
      }
      running = true;
      batch.swap(queue);
      todo.swap(tasks);
    }
    for (auto& f : todo)
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

  void add_refs(const pod& p) {
    for (auto& k : objects_of(p)) {
      auto& w = objects[k.text()];
      if (w.refs++ == 0)
        w.key = std::move(k);
    }
  }

  void drop_refs(const pod& p) {
    for (const auto& k : objects_of(p)) {
      auto i = objects.find(k.text());
      if (i == objects.end() || --i->second.refs > 0)
        continue;
      auto sub = i->second.sub;
      objects.erase(i);
      if (sub != 0)
        (k.res == resource::secrets ? secrets->unsubscribe(sub)
                                    : config_maps->unsubscribe(sub));
    }
  }

  /// Subscribes to every referenced object that has no subscription (after
  /// a sync: the registrations are applied).
  void subscribe_new() {
    for (auto& [text, w] : objects) {
      if (w.sub != 0)
        continue;
      auto key = text;
      std::weak_ptr<impl> weak = shared_from_this();
      auto res = w.key.res;
      // Filled once subscribe returns: an end names the subscription it
      // ends, so that a late one does not touch its successor.
      auto id = std::make_shared<std::atomic<subscription_id>>(0);
      auto cb = [weak, key, res, id](const object_change& c) {
        auto self = weak.lock();
        if (!self)
          return;
        if (c.kind != change_kind::ended)
          self->options.observer(res, c);
        auto kind = c.kind;
        auto sub = id->load();
        self->push_task(
          [self, key, kind, sub] { self->object_event(key, kind, sub); });
      };
      auto sub = res == resource::secrets
                   ? secrets->subscribe(w.key.ns, w.key.name, std::move(cb))
                   : config_maps->subscribe(w.key.ns, w.key.name,
                                            std::move(cb));
      if (sub) {
        w.sub = *sub;
        id->store(*sub);
      }
    }
  }

  /// A subscription delivered: a first version lets waiting checks go; the
  /// end of the current subscription (the manager dropped the object within
  /// a batch that also added it again) is subscribed again.
  void object_event(const std::string& key, change_kind kind,
                    subscription_id sub) {
    auto i = objects.find(key);
    if (i == objects.end())
      return;
    if (kind == change_kind::ended) {
      if (sub == 0 || sub != i->second.sub)
        return;
      i->second.sub = 0;
      secrets->sync();
      config_maps->sync();
      subscribe_new();
      return;
    }
    if (i->second.seen)
      return;
    i->second.seen = true;
    run_waiting_checks();
  }

  bool objects_seen(const pod& p) const {
    for (const auto& k : objects_of(p)) {
      auto i = objects.find(k.text());
      if (i == objects.end() || !i->second.seen)
        return false;
    }
    return true;
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
      drop_refs(*p);
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
      add_refs(*p);
      if (old != registered.end())
        drop_refs(*old->second.pod.pod);
    }
    {
      std::lock_guard<std::mutex> guard{mtx};
      registered[p->metadata.uid].pod = std::move(ev.pod);
    }
    count_problems();
    emit(node_agent_event::kind::registered, p->metadata.ns, p->metadata.name);
    return p->metadata.uid;
  }

  /// A batch of pod events: every registration first, then one sync of
  /// each manager, then the checks (the kubelet reads the objects when it
  /// starts the containers; the reads then see the registrations).
  void apply_batch(std::deque<wire::pod_event>& batch) {
    std::vector<std::string> to_check;
    for (auto& ev : batch)
      if (auto uid = apply(ev))
        to_check.push_back(std::move(*uid));
    if (to_check.empty())
      return;
    secrets->sync();
    config_maps->sync();
    if (observing()) {
      subscribe_new();
      for (auto& uid : to_check)
        waiting_checks.insert(std::move(uid));
      run_waiting_checks();
      count_problems(); // waiting_checks too
      return;
    }
    for (const auto& uid : to_check)
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

  /// Sends one request; `done` runs on the strand with the reply.
  void call(std::string method, const std::string& path, std::string body,
            std::function<void(wire::http_response&)> done) {
    std::weak_ptr<impl> weak = shared_from_this();
    wire::http_client::handlers h;
    h.on_done = [weak, done = std::move(done)](wire::http_response r) {
      if (auto self = weak.lock())
        self->push_task([done, r = std::move(r)]() mutable { done(r); });
    };
    if (method == "GET")
      source.client()->get(path, std::move(h));
    else
      source.client()->send(std::move(method), path, std::move(body),
                            std::move(h));
  }

  /// Sends the grace-0 DELETE of `p` (once).
  void confirm_delete(const pod& p) {
    if (!confirmed.insert(p.metadata.uid).second)
      return;
    {
      std::lock_guard<std::mutex> guard{mtx};
      ++stats.deletes_sent;
    }
    auto path = "/api/v1/namespaces/" + wire::detail::escape(p.metadata.ns)
                + "/pods/" + wire::detail::escape(p.metadata.name);
    std::string body = R"({"kind":"DeleteOptions","apiVersion":"v1",)"
                       R"("gracePeriodSeconds":0,"preconditions":{"uid":)"
                       + json_quoted(p.metadata.uid) + "}}";
    auto ns = p.metadata.ns;
    auto name = p.metadata.name;
    call("DELETE", path, std::move(body),
         [this, ns, name](wire::http_response& r) {
           std::vector<std::string> problems;
           // 404: the pod is gone already; 409: another pod of that name.
           if (r.status != 200 && r.status != 202 && r.status != 404) {
             problems.push_back(
               wire::detail::error_of(r, "delete pod " + ns + "/" + name)
                 .message);
             std::lock_guard<std::mutex> guard{mtx};
             ++stats.deletes_failed;
           }
           emit(node_agent_event::kind::deletion_confirmed, ns, name,
                std::move(problems));
         });
  }

  /// POST /api/v1/nodes: the Node, as a kubelet registers it (201, or 409
  /// when it exists already).
  void register_node() {
    const auto& n = options.node_name;
    std::string body = R"({"kind":"Node","apiVersion":"v1","metadata":{"name":)"
                       + json_quoted(n) + R"(,"labels":{"kubernetes.io/hostname":)"
                       + json_quoted(n) + "}}}";
    call("POST", "/api/v1/nodes", std::move(body),
         [this, n](wire::http_response& r) {
           std::vector<std::string> problems;
           if (r.status != 201 && r.status != 200 && r.status != 409)
             problems.push_back(
               wire::detail::error_of(r, "create node " + n).message);
           emit(node_agent_event::kind::node_registered, "", n,
                std::move(problems));
         });
  }

  /// GET /api/v1/nodes/N, and follows its TTL annotation (Cache).
  void read_node_ttl() {
    call("GET", "/api/v1/nodes/" + wire::detail::escape(options.node_name), {},
         [this](wire::http_response& r) {
           std::optional<std::chrono::seconds> now;
           if (r.status == 200)
             if (auto n = wire::decode_node(r.body)) {
               ttl->set_node(*n);
               now = ttl_from_node(n->get());
             }
           if (r.status != 200 || !now)
             ttl->set_node(nullptr); // no node or annotation: the default
           if (!ttl_known || now != last_ttl) {
             ttl_known = true;
             last_ttl = now;
             emit(node_agent_event::kind::node_ttl, "", options.node_name,
                  {now ? std::to_string(now->count()) + "s"
                       : std::string{"none"}});
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
  x.secrets = std::make_unique<secret_manager>(rt, c, mopts);
  x.config_maps = std::make_unique<configmap_manager>(rt, c, mopts);
  if (options.register_node)
    x.push_task([self = impl_.get()] { self->register_node(); });
  if (mopts.strategy == strategy::cache)
    x.push_task([self = impl_.get()] { self->read_node_ttl(); });
  x.schedule_recheck();
  auto sopts = options.source;
  sopts.node_name = options.node_name;
  std::weak_ptr<impl> weak = impl_;
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
