// objectCache.AddReference / DeleteReference / Get and objectCacheItem's
// stop / restart, with upstream's locking.
#include "bench/baseline/watch_store.hpp"

#include <atomic>
#include <mutex>
#include <thread>
#include <utility>

#include "bench/baseline/cache_store.hpp"
#include "bench/baseline/reflector.hpp"

namespace podref::bench::baseline {

using clock_type = std::chrono::steady_clock;

/// What every item needs to (re)start its reflector.
struct watch_store::shared {
  caf::actor_system& sys;
  caf::actor server;
  live_counter live = std::make_shared<std::atomic<std::int64_t>>(0);
};

/// upstream's objectCacheItem.
struct watch_store::item {
  std::mutex lock;
  std::unordered_map<std::string, int> ref_map;
  std::shared_ptr<cache_store> store = std::make_shared<cache_store>();
  reflector_handle reflector;
  clock_type::time_point last_access;
  bool stopped = false;
  bool immutable = false;
  std::string ns;
  std::string name;

  /// Stops the reflector; true iff it was running.
  bool stop() {
    std::lock_guard<std::mutex> guard{lock};
    return stop_locked();
  }

  bool stop_locked() {
    if (stopped)
      return false;
    stopped = true;
    stop_reflector(reflector);
    return true;
  }

  void set_last_access_time(clock_type::time_point t) {
    std::lock_guard<std::mutex> guard{lock};
    last_access = t;
  }

  void set_immutable() {
    std::lock_guard<std::mutex> guard{lock};
    immutable = true;
  }

  void restart_reflector_if_needed(watch_store::shared& sh) {
    std::lock_guard<std::mutex> guard{lock};
    if (immutable || !stopped)
      return;
    stopped = false;
    store->unset_initialized();
    reflector = start_reflector(sh.sys, sh.server, ns, name, store, sh.live);
  }
};

watch_store::watch_store(caf::actor_system& sys, const caf::actor& server)
  : shared_(new shared{sys, server}) {
  // nop
}

watch_store::~watch_store() {
  std::unique_lock<rw_mutex> guard{lock_};
  for (auto& kvp : items_)
    kvp.second->stop();
}

std::shared_ptr<watch_store::item>
watch_store::new_reflector_locked(const std::string& ns,
                                  const std::string& name) {
  auto res = std::make_shared<item>();
  res->ns = ns;
  res->name = name;
  res->reflector = start_reflector(shared_->sys, shared_->server, ns, name,
                                   res->store, shared_->live);
  return res;
}

void watch_store::add_reference(const std::string& ns,
                                const std::string& name,
                                const std::string& uid) {
  std::unique_lock<rw_mutex> guard{lock_};
  auto& slot = items_[object_key{ns, name}];
  if (!slot)
    slot = new_reflector_locked(ns, name);
  // upstream increments refMap under the store-wide write lock only.
  slot->ref_map[uid]++;
}

void watch_store::delete_reference(const std::string& ns,
                                   const std::string& name,
                                   const std::string& uid) {
  std::unique_lock<rw_mutex> guard{lock_};
  auto i = items_.find(object_key{ns, name});
  if (i == items_.end())
    return;
  auto& refs = i->second->ref_map;
  if (--refs[uid] == 0)
    refs.erase(uid);
  if (refs.empty()) {
    i->second->stop();
    items_.erase(i);
  }
}

result<api_object> watch_store::get(const std::string& ns,
                                    const std::string& name) {
  std::shared_ptr<item> it;
  {
    std::shared_lock<rw_mutex> guard{lock_};
    auto i = items_.find(object_key{ns, name});
    if (i != items_.end())
      it = i->second;
  }
  if (!it)
    return not_registered_error(ns, name);
  it->set_last_access_time(clock_type::now());
  it->restart_reflector_if_needed(*shared_);
  // wait.PollImmediate(10ms, 1s, hasSynced)
  auto deadline = clock_type::now() + std::chrono::seconds(1);
  while (!it->store->has_synced()) {
    if (clock_type::now() >= deadline)
      return sync_timeout_error(resource::secrets);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto obj = it->store->get_by_key(ns + "/" + name);
  if (!obj)
    return watch_not_found_error(resource::secrets, name);
  if (obj->is_immutable()) {
    it->set_immutable();
    it->stop();
  }
  return std::move(*obj);
}

std::int64_t watch_store::live_reflectors() const {
  return shared_->live->load();
}

std::int64_t watch_store::referenced_objects() const {
  std::shared_lock<rw_mutex> guard{lock_};
  return static_cast<std::int64_t>(items_.size());
}

bool watch_store::wait_quiescent(std::chrono::milliseconds timeout) {
  auto deadline = clock_type::now() + timeout;
  for (;;) {
    std::int64_t running = 0;
    bool synced = true;
    {
      std::shared_lock<rw_mutex> guard{lock_};
      for (auto& kvp : items_) {
        std::lock_guard<std::mutex> item_guard{kvp.second->lock};
        if (!kvp.second->stopped) {
          ++running;
          synced = synced && kvp.second->store->has_synced();
        }
      }
    }
    if (synced && running == live_reflectors())
      return true;
    if (clock_type::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::string watch_store::strategy() const {
  return "watch";
}

} // namespace podref::bench::baseline
