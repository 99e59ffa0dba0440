// ttl_store: the kubelet's TTL objectStore (cache_based_manager.go). One
// mutex guards the items; each object's data has its own mutex, held across
// the fetch from the API server so that concurrent readers of a stale
// object make one request between them.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "bench/baseline/object_store.hpp"

namespace podref {
class api_server;
} // namespace podref

namespace podref::bench::baseline {

class ttl_store : public object_store {
public:
  /// Fetches from `server`; an object is fresh for `ttl` after a fetch.
  ttl_store(api_server& server, std::chrono::nanoseconds ttl);

  ~ttl_store() override;

  /// Upstream's refCount ignores the uid.
  void add_reference(const std::string& ns, const std::string& name,
                     const std::string& uid) override;
  void delete_reference(const std::string& ns, const std::string& name,
                        const std::string& uid) override;
  result<api_object> get(const std::string& ns,
                         const std::string& name) override;
  std::int64_t live_reflectors() const override;
  std::int64_t referenced_objects() const override;
  bool wait_quiescent(std::chrono::milliseconds timeout) override;
  std::string strategy() const override;

private:
  struct object_data;

  struct item {
    int ref_count = 0;
    std::shared_ptr<object_data> data;
  };

  api_server& server_;
  std::chrono::nanoseconds ttl_;
  mutable std::mutex lock_;
  std::unordered_map<object_key, item, object_key_hash> items_;
};

} // namespace podref::bench::baseline
