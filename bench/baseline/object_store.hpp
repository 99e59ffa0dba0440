// object_store: the kubelet's manager.Store interface (AddReference,
// DeleteReference, Get) that the baseline's cacheBasedManager drives; the
// watch store (objectCache) and the TTL store (objectStore) implement it.
//
// The baseline is a port of the kubelet's design, kept only to compare
// podref against: it locks exactly where upstream locks.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "podref/messages/api_object.hpp"
#include "podref/messages/errors.hpp"

namespace podref::bench::baseline {

/// The (namespace, name) of an object: upstream's objectKey.
struct object_key {
  std::string ns;
  std::string name;

  friend bool operator==(const object_key& x, const object_key& y) {
    return x.ns == y.ns && x.name == y.name;
  }
};

/// Hashes both fields, as Go hashes a struct map key.
struct object_key_hash {
  std::size_t operator()(const object_key& k) const noexcept {
    auto h = std::hash<std::string>{}(k.ns);
    return h ^ (std::hash<std::string>{}(k.name) + 0x9e3779b97f4a7c15ULL
                + (h << 6) + (h >> 2));
  }
};

class object_store {
public:
  virtual ~object_store() = default;

  /// Counts one reference of `uid` to the object.
  virtual void add_reference(const std::string& ns, const std::string& name,
                             const std::string& uid)
    = 0;

  /// Drops one reference of `uid`; the last one forgets the object.
  virtual void delete_reference(const std::string& ns,
                                const std::string& name,
                                const std::string& uid)
    = 0;

  /// The object, or upstream's error.
  virtual result<api_object> get(const std::string& ns,
                                 const std::string& name)
    = 0;

  /// Reflectors alive now (0 for stores without reflectors).
  virtual std::int64_t live_reflectors() const = 0;

  /// Objects with at least one reference.
  virtual std::int64_t referenced_objects() const = 0;

  /// Waits until every reflector is synced or gone; false on timeout.
  virtual bool wait_quiescent(std::chrono::milliseconds timeout) = 0;

  /// "watch" or "cache".
  virtual std::string strategy() const = 0;
};

} // namespace podref::bench::baseline
