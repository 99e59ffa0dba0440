// The baseline reflector's store; every callback takes the store's locks.
#include "bench/baseline/cache_store.hpp"

namespace podref::bench::baseline {

bool cache_store::has_synced() const {
  std::lock_guard<std::mutex> guard{lock_};
  return !unsynced_;
}

void cache_store::unset_initialized() {
  std::lock_guard<std::mutex> guard{lock_};
  unsynced_ = true;
}

std::string cache_store::key_of(const api_object& x) {
  return x.meta().ns + "/" + x.meta().name;
}

void cache_store::replace(const std::vector<api_object>& items) {
  std::lock_guard<std::mutex> guard{lock_};
  {
    std::unique_lock<rw_mutex> write{items_lock_};
    items_.clear();
    for (const auto& x : items)
      items_.emplace(key_of(x), x);
  }
  unsynced_ = false;
}

void cache_store::apply(const watch_event& ev) {
  if (ev.type == watch_event_type::bookmark || !ev.object)
    return;
  auto key = key_of(ev.object);
  std::unique_lock<rw_mutex> write{items_lock_};
  if (ev.type == watch_event_type::deleted)
    items_.erase(key);
  else
    items_[key] = ev.object;
}

std::optional<api_object>
cache_store::get_by_key(const std::string& key) const {
  std::shared_lock<rw_mutex> read{items_lock_};
  auto i = items_.find(key);
  if (i == items_.end())
    return std::nullopt;
  return i->second;
}

} // namespace podref::bench::baseline
