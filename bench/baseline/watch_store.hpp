// watch_store: the kubelet's objectCache (watch_based_manager.go). An RW
// mutex guards the items map; every item has its own mutex, a per-uid
// reference map and a reflector. Get polls the item's hasSynced every 10 ms
// for up to 1 s, as upstream's wait.PollImmediate.
#pragma once

#include <chrono>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "bench/baseline/rw_mutex.hpp"
#include "bench/baseline/object_store.hpp"

namespace caf {
class actor;
class actor_system;
} // namespace caf

namespace podref::bench::baseline {

class watch_store : public object_store {
public:
  /// Reflectors list and watch Secrets on `server` (an actor speaking the
  /// object source protocol) in `sys`.
  watch_store(caf::actor_system& sys, const caf::actor& server);

  /// Stops every reflector.
  ~watch_store() override;

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
  struct item;
  struct shared;

  std::shared_ptr<item> new_reflector_locked(const std::string& ns,
                                             const std::string& name);

  std::unique_ptr<shared> shared_;
  mutable rw_mutex lock_;
  std::unordered_map<object_key, std::shared_ptr<item>, object_key_hash>
    items_;
};

} // namespace podref::bench::baseline
