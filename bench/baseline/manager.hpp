// manager: the kubelet's cacheBasedManager. One mutex guards the registered
// pods and is held across every AddReference / DeleteReference of a
// registration, so registrations are serialised, as upstream.
//
// Deviation: upstream keeps the *v1.Pod and recomputes the previous pod's
// names on unregister; this keeps the names computed at registration (the
// same cost as keeping a pointer), which favours the baseline slightly.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/baseline/object_store.hpp"
#include "bench/subject.hpp"

namespace podref::bench::baseline {

class manager : public subject {
public:
  /// A Secret manager over `store`.
  explicit manager(std::unique_ptr<object_store> store);

  ~manager() override;

  std::string impl() const override;
  std::string strategy() const override;
  void register_pod(const pod& p) override;
  void unregister_pod(const pod& p) override;
  result<api_object> get(const std::string& ns,
                         const std::string& name) override;

  /// Registrations apply before register_pod returns: always true.
  bool sync() override;

  bool wait_quiescent(std::chrono::milliseconds timeout) override;
  subject_stats stats() const override;

private:
  /// Upstream's objectKey of a pod: namespace, name, uid.
  struct pod_key {
    std::string ns;
    std::string name;
    std::string uid;

    friend bool operator==(const pod_key& x, const pod_key& y) {
      return x.ns == y.ns && x.name == y.name && x.uid == y.uid;
    }
  };

  struct pod_key_hash {
    std::size_t operator()(const pod_key& k) const noexcept;
  };

  using names_ptr = std::shared_ptr<const std::vector<std::string>>;

  std::mutex lock_;
  std::unordered_map<pod_key, names_ptr, pod_key_hash> registered_pods_;
  std::unique_ptr<object_store> store_;
};

} // namespace podref::bench::baseline
