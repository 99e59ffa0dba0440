// The node agent (node_agent.hpp has the contract).
#include "podref/node/node_agent.hpp"

#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include "podref/messages/node_ttl.hpp"
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

bool is_optional(const std::optional<bool>& x) {
  return x.value_or(false);
}

/// Reads of one pod check; each object is read once per check.
class object_reader {
public:
  object_reader(const pod& p, secret_manager& secrets,
                configmap_manager& config_maps, std::uint64_t& reads,
                std::uint64_t& failed)
    : ns_(p.metadata.ns),
      secrets_(secrets),
      config_maps_(config_maps),
      reads_(reads),
      failed_(failed) {
    // nop
  }

  /// The secret, or the manager's error text.
  const result<secret_ptr>& secret(const std::string& name) {
    auto i = secret_cache_.find(name);
    if (i == secret_cache_.end()) {
      ++reads_;
      i = secret_cache_.emplace(name, secrets_.get_secret(ns_, name)).first;
      if (!i->second)
        ++failed_;
    }
    return i->second;
  }

  const result<config_map_ptr>& config_map(const std::string& name) {
    auto i = cm_cache_.find(name);
    if (i == cm_cache_.end()) {
      ++reads_;
      i = cm_cache_.emplace(name, config_maps_.get_configmap(ns_, name)).first;
      if (!i->second)
        ++failed_;
    }
    return i->second;
  }

private:
  const std::string& ns_;
  secret_manager& secrets_;
  configmap_manager& config_maps_;
  std::uint64_t& reads_;
  std::uint64_t& failed_;
  std::map<std::string, result<secret_ptr>> secret_cache_;
  std::map<std::string, result<config_map_ptr>> cm_cache_;
};

bool has_key(const secret_ptr& s, const std::string& key) {
  return s->data.count(key) != 0 || s->string_data.count(key) != 0;
}

bool has_key(const config_map_ptr& c, const std::string& key) {
  return c->data.count(key) != 0 || c->binary_data.count(key) != 0;
}

/// A container's envFrom and env, as the kubelet builds its environment
/// (CreateContainerConfigError texts).
void check_container(const container& c, const std::string& ns,
                     object_reader& read, std::vector<std::string>& out) {
  auto where = "container \"" + c.name + "\": ";
  for (const auto& from : c.env_from) {
    if (from.config_map_ref && !from.config_map_ref->name.empty()) {
      const auto& got = read.config_map(from.config_map_ref->name);
      if (!got && !is_optional(from.config_map_ref->optional))
        out.push_back(where + got.error().message);
    }
    if (from.secret_ref && !from.secret_ref->name.empty()) {
      const auto& got = read.secret(from.secret_ref->name);
      if (!got && !is_optional(from.secret_ref->optional))
        out.push_back(where + got.error().message);
    }
  }
  for (const auto& env : c.env) {
    if (!env.value_from)
      continue;
    if (const auto& ref = env.value_from->config_map_key_ref) {
      const auto& got = read.config_map(ref->name);
      if (!got) {
        if (!is_optional(ref->optional))
          out.push_back(where + got.error().message);
      } else if (!has_key(*got, ref->key) && !is_optional(ref->optional)) {
        out.push_back(where + "couldn't find key " + ref->key
                      + " in ConfigMap " + ns + "/" + ref->name);
      }
    }
    if (const auto& ref = env.value_from->secret_key_ref) {
      const auto& got = read.secret(ref->name);
      if (!got) {
        if (!is_optional(ref->optional))
          out.push_back(where + got.error().message);
      } else if (!has_key(*got, ref->key) && !is_optional(ref->optional)) {
        out.push_back(where + "couldn't find key " + ref->key + " in Secret "
                      + ns + "/" + ref->name);
      }
    }
  }
}

std::string mount_failed(const volume& v, const std::string& why) {
  return "MountVolume.SetUp failed for volume \"" + v.name + "\" : " + why;
}

/// A secret-like volume source (secret volume, projected secret): a
/// missing object is fine only when optional (and then its items are not
/// checked), a missing item key likewise.
template <class Ptr, class Items>
void check_volume_object(const volume& v, const result<Ptr>& got,
                         const Items& items, bool optional,
                         const char* missing_key,
                         std::vector<std::string>& out) {
  if (!got) {
    if (!(optional && got.error().code == errc::not_found))
      out.push_back(mount_failed(v, got.error().message));
    return;
  }
  for (const auto& item : items)
    if (!has_key(*got, item.key) && !optional)
      out.push_back(mount_failed(v, missing_key + item.key));
}

void check_volume(const volume& v, object_reader& read,
                  std::vector<std::string>& out) {
  if (v.secret && !v.secret->secret_name.empty())
    check_volume_object(v, read.secret(v.secret->secret_name), v.secret->items,
                        is_optional(v.secret->optional),
                        "references non-existent secret key: ", out);
  if (v.config_map && !v.config_map->name.empty())
    check_volume_object(v, read.config_map(v.config_map->name),
                        v.config_map->items,
                        is_optional(v.config_map->optional),
                        "configmap references non-existent config key: ", out);
  if (v.projected)
    for (const auto& src : v.projected->sources) {
      if (src.secret && !src.secret->name.empty())
        check_volume_object(v, read.secret(src.secret->name),
                            src.secret->items, is_optional(src.secret->optional),
                            "references non-existent secret key: ", out);
      if (src.config_map && !src.config_map->name.empty())
        check_volume_object(v, read.config_map(src.config_map->name),
                            src.config_map->items,
                            is_optional(src.config_map->optional),
                            "configmap references non-existent config key: ",
                            out);
    }
  // The drivers' own secrets: their plugins fail the mount when absent.
  auto plain = [&](const std::string& name) {
    if (name.empty())
      return;
    const auto& got = read.secret(name);
    if (!got)
      out.push_back(mount_failed(v, got.error().message));
  };
  if (v.azure_file)
    plain(v.azure_file->secret_name);
  if (v.csi && v.csi->node_publish_secret_ref)
    plain(v.csi->node_publish_secret_ref->name);
  for (const auto* src : {&v.cephfs, &v.cinder, &v.flex_volume, &v.rbd,
                          &v.scale_io, &v.iscsi, &v.storageos})
    if (*src && (*src)->secret_ref)
      plain((*src)->secret_ref->name);
}

} // namespace

std::vector<std::string> check_pod_objects(const pod& p,
                                           secret_manager& secrets,
                                           configmap_manager& config_maps,
                                           std::uint64_t& reads,
                                           std::uint64_t& failed) {
  std::vector<std::string> out;
  object_reader read{p, secrets, config_maps, reads, failed};
  const auto& ns = p.metadata.ns;
  // The kubelet only warns about a pull secret it cannot read.
  for (const auto& ref : p.spec.image_pull_secrets) {
    if (ref.name.empty())
      continue;
    const auto& got = read.secret(ref.name);
    if (!got)
      out.push_back("Unable to retrieve pull secret " + ns + "/" + ref.name
                    + " for " + ns + "/" + p.metadata.name + " due to "
                    + got.error().message
                    + ".  The image pull may not succeed.");
  }
  for (const auto& v : p.spec.volumes)
    check_volume(v, read, out);
  for (const auto* list : {&p.spec.init_containers, &p.spec.containers,
                           &p.spec.ephemeral_containers})
    for (const auto& c : *list)
      check_container(c, ns, read, out);
  return out;
}

// -- the agent ----------------------------------------------------------------

struct node_agent::impl {
  runtime& rt;
  cluster& source;
  node_agent_options options;
  node_agent_listener listener;
  std::shared_ptr<node_ttl_source> ttl = std::make_shared<node_ttl_source>();
  std::unique_ptr<secret_manager> secrets;
  std::unique_ptr<configmap_manager> config_maps;
  std::unique_ptr<wire::pod_source> pods;

  mutable std::mutex mtx;
  std::condition_variable cv;
  std::deque<wire::pod_event> queue;
  bool stopping = false;
  node_agent_stats stats;
  std::thread worker;

  /// Registered pods by uid, with their last check's problems.
  struct entry {
    wire::wire_pod pod;
    std::vector<std::string> problems;
  };
  std::unordered_map<std::string, entry> registered;
  std::optional<std::chrono::seconds> last_ttl;
  bool ttl_known = false;
  /// The uids a grace-0 DELETE was sent for (once per pod).
  std::unordered_map<std::string, bool> confirmed;

  impl(runtime& r, cluster& c, const node_agent_options& o,
       node_agent_listener l)
    : rt(r), source(c), options(o), listener(std::move(l)) {
    // nop
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

  void unregister(const std::string& uid) {
    auto i = registered.find(uid);
    if (i == registered.end())
      return;
    const auto& p = *i->second.pod.pod;
    secrets->unregister_pod(p);
    config_maps->unregister_pod(p);
    auto ns = p.metadata.ns;
    auto name = p.metadata.name;
    registered.erase(i);
    count_problems();
    emit(node_agent_event::kind::unregistered, ns, name);
  }

  void apply(wire::pod_event& ev) {
    using k = wire::pod_event_kind;
    switch (ev.kind) {
      case k::synced: {
        std::lock_guard<std::mutex> guard{mtx};
        stats.synced = true;
      }
        emit(node_agent_event::kind::synced, "", "");
        return;
      case k::failed: {
        std::lock_guard<std::mutex> guard{mtx};
        stats.synced = false;
        ++stats.source_failures;
      }
        emit(node_agent_event::kind::source_failed, "", "", {ev.message});
        return;
      case k::rejected: {
        std::lock_guard<std::mutex> guard{mtx};
        ++stats.rejected_pods;
      }
        emit(node_agent_event::kind::rejected, ev.rejected.ns, ev.rejected.name,
             {ev.rejected.path + ": " + ev.rejected.problem});
        return;
      case k::deleted:
        unregister(ev.pod.pod->metadata.uid);
        return;
      case k::added:
      case k::updated:
        break;
    }
    const auto& p = *ev.pod.pod;
    if (ev.pod.is_terminal() || ev.pod.is_deleting()) {
      unregister(p.metadata.uid);
      if (ev.pod.is_deleting() && options.confirm_deletes)
        confirm_delete(p);
      return;
    }
    auto s = secrets->register_pod(p);
    auto c = s ? config_maps->register_pod(p) : result<void>{};
    if (!s || !c) {
      // The decoder checks what register_pod checks; a refusal here leaves
      // nothing registered half way.
      if (s)
        secrets->unregister_pod(p);
      {
        std::lock_guard<std::mutex> guard{mtx};
        ++stats.rejected_pods;
      }
      emit(node_agent_event::kind::rejected, p.metadata.ns, p.metadata.name,
           {(!s ? s.error() : c.error()).message});
      return;
    }
    auto& e = registered[p.metadata.uid];
    e.pod = std::move(ev.pod);
    count_problems();
    emit(node_agent_event::kind::registered, p.metadata.ns, p.metadata.name);
    // As the kubelet reads them when it starts the containers (after the
    // registration is applied, so that the reads see it).
    secrets->sync();
    config_maps->sync();
    check(e);
    count_problems();
  }

  /// Sends the grace-0 DELETE of `p` (once); the reply is reported from
  /// the I/O thread's handler through the queue-free listener path.
  void confirm_delete(const pod& p) {
    if (!confirmed.emplace(p.metadata.uid, true).second)
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
    auto r = call("DELETE", path, std::move(body));
    std::vector<std::string> problems;
    // 404: the pod is gone already; 409: another pod of that name now.
    if (r.status != 200 && r.status != 202 && r.status != 404) {
      problems.push_back(
        wire::detail::error_of(r, "delete pod " + p.metadata.ns + "/"
                                    + p.metadata.name)
          .message);
      std::lock_guard<std::mutex> guard{mtx};
      ++stats.deletes_failed;
    }
    emit(node_agent_event::kind::deletion_confirmed, p.metadata.ns,
         p.metadata.name, std::move(problems));
  }

  /// One request on the cluster's client, waited for (bounded).
  wire::http_response call(std::string method, const std::string& path,
                           std::string body = {}) {
    auto done = std::make_shared<std::promise<wire::http_response>>();
    auto reply = done->get_future();
    wire::http_client::handlers h;
    h.on_done = [done](wire::http_response r) { done->set_value(std::move(r)); };
    if (method == "GET")
      source.client()->get(path, std::move(h));
    else
      source.client()->send(std::move(method), path, std::move(body),
                            std::move(h));
    if (reply.wait_for(std::chrono::seconds(90)) != std::future_status::ready) {
      wire::http_response none;
      none.error = "no reply";
      return none;
    }
    return reply.get();
  }

  /// POST /api/v1/nodes: the Node, as a kubelet registers it (201, or 409
  /// when it exists already).
  void register_node() {
    const auto& n = options.node_name;
    std::string body = R"({"kind":"Node","apiVersion":"v1","metadata":{"name":)"
                       + json_quoted(n) + R"(,"labels":{"kubernetes.io/hostname":)"
                       + json_quoted(n) + "}}}";
    auto r = call("POST", "/api/v1/nodes", std::move(body));
    std::vector<std::string> problems;
    if (r.status != 201 && r.status != 200 && r.status != 409)
      problems.push_back(wire::detail::error_of(r, "create node " + n).message);
    emit(node_agent_event::kind::node_registered, "", n, std::move(problems));
  }

  /// GET /api/v1/nodes/N, and follows its TTL annotation (Cache).
  void read_node_ttl() {
    auto r = call("GET", "/api/v1/nodes/"
                           + wire::detail::escape(options.node_name));
    std::optional<std::chrono::seconds> now;
    if (r.status == 200)
      if (auto n = wire::decode_node(r.body)) {
        ttl->set_node(*n);
        now = ttl_from_node(n->get());
      }
    if (r.status != 200 || !now)
      ttl->set_node(nullptr); // no node, or no annotation: the default TTL
    if (!ttl_known || now != last_ttl) {
      ttl_known = true;
      last_ttl = now;
      emit(node_agent_event::kind::node_ttl, "", options.node_name,
           {now ? std::to_string(now->count()) + "s" : std::string{"none"}});
    }
  }

  void run() {
    auto next_recheck = std::chrono::steady_clock::now() + options.recheck;
    for (;;) {
      std::deque<wire::pod_event> batch;
      {
        std::unique_lock<std::mutex> guard{mtx};
        cv.wait_until(guard, next_recheck,
                      [this] { return stopping || !queue.empty(); });
        if (stopping)
          return;
        batch.swap(queue);
      }
      for (auto& ev : batch)
        apply(ev);
      if (std::chrono::steady_clock::now() >= next_recheck) {
        if (options.managers.strategy == strategy::cache)
          read_node_ttl();
        for (auto& [uid, e] : registered)
          check(e);
        count_problems();
        next_recheck = std::chrono::steady_clock::now() + options.recheck;
      }
    }
  }
};

node_agent::node_agent(runtime& rt, cluster& c,
                       const node_agent_options& options,
                       node_agent_listener listener)
  : impl_(std::make_unique<impl>(rt, c, options, std::move(listener))) {
  auto& x = *impl_;
  auto mopts = options.managers;
  mopts.node_ttl = x.ttl;
  x.secrets = std::make_unique<secret_manager>(rt, c, mopts);
  x.config_maps = std::make_unique<configmap_manager>(rt, c, mopts);
  if (options.register_node)
    x.register_node();
  if (mopts.strategy == strategy::cache)
    x.read_node_ttl();
  auto sopts = options.source;
  sopts.node_name = options.node_name;
  auto* self = impl_.get();
  x.worker = std::thread{[self] { self->run(); }};
  x.pods = wire::pod_source::start(
    rt.system(), c.client(), sopts, [self](wire::pod_event ev) {
      std::lock_guard<std::mutex> guard{self->mtx};
      self->queue.push_back(std::move(ev));
      self->cv.notify_one();
    });
}

node_agent::~node_agent() {
  impl_->pods.reset(); // no more events after this
  {
    std::lock_guard<std::mutex> guard{impl_->mtx};
    impl_->stopping = true;
  }
  impl_->cv.notify_one();
  impl_->worker.join();
  impl_->config_maps.reset();
  impl_->secrets.reset();
}

node_agent_stats node_agent::stats() const {
  node_agent_stats out;
  {
    std::lock_guard<std::mutex> guard{impl_->mtx};
    out = impl_->stats;
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

} // namespace podref
