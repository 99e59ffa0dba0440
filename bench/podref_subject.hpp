// podref_subject: podref's object_manager (Watch strategy) as a subject.
#pragma once

#include <chrono>
#include <memory>

#include "bench/subject.hpp"

namespace podref {
class runtime;
class api_server;
class object_manager;
} // namespace podref

namespace podref::bench {

class podref_subject : public subject {
public:
  /// A Secret manager over `server` (manager_options::coalesce and
  /// max_unapplied_releases given).
  podref_subject(runtime& rt, api_server& server,
                 std::chrono::nanoseconds coalesce,
                 std::size_t max_unapplied_releases);

  ~podref_subject() override;

  std::string impl() const override;
  std::string strategy() const override;
  void register_pod(const pod& p) override;
  void unregister_pod(const pod& p) override;
  result<api_object> get(const std::string& ns,
                         const std::string& name) override;
  bool sync() override;
  bool wait_quiescent(std::chrono::milliseconds timeout) override;
  subject_stats stats() const override;

  /// The wrapped manager (micro-benchmarks use its actor).
  object_manager& manager() noexcept {
    return *mgr_;
  }

private:
  std::unique_ptr<object_manager> mgr_;
};

} // namespace podref::bench
