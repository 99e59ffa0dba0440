// cache_store: the store one baseline reflector fills, as upstream's
// cacheStore: client-go's thread-safe store (a map behind an RW mutex)
// plus a mutex-guarded "unsynced" flag that Replace clears.
#pragma once

#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/baseline/rw_mutex.hpp"
#include "podref/messages/api_object.hpp"
#include "podref/messages/source_protocol.hpp"

namespace podref::bench::baseline {

class cache_store {
public:
  /// True once a list has been stored since the last unset_initialized().
  bool has_synced() const;

  /// Marks the store unsynced (before a reflector (re)starts).
  void unset_initialized();

  /// Replaces the content with a list's items and marks the store synced.
  void replace(const std::vector<api_object>& items);

  /// Applies one watch event (add, update or delete).
  void apply(const watch_event& ev);

  /// The object stored under "namespace/name".
  std::optional<api_object> get_by_key(const std::string& key) const;

private:
  static std::string key_of(const api_object& x);

  mutable rw_mutex items_lock_;
  std::unordered_map<std::string, api_object> items_;
  mutable std::mutex lock_;
  bool unsynced_ = true;
};

} // namespace podref::bench::baseline
