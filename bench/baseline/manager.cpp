// cacheBasedManager.RegisterPod / UnregisterPod / GetObject, line by line.
#include "bench/baseline/manager.hpp"

#include <utility>

#include "podref/messages/pod_references.hpp"

namespace podref::bench::baseline {

std::size_t
manager::pod_key_hash::operator()(const pod_key& k) const noexcept {
  std::hash<std::string> h;
  auto x = h(k.ns);
  x ^= h(k.name) + 0x9e3779b97f4a7c15ULL + (x << 6) + (x >> 2);
  x ^= h(k.uid) + 0x9e3779b97f4a7c15ULL + (x << 6) + (x >> 2);
  return x;
}

manager::manager(std::unique_ptr<object_store> store)
  : store_(std::move(store)) {
  // nop
}

manager::~manager() = default;

std::string manager::impl() const {
  return "baseline";
}

std::string manager::strategy() const {
  return store_->strategy();
}

void manager::register_pod(const pod& p) {
  // Upstream computes the names before taking the lock.
  auto names = std::make_shared<const std::vector<std::string>>(
    secret_names(p));
  const auto& meta = p.metadata;
  std::lock_guard<std::mutex> guard{lock_};
  auto& slot = registered_pods_[pod_key{meta.ns, meta.name, meta.uid}];
  auto prev = std::exchange(slot, names);
  // First add the new names, then delete the old ones (less downtime).
  for (const auto& name : *names)
    store_->add_reference(meta.ns, name, meta.uid);
  if (prev)
    for (const auto& name : *prev)
      store_->delete_reference(meta.ns, name, meta.uid);
}

void manager::unregister_pod(const pod& p) {
  const auto& meta = p.metadata;
  std::lock_guard<std::mutex> guard{lock_};
  auto i = registered_pods_.find(pod_key{meta.ns, meta.name, meta.uid});
  if (i == registered_pods_.end())
    return;
  auto prev = std::move(i->second);
  registered_pods_.erase(i);
  for (const auto& name : *prev)
    store_->delete_reference(meta.ns, name, meta.uid);
}

result<api_object> manager::get(const std::string& ns,
                                const std::string& name) {
  return store_->get(ns, name);
}

bool manager::sync() {
  return true;
}

bool manager::wait_quiescent(std::chrono::milliseconds timeout) {
  return store_->wait_quiescent(timeout);
}

subject_stats manager::stats() const {
  subject_stats res;
  res.live_reflectors = store_->live_reflectors();
  res.referenced_objects = store_->referenced_objects();
  return res;
}

} // namespace podref::bench::baseline
