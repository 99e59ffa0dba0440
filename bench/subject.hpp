// subject: what a load workload drives. podref's facade and the kubelet-
// design baseline both implement it, so every workload is written once and
// runs against both in the same process, over the same in-memory API server.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "podref/messages/api_object.hpp"
#include "podref/messages/errors.hpp"
#include "podref/messages/pod.hpp"

namespace podref::bench {

/// Counters every subject reports.
struct subject_stats {
  /// Reflectors that exist right now (started and not yet gone).
  std::int64_t live_reflectors = 0;
  /// Objects referenced by at least one registered pod.
  std::int64_t referenced_objects = 0;
  /// podref: calls that yielded their core to the manager (see
  /// manager_options::yield_above); 0 for the baseline.
  std::uint64_t caller_yields = 0;
};

/// A Secret manager under load: the operations of podref's object_manager.
class subject {
public:
  virtual ~subject() = default;

  /// "podref" or "baseline".
  virtual std::string impl() const = 0;

  /// "watch" or "cache".
  virtual std::string strategy() const = 0;

  /// Registers `p` (may return before the registration is applied).
  virtual void register_pod(const pod& p) = 0;

  /// Unregisters `p` (may return before it is applied).
  virtual void unregister_pod(const pod& p) = 0;

  /// The secret, or the manager's error.
  virtual result<api_object> get(const std::string& ns,
                                 const std::string& name)
    = 0;

  /// Waits until every registration made before the call is applied.
  virtual bool sync() = 0;

  /// Waits until everything is applied and every reflector is synced or
  /// gone; false on timeout.
  virtual bool wait_quiescent(std::chrono::milliseconds timeout) = 0;

  virtual subject_stats stats() const = 0;
};

} // namespace podref::bench
